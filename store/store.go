package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/parleyhq/parley/blocks"
)

// Sentinel errors. Implementations return them (possibly wrapped) so callers
// can test with errors.Is.
var (
	// ErrNotFound: no row with that id (or it belongs to no one visible).
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: an id is already taken, or a write lost a race it must not win.
	ErrConflict = errors.New("store: conflict")
	// ErrInvalid: the caller passed a value the store cannot hold
	// (missing owner, empty id where one is required, unknown role).
	ErrInvalid = errors.New("store: invalid value")
)

// Store is everything the Engine persists. Each concern is its own interface
// so an implementation can be tested and documented per concern.
// Implementations must be safe for concurrent use by many goroutines and,
// for shared databases, by many processes, and must keep any string a
// model can produce (see Text in the package documentation).
type Store interface {
	Threads
	Messages
	Proposals
	Audit
}

// Thread is one conversation, owned by one user.
type Thread struct {
	ID                string
	OwnerID           string
	Title             string
	CreatedAt         time.Time
	UpdatedAt         time.Time  // set by CreateThread, AppendTurn and RenameThread
	ArchivedAt        *time.Time // soft delete; nil while active
	CancelRequestedAt *time.Time // a cancel was requested for the running turn
	// LastSeq is the Seq of the thread's last message, 0 when it has none.
	// It is maintained by AppendTurn and ignored by CreateThread; a running
	// turn sees it grow when a newer message supersedes it.
	LastSeq int
	// Summary is the running summary of the thread's oldest messages, up to
	// and including Seq SummaryThrough (0: no summary). It is written by
	// SetSummary only, ignored by CreateThread, and cleared by an AppendTurn
	// that replaces a message it covers.
	Summary        string
	SummaryThrough int
}

// ListOptions filters and pages ListThreads.
type ListOptions struct {
	Limit           int       // <= 0: 50
	Before          time.Time // only threads updated strictly before; zero: no bound
	IncludeArchived bool
}

// Threads persists conversations.
type Threads interface {
	// CreateThread inserts t. An empty t.ID is filled with a new UUID; zero
	// CreatedAt/UpdatedAt are set to now. OwnerID is required (ErrInvalid);
	// an existing ID returns ErrConflict.
	CreateThread(ctx context.Context, t *Thread) error
	// GetThread returns the thread, archived or not, or ErrNotFound.
	GetThread(ctx context.Context, id string) (Thread, error)
	// ListThreads returns ownerID's threads, most recently updated first,
	// skipping archived threads unless opts.IncludeArchived.
	ListThreads(ctx context.Context, ownerID string, opts ListOptions) ([]Thread, error)
	// RenameThread sets the title. ErrNotFound if there is no such thread.
	RenameThread(ctx context.Context, id, title string) error
	// ArchiveThread marks the thread archived at at (idempotent: an archived
	// thread keeps its first archive time). ErrNotFound if there is none.
	ArchiveThread(ctx context.Context, id string, at time.Time) error
	// DeleteThread removes the thread and its messages. ErrNotFound if there is none.
	DeleteThread(ctx context.Context, id string) error
	// RequestCancel records that the running turn of the thread should stop;
	// a later request replaces the time. ErrNotFound if there is no such thread.
	RequestCancel(ctx context.Context, id string, at time.Time) error
	// ClearCancel removes a cancel request; clearing when none is pending
	// succeeds. ErrNotFound if there is no such thread.
	ClearCancel(ctx context.Context, id string) error
	// SetSummary replaces the thread's running summary with summary,
	// covering messages up to Seq through, if the thread's SummaryThrough
	// is still prevThrough: a compare-and-set, so of two instances
	// compacting the same thread one wins and the other gets ErrConflict.
	// It does not change UpdatedAt. An empty summary with through 0 clears
	// it. ErrInvalid if through is negative, or through is 0 and summary is
	// not empty; ErrNotFound if there is no such thread.
	SetSummary(ctx context.Context, id, summary string, through, prevThrough int) error
}

// Role of a stored message.
type Role string

// Message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Status of an assistant message.
type Status string

// Message statuses. User messages are always StatusComplete.
const (
	StatusStreaming   Status = "streaming"   // the placeholder of a running turn
	StatusComplete    Status = "complete"    // the turn ended normally
	StatusFailed      Status = "failed"      // the turn ended with an error block
	StatusCancelled   Status = "cancelled"   // stopped by a cancel request or supersession
	StatusInterrupted Status = "interrupted" // its worker died; partial blocks kept
)

// Message is one turn of a thread.
type Message struct {
	ID       string
	ThreadID string
	Seq      int // 1-based position in the thread, assigned by AppendTurn
	Role     Role
	Status   Status
	// Content is the user's text (user messages).
	Content string
	// Blocks are what the user saw, in stored (verbose) form.
	Blocks []blocks.Block
	// ModelMessages are the provider messages of the turn (assistant tool
	// calls, tool results, final text) for exact replay. Opaque to the store.
	ModelMessages json.RawMessage
	InputTokens   int64
	OutputTokens  int64
	// Guard is what the input guard decided about a user message; it is
	// written with the message by AppendTurn and never changes.
	Guard  GuardVerdict
	Source MessageSource // user messages: how it was made; written once by AppendTurn
	// Replaces is, on a user message, the id of the earlier user message it
	// replaces (an edit, or a regenerated answer): see AppendTurn. Written
	// once by AppendTurn.
	Replaces string
	// SupersededAt is set when a later AppendTurn replaced this message or
	// one before it: the message is kept for audit but is no longer part of
	// the conversation. nil on the current branch.
	SupersededAt *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// MessageSource says how a user message was made, so that a client
// reloading a thread can show each message as it came to be. It is a key
// the Engine chooses, never a model.
type MessageSource string

// Message sources. A store holds these and no others.
const (
	SourceTyped       MessageSource = ""             // the user typed it
	SourceDecision    MessageSource = "decision"     // the server's note of a confirm-card decision
	SourceForm        MessageSource = "form"         // answers to an ask_user form, rendered as text
	SourceToolResults MessageSource = "tool_results" // carried client-side tool results (Content may be empty)
)

// Valid reports whether s is one of the message sources.
func (s MessageSource) Valid() bool {
	switch s {
	case SourceTyped, SourceDecision, SourceForm, SourceToolResults:
		return true
	}
	return false
}

// GuardVerdict records the input guard's decision on a user message, as
// plain strings so the store does not depend on the guard package.
type GuardVerdict struct {
	Action     string   // allow, flag, warn, redact, block; "" when not checked
	Severity   string   // none, low, medium, high, critical; "" when not checked
	Categories []string // what was found, sorted; never the matched text
	// ExcludeFromHistory keeps the message, and the reply to it, out of the
	// conversation replayed to the model in later turns (an injection
	// attempt of High severity or more).
	ExcludeFromHistory bool
	// FenceInHistory replays the message in later turns fenced, as the
	// user's words that are not instructions (a Medium injection finding:
	// maybe an attempt, maybe an ordinary request a false alarm flagged).
	FenceInHistory bool
}

// Messages persists the turns of threads.
type Messages interface {
	// AppendTurn atomically appends a user message and the assistant
	// placeholder that will hold the reply, with consecutive Seq values
	// after the thread's last message, and bumps the thread's UpdatedAt.
	// Empty IDs are filled with new UUIDs; zero times are set to now; an
	// empty assistant.ThreadID is taken from user.ThreadID. Both messages are
	// written or neither is. ErrNotFound if the thread does not exist,
	// ErrInvalid if the roles are not user then assistant or the thread ids
	// differ, ErrConflict if a message id is taken (or both share one).
	//
	// user.Source is written with the user message and never changes. A
	// Source other than the four MessageSource constants (see Valid) is
	// ErrInvalid and nothing is written. An assistant message has no
	// source: its Source is stored empty, and set empty in assistant,
	// whatever the caller passes.
	//
	// A non-zero user.Seq makes the append conditional: it succeeds only if
	// the thread's last message has Seq user.Seq-1 (LastSeq == user.Seq-1),
	// else ErrConflict and nothing is written. Callers use it to answer the
	// thread's last turn at most once, across processes. A zero user.Seq
	// appends after whatever is last.
	//
	// A non-empty user.Replaces names a user message of the thread that the
	// new turn replaces. In the same transaction, that message and every
	// later message of the thread not yet superseded get SupersededAt = now
	// (UpdatedAt unchanged), and if the replaced message's Seq is at or
	// before the thread's SummaryThrough the summary is cleared (Summary ""
	// and SummaryThrough 0). The new messages are appended after the
	// thread's last message as usual. ErrNotFound if the replaced message
	// is not in this thread, ErrInvalid if it is not a user message,
	// ErrConflict if it is already superseded (another edit won).
	AppendTurn(ctx context.Context, user, assistant *Message) error
	// UpdateMessage replaces the mutable fields of m (Status, Blocks,
	// ModelMessages, token counts, UpdatedAt) by m.ID; the others, Source,
	// Replaces and SupersededAt included, are left as stored. ErrNotFound
	// if the message does not exist.
	UpdateMessage(ctx context.Context, m *Message) error
	// GetMessage returns one message or ErrNotFound.
	GetMessage(ctx context.Context, id string) (Message, error)
	// ListMessages returns the thread's messages in Seq order, superseded
	// ones included. An unknown thread returns ErrNotFound.
	ListMessages(ctx context.Context, threadID string) ([]Message, error)
	// InterruptStale sets StatusInterrupted, and UpdatedAt to now, on every
	// StatusStreaming message whose UpdatedAt is before updatedBefore: the
	// placeholders of turns whose worker died. Their blocks are kept. It
	// returns how many it changed and is safe to run from many processes.
	InterruptStale(ctx context.Context, updatedBefore time.Time) (int, error)
}

// AuditEvent is one security-relevant fact: a guard finding, a tool call, a
// staff read of another user's thread. Data never holds secrets or raw tool
// arguments.
type AuditEvent struct {
	ID        string
	Kind      string          // dotted, e.g. "guard.input", "tool.call"
	ActorID   string          // the user who acted
	ThreadID  string          // the thread concerned; may be empty
	Data      json.RawMessage // kind-specific JSON object; may be nil
	CreatedAt time.Time
}

// AuditFilter selects audit events. Empty fields match everything.
type AuditFilter struct {
	Kind     string
	ActorID  string
	ThreadID string
	Limit    int // <= 0: 100
}

// Audit persists audit events. Events outlive the threads they mention.
type Audit interface {
	// AppendAudit inserts e. An empty ID is filled with a new UUID and a zero
	// CreatedAt is set to now. Kind and ActorID are required (ErrInvalid); a
	// taken ID returns ErrConflict.
	AppendAudit(ctx context.Context, e *AuditEvent) error
	// ListAudit returns the events matching f, newest first.
	ListAudit(ctx context.Context, f AuditFilter) ([]AuditEvent, error)
}

// ProposalStatus is where a proposal is in its life. Only pending moves:
// to applied or declined by a decision, or to expired.
type ProposalStatus string

// Proposal statuses.
const (
	ProposalPending  ProposalStatus = "pending"  // waiting for the user's decision
	ProposalApplied  ProposalStatus = "applied"  // the user approved; the tool was run once
	ProposalDeclined ProposalStatus = "declined" // the user declined; nothing ran
	ProposalExpired  ProposalStatus = "expired"  // no decision before ExpiresAt
)

// Proposal is a Mutate or Destructive tool call the model made, held until
// a human approves or declines it. The token is a single-use capability
// bound to the user, the thread, the tool and the arguments' hash.
type Proposal struct {
	Token     string          // random, unguessable; the key. Required.
	UserID    string          // the only user who may decide it. Required.
	ThreadID  string          // the thread it belongs to; must exist. Required.
	MessageID string          // the assistant message that showed the confirm card
	CallID    string          // the model's tool call id
	Tool      string          // the tool to run. Required.
	Args      json.RawMessage // the validated arguments it will run with: a JSON object, stored byte for byte (ArgsHash must still match)
	ArgsHash  string          // hex SHA-256 of Args
	Summary   string          // one line shown on the card and to the model
	Status    ProposalStatus
	CreatedAt time.Time
	ExpiresAt time.Time  // a decision at or after this time is refused. Required.
	DecidedAt *time.Time // when it left pending; nil while pending
}

// Proposals persists tool calls waiting for approval.
type Proposals interface {
	// CreateProposal inserts p as pending: an empty Status is set to
	// pending and any other is ErrInvalid, as is a missing Token, UserID,
	// ThreadID, Tool or ExpiresAt. A zero CreatedAt is set to now.
	// ErrNotFound if the thread does not exist, ErrConflict if the token is
	// taken.
	CreateProposal(ctx context.Context, p *Proposal) error
	// GetProposal returns the proposal with that token, or ErrNotFound.
	GetProposal(ctx context.Context, token string) (Proposal, error)
	// DecideProposal moves the pending proposal to status (applied or
	// declined, else ErrInvalid) with DecidedAt = at, and returns it as
	// decided. It is atomic: of any number of concurrent calls for one
	// token, from any number of processes, exactly one succeeds. A proposal
	// that is no longer pending is ErrConflict; a pending one whose
	// ExpiresAt is not after at is marked expired and is ErrConflict. On
	// ErrConflict the returned Proposal holds the current state. ErrNotFound
	// if there is no such token.
	DecideProposal(ctx context.Context, token string, status ProposalStatus, at time.Time) (Proposal, error)
	// ReopenProposal moves a proposal decided at exactly decidedAt (applied
	// or declined) back to pending with no DecidedAt: the caller decided it
	// but could not carry the decision out (it failed before running
	// anything). ErrConflict if the proposal is pending, expired, or was
	// decided at another time; ErrNotFound if there is no such token.
	ReopenProposal(ctx context.Context, token string, decidedAt time.Time) error
	// ListProposals returns the thread's proposals, oldest first; none for
	// an unknown thread.
	ListProposals(ctx context.Context, threadID string) ([]Proposal, error)
	// ExpireProposals marks expired every pending proposal whose ExpiresAt
	// is not after before, and returns how many it changed.
	ExpireProposals(ctx context.Context, before time.Time) (int, error)
}
