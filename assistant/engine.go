package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Engine runs assistant turns. It is the one concrete type of Parley and owns
// every cross-cutting policy: authorization, tool gating, persistence and
// error sanitizing. Build it once with New; it is safe for concurrent use.
type Engine struct {
	cfg      Config
	conns    connTable    // the model connections, normalized
	guard    *guard.Guard // nil when Config.DisableGuard
	running  runningTurns
	live     liveTurns
	inFlight userTurns
}

// New validates cfg, applies defaults and returns an Engine.
func New(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	e := &Engine{cfg: cfg, conns: cfg.connections(), guard: cfg.Guard}
	if e.guard == nil && !cfg.DisableGuard {
		g, err := guard.New(guard.Config{})
		if err != nil {
			return nil, fmt.Errorf("assistant: default guard: %w", err)
		}
		e.guard = g
	}
	if cfg.DisableGuard {
		e.guard = nil
	}
	return e, nil
}

// Wait blocks until every turn started so far has finished and persisted,
// including turns whose consumer detached and the title calls of new
// threads (Config.GenerateTitles; at most 10 s each), or until ctx ends. Call it on
// shutdown after the HTTP server has stopped taking requests.
func (e *Engine) Wait(ctx context.Context) error { return e.running.wait(ctx) }

// Request is one user message to the assistant, or the user's answer to
// what the previous turn left waiting: a confirm card (Decision), calls of
// client-side tools (ToolResults) or an ask_user form (Form). At most one of
// the three may be set, and each needs ThreadID.
type Request struct {
	ThreadID string // "": start a new thread
	// CreateThread, with ThreadID, starts a thread with that id if it does
	// not exist yet: for clients that name their conversations, such as the
	// AI SDK's useChat. An id another user's thread has is CodeConflict.
	CreateThread bool

	Message     string // the user's text; required unless a continuation is set; empty with Decision
	Page        string // host page key: selects page tools and instructions; never shown to the model
	PageContext string // what the user is looking at; cut to Config.MaxPageContextBytes, treated as untrusted

	// Decision applies or declines a proposal. The token is consumed
	// atomically: the tool runs at most once, with the stored arguments,
	// and the model acknowledges the outcome from a note the server writes.
	Decision *Decision
	// ToolResults are the outputs of the client-side tool calls the
	// thread's last turn ended with; each ID must be one of those calls.
	ToolResults []ToolResult
	// Form answers the ask_user form the thread's last turn ended with.
	Form *FormAnswer
	// Autonomous asks to run Mutate and Destructive tools this turn without
	// approval cards. The Authorizer must allow RunAutonomous, else the
	// turn is refused with CodeForbidden.
	Autonomous bool

	// Replaces edits the conversation: Message replaces the thread's user
	// message with this id. That message and every later one are kept,
	// marked superseded, and no longer replayed to the model; the new turn
	// continues from the message before it.
	Replaces string
	// Regenerate asks for a new answer to the thread's last user message:
	// that message is replaced by itself. Message must be empty.
	Regenerate bool

	// Entities are objects of the host application the message is about
	// (at most MaxEntities). Each reaches the prompt only if the Authorizer
	// allows ReadEntity for it; Config.ResolveEntity loads it.
	Entities []EntityRef

	// Model picks the model: "connection/model", "connection/" (that
	// connection, with the user's preference if it is on it, else its
	// default), or a model's name (on the default connection if it offers
	// it, else the first that does). "": the user's stored preference
	// (Engine.SetModelPreference), else the default connection's default.
	// A model the connection does not offer is answered by its default
	// model, not refused; the first meta block names the connection and
	// model that answer.
	Model string
	// Settings are completion settings for this turn's model calls; only
	// those the connection allows reach the provider, clamped (see
	// Settings). Unset ones take the connection's Defaults.
	Settings Settings
}

// Decision is the user's answer to a confirm card.
type Decision struct {
	Token string // the confirm block's ID
	Apply bool   // true: run the tool; false: decline
}

// ToolResult is the output of one client-side tool call.
type ToolResult struct {
	ID     string          // the tool_call block's ID
	Output json.RawMessage // any JSON value, given to the model as the tool's result
}

// FormAnswer holds the answers to an ask_user form.
type FormAnswer struct {
	ID     string                     // the form block's ID
	Values map[string]json.RawMessage // question id -> answer (string, number, boolean or list of strings)
}

// Stream runs one turn and returns its output as a single-use sequence of
// blocks. A successful turn starts with a Meta block carrying the thread and
// message ids and ends with a Meta block carrying usage and the finish
// reason. A failure is a terminal Error block carrying a code and a safe
// message; nothing follows it.
//
// The turn runs in its own goroutine, detached from ctx: cancelling ctx or
// breaking out of the loop only detaches the consumer, and the turn still
// completes and persists (unless Config.CancelOnDetach). ctx bounds only the
// work done before the turn starts (authorization, thread lookup, the first
// write).
func (e *Engine) Stream(ctx context.Context, u parley.User, req Request) iter.Seq[blocks.Block] {
	var used atomic.Bool
	return func(yield func(blocks.Block) bool) {
		if used.Swap(true) { // a second range would start a second turn
			yield(e.errorBlock(wrap(CodeInvalidRequest, "stream", errors.New("the sequence returned by Stream is single-use"))))
			return
		}
		t, err := e.begin(ctx, u, req)
		if err != nil {
			yield(e.errorBlock(err))
			return
		}
		t.run(ctx, yield)
	}
}

// errorBlock logs err and turns it into a terminal block showing only its code.
func (e *Engine) errorBlock(err error) blocks.Block {
	switch code := Code(err); {
	case code == CodeInternal && errors.Is(err, context.Canceled):
		// The caller left (a client disconnected) before the turn began.
		e.cfg.Logger.Info("assistant: request ended before the turn began", "err", err)
	case code == CodeInternal:
		e.cfg.Logger.Error("assistant: turn failed", "err", err)
	case code == CodeModelBusy, code == CodeModelTimeout, code == CodeModelUnavailable:
		// The model's endpoint failed: an operator needs to see this.
		e.cfg.Logger.Warn("assistant: model call failed", "code", string(code), "err", err)
	default:
		e.cfg.Logger.Info("assistant: turn refused", "code", string(code), "err", err)
	}
	return errorBlockFor(err)
}

// errorBlockFor is the block err ends a turn with, without logging: for the
// stored copy.
func errorBlockFor(err error) blocks.Block {
	return blocks.Block{Kind: blocks.Error, ErrorCode: string(Code(err)), Content: userMessage(err)}
}

// userMessage is what a user may read about err.
func userMessage(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.UserMessage()
	}
	return SafeMessage(Code(err))
}

// Audit event kinds the Engine writes.
const (
	AuditThreadRead    = "thread.read_by_other" // a user read another user's thread; Data {"owner", "read"?}
	AuditThreadDeleted = "thread.deleted"       // the owner deleted a thread for good
	AuditThreadRenamed = "thread.renamed"       // the owner set a thread's title (never the title itself)
	AuditQuotaSet      = "quota.set"            // staff changed a user's limits; Data {"user", "limits"}
	AuditToolCall      = "tool.call"            // every tool call; Data {"tool", "call_id", "args_sha256", "ok", "code", "duration_ms", "transport", "effect"?, "approval"?}
)

// Reply is a whole turn, for callers that do not stream.
type Reply struct {
	ThreadID      string
	MessageID     string // the assistant message
	UserMessageID string
	Title         string
	Text          string         // all markdown of the answer, concatenated
	Blocks        []blocks.Block // the stored form of the answer
	Usage         providers.Usage
	Finish        string
}

// Collect drains a Stream. It returns the reply and, if the stream ended
// with an error block, an *Error with that block's code; the reply then holds
// whatever streamed before the error.
func Collect(seq iter.Seq[blocks.Block]) (Reply, error) {
	var r Reply
	var text strings.Builder // the whole answer
	var list blocks.List
	for b := range seq {
		switch b.Kind {
		case blocks.Meta:
			if m := b.Meta; m != nil {
				r.ThreadID = firstNonEmpty(m.ThreadID, r.ThreadID)
				r.MessageID = firstNonEmpty(m.MessageID, r.MessageID)
				r.UserMessageID = firstNonEmpty(m.UserMessageID, r.UserMessageID)
				r.Title = firstNonEmpty(m.Title, r.Title)
				r.Finish = firstNonEmpty(m.Finish, r.Finish)
				if m.InputTokens != 0 || m.OutputTokens != 0 {
					r.Usage = providers.Usage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens}
				}
			}
		case blocks.Markdown:
			text.WriteString(b.Content)
		case blocks.Error:
			r.Blocks, r.Text = list.Blocks(), text.String()
			return r, &Error{Code: ErrorCode(b.ErrorCode), Op: "stream", Err: errors.New(b.Content), Message: b.Content}
		}
		list.Add(b)
	}
	r.Blocks = list.Blocks()
	r.Text = text.String()
	return r, nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Threads lists u's own threads, most recently updated first.
func (e *Engine) Threads(ctx context.Context, u parley.User, opts store.ListOptions) ([]store.Thread, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return nil, err
	}
	ts, err := e.cfg.Store.ListThreads(ctx, u.ID, opts)
	if err != nil {
		return nil, wrap(CodeInternal, "list threads", err)
	}
	return ts, nil
}

// ThreadOptions selects what Engine.Thread returns.
type ThreadOptions struct {
	// Superseded includes the messages an edit or a regeneration replaced
	// (their SupersededAt is set), for audit. By default only the current
	// conversation is returned.
	Superseded bool
}

// Thread returns a thread and its messages in stored form, if u may read it.
// A thread u may not read is reported as not found, never as forbidden, so
// its existence does not leak.
func (e *Engine) Thread(ctx context.Context, u parley.User, id string, opts ThreadOptions) (store.Thread, []store.Message, error) {
	t, msgs, err := e.threadMessages(ctx, u, id, ReadThread, opts)
	if err != nil {
		return store.Thread{}, nil, err
	}
	if err := e.auditRead(ctx, u, t, ""); err != nil {
		return store.Thread{}, nil, err
	}
	return t, msgs, nil
}

// OwnThread is Thread for the thread's owner only: another user's thread
// is CodeNotFound, staff included, and nothing is audited. It is the read
// a continuation makes before it writes (what the thread waits on).
func (e *Engine) OwnThread(ctx context.Context, u parley.User, id string, opts ThreadOptions) (store.Thread, []store.Message, error) {
	return e.threadMessages(ctx, u, id, WriteThread, opts)
}

// threadMessages reads a thread u may act on as kind, and its messages.
func (e *Engine) threadMessages(ctx context.Context, u parley.User, id string, kind ActionKind, opts ThreadOptions) (store.Thread, []store.Message, error) {
	t, err := e.thread(ctx, u, id, kind)
	if err != nil {
		return store.Thread{}, nil, err
	}
	msgs, err := e.cfg.Store.ListMessages(ctx, id)
	if err != nil {
		return store.Thread{}, nil, e.storeErr("list messages", err)
	}
	if !opts.Superseded {
		msgs = slices.DeleteFunc(msgs, func(m store.Message) bool { return m.SupersededAt != nil })
	}
	return t, msgs, nil
}

// auditRead records u reading another user's thread t: every read path
// that shows another user's conversation goes through it. what names a
// read other than the transcript itself ("proposals").
func (e *Engine) auditRead(ctx context.Context, u parley.User, t store.Thread, what string) error {
	if t.OwnerID == u.ID {
		return nil
	}
	fields := map[string]string{"owner": t.OwnerID}
	if what != "" {
		fields["read"] = what
	}
	data, _ := json.Marshal(fields)
	ev := store.AuditEvent{Kind: AuditThreadRead, ActorID: u.ID, ThreadID: t.ID, Data: data}
	if err := e.cfg.Store.AppendAudit(ctx, &ev); err != nil {
		return wrap(CodeInternal, "audit thread read", err)
	}
	return nil
}

// Proposals returns the proposals of a thread u may read, oldest first, so
// a client reloading the thread can tell which confirm cards still wait for
// a decision. A pending proposal past its expiry is reported expired.
func (e *Engine) Proposals(ctx context.Context, u parley.User, threadID string) ([]store.Proposal, error) {
	t, err := e.thread(ctx, u, threadID, ReadThread)
	if err != nil {
		return nil, err
	}
	if err := e.auditRead(ctx, u, t, "proposals"); err != nil {
		return nil, err
	}
	ps, err := e.cfg.Store.ListProposals(ctx, threadID)
	if err != nil {
		return nil, wrap(CodeInternal, "list proposals", err)
	}
	now := e.cfg.Now()
	for i := range ps {
		if ps[i].Status == store.ProposalPending && !now.Before(ps[i].ExpiresAt) {
			ps[i].Status = store.ProposalExpired
		}
	}
	if slices.ContainsFunc(ps, func(p store.Proposal) bool { return p.Status == store.ProposalPending }) {
		msgs, err := e.cfg.Store.ListMessages(ctx, threadID)
		if err != nil {
			return nil, e.storeErr("list messages", err)
		}
		e.withdrawSuperseded(ctx, ps, msgs)
	}
	return ps, nil
}

// ExpireProposals marks every pending proposal past its expiry expired and
// returns how many it changed: housekeeping, since a late decision is
// refused either way. Run it now and then, as the example server does.
func (e *Engine) ExpireProposals(ctx context.Context) (int, error) {
	n, err := e.cfg.Store.ExpireProposals(ctx, e.cfg.Now())
	if err != nil {
		return 0, wrap(CodeInternal, "expire proposals", err)
	}
	return n, nil
}

// ArchiveThread archives (soft-deletes) u's thread.
func (e *Engine) ArchiveThread(ctx context.Context, u parley.User, id string) error {
	if _, err := e.thread(ctx, u, id, WriteThread); err != nil {
		return err
	}
	if err := e.cfg.Store.ArchiveThread(ctx, id, e.cfg.Now()); err != nil {
		return e.storeErr("archive thread", err)
	}
	return nil
}

// MaxTitleBytes bounds a thread title set with RenameThread.
const MaxTitleBytes = 200

// RenameThread sets the title of u's thread: one line, control characters
// and runs of white space made single spaces, cut to MaxTitleBytes. An
// empty title is CodeInvalidRequest; only the owner may rename a thread.
// It is audited (AuditThreadRenamed): a title the user set is never
// replaced by an automatic one.
func (e *Engine) RenameThread(ctx context.Context, u parley.User, id, title string) (store.Thread, error) {
	if strings.IndexByte(title, 0) >= 0 {
		return store.Thread{}, invalidRequest("rename thread", "title contains a NUL character")
	}
	title = plainLine(strings.ToValidUTF8(title, "\uFFFD"), MaxTitleBytes)
	if title == "" {
		return store.Thread{}, invalidRequest("rename thread", "title is empty")
	}
	t, err := e.thread(ctx, u, id, WriteThread)
	if err != nil {
		return store.Thread{}, err
	}
	if err := e.cfg.Store.RenameThread(ctx, id, title); err != nil {
		return store.Thread{}, e.storeErr("rename thread", err)
	}
	ev := store.AuditEvent{Kind: AuditThreadRenamed, ActorID: u.ID, ThreadID: id}
	if err := e.cfg.Store.AppendAudit(ctx, &ev); err != nil {
		e.cfg.Logger.Error("assistant: audit a rename", "thread", id, "err", err)
	}
	t.Title = title
	return t, nil
}

// titledByUser reports whether the thread's owner ever set its title.
func (e *Engine) titledByUser(ctx context.Context, threadID string) (bool, error) {
	evs, err := e.cfg.Store.ListAudit(ctx, store.AuditFilter{Kind: AuditThreadRenamed, ThreadID: threadID, Limit: 1})
	if err != nil {
		return false, e.storeErr("read renames", err)
	}
	return len(evs) > 0, nil
}

// DeleteThread removes u's thread and its messages for good, archived or
// not: for retention and for a user's "delete my data". A turn running on
// it is stopped first. Only the owner may delete a thread; the deletion is
// audited (AuditThreadDeleted). Archiving (ArchiveThread) is the reversible
// kind of delete.
func (e *Engine) DeleteThread(ctx context.Context, u parley.User, id string) error {
	t, err := e.thread(ctx, u, id, ReadThread)
	if err != nil {
		return err
	}
	if t.OwnerID != u.ID {
		return wrap(CodeNotFound, "delete thread", errors.New("not the owner"))
	}
	// A turn running here stops and stores what it has before the rows go;
	// on other instances, their next poll finds the thread gone.
	if err := e.live.stopWait(ctx, id, errThreadDeleted); err != nil {
		return wrap(CodeInternal, "delete thread", err)
	}
	if err := e.cfg.Store.DeleteThread(ctx, id); err != nil {
		return e.storeErr("delete thread", err)
	}
	ev := store.AuditEvent{Kind: AuditThreadDeleted, ActorID: u.ID, ThreadID: id}
	if err := e.cfg.Store.AppendAudit(ctx, &ev); err != nil {
		e.cfg.Logger.Error("assistant: audit thread deletion", "thread", id, "err", err)
	}
	return nil
}

// Tools returns the specs of the tools u may use on page, as offered to the
// model: authorized for u and on that page. ClientSide tools are included;
// the client runs those.
func (e *Engine) Tools(ctx context.Context, u parley.User, page string) ([]tools.Spec, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return nil, err
	}
	offered := e.offeredTools(ctx, u, page)
	specs := make([]tools.Spec, len(offered))
	for i, t := range offered {
		specs[i] = t.spec
	}
	return specs, nil
}

// thread loads a thread and checks u may perform kind on it. The owner may
// read and write it; nobody else may ever write it; another user may read it
// only if the Authorizer allows ReadThread. Both a missing thread and a
// refused one are CodeNotFound, so existence never leaks.
func (e *Engine) thread(ctx context.Context, u parley.User, id string, kind ActionKind) (store.Thread, error) {
	if err := e.authorize(ctx, u, Action{Kind: UseAssistant}); err != nil {
		return store.Thread{}, err
	}
	if !validID(id) {
		return store.Thread{}, wrap(CodeNotFound, "resolve thread", store.ErrNotFound)
	}
	t, err := e.cfg.Store.GetThread(ctx, id)
	if err != nil {
		return store.Thread{}, e.storeErr("resolve thread", err)
	}
	if t.ArchivedAt != nil && kind == WriteThread {
		return store.Thread{}, wrap(CodeNotFound, "resolve thread", store.ErrNotFound)
	}
	if t.OwnerID != u.ID {
		if kind != ReadThread {
			return store.Thread{}, wrap(CodeNotFound, "resolve thread", errors.New("not the owner"))
		}
		if err := e.cfg.Authorizer.Authorize(ctx, u, Action{Kind: ReadThread, Thread: &t}); err != nil {
			return store.Thread{}, wrap(CodeNotFound, "resolve thread", err)
		}
	}
	return t, nil
}

func (e *Engine) authorize(ctx context.Context, u parley.User, a Action) error {
	if u.ID == "" {
		return wrap(CodeUnauthenticated, string(a.Kind), errors.New("user has no ID"))
	}
	if err := e.cfg.Authorizer.Authorize(ctx, u, a); err != nil {
		return wrap(CodeForbidden, string(a.Kind), err)
	}
	return nil
}

func (e *Engine) storeErr(op string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return wrap(CodeNotFound, op, err)
	}
	return wrap(CodeInternal, op, err)
}
