package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
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
	tel      *telemetry // spans and metrics (telemetry.go)
}

// New validates cfg, applies defaults and returns an Engine.
func New(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	e := &Engine{cfg: cfg, conns: cfg.connections(), guard: cfg.Guard, tel: newTelemetry(&cfg)}
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
	if cfg.CancelPollInterval > 0 {
		e.live.spawn = func(ctx context.Context, wake <-chan struct{}) {
			e.running.add() // Wait waits for the watcher too
			go e.watchLive(ctx, wake)
		}
	}
	return e, nil
}

// Wait blocks until every turn started so far has finished and persisted,
// including turns whose consumer detached and the title calls of new
// threads (Config.GenerateTitles; at most 10 s each), or until ctx ends. Call it on
// shutdown after the HTTP server has stopped taking requests.
func (e *Engine) Wait(ctx context.Context) error { return e.running.wait(ctx) }

// Relay returns the Engine's Store as a store.Relay, or nil when it is not
// one, so a front end serving the Engine (assistant/httpapi) can reach, on
// another process sharing the Store, a stream that runs there.
func (e *Engine) Relay() store.Relay {
	r, _ := e.cfg.Store.(store.Relay)
	return r
}

// Request is one user message to the assistant, or the user's answer to
// what the previous turn left waiting: a confirm card (Decision), calls of
// client-side tools (ToolResults) or an ask_user form (Form). At most one of
// the three may be set, and each needs ThreadID.
type Request struct {
	ThreadID string // "": start a new thread; else a thread's id, or a chat name of the user's (see CreateThread)
	// CreateThread makes ThreadID the client's name for the conversation,
	// for clients that name their conversations, such as the AI SDK's
	// useChat: the thread of that id if the user owns one, else the user's
	// chat of that name, which the first message creates. A chat is stored
	// under an id derived from the user and the name (the first meta block
	// tells it), so another user's thread or chat of
	// the same name is never touched, nor told apart from a name never
	// used. The name is 1 to MaxChatIDBytes ASCII letters, digits, '-' and
	// '_' (else CodeInvalidRequest).
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
	// AutoApprove names, for this turn, tools (or "category:<name>") the
	// user runs without an approval card, as a client that keeps the
	// user's "always allow" choices sends them; at most MaxAutoApprovals.
	// Each is honoured only as a stored one is (see
	// Engine.SetAutoApprovals); the others are ignored.
	AutoApprove []string

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
	// A model no connection offers is refused with CodeInvalidRequest
	// before anything is written, as SetModelPreference refuses it (a
	// stored preference the connections no longer offer falls back to the
	// connection's default instead); the first meta block names the
	// connection and model that answer.
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
	// Reason is why the user declines, in their words (at most
	// MaxDecisionReasonBytes; an apply ignores it). The input guard
	// screens it like a message: a blocked reason is dropped, a redacted
	// one kept redacted. The model reads it with the declined call's
	// result, and the result block keeps it in Data ({"reason"}), so a
	// reloaded card still shows it.
	Reason string
}

// MaxDecisionReasonBytes bounds Decision.Reason.
const MaxDecisionReasonBytes = 1 << 10

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
		// The turn's span covers its checks too: a refusal is a turn that
		// ended with an error.type.
		ctx, span := e.tel.startTurn(ctx, u, req)
		t, err := e.begin(ctx, u, req, span)
		if err != nil {
			span.refused(ctx, err)
			yield(e.errorBlockContext(ctx, err))
			return
		}
		t.run(ctx, yield)
	}
}

// errorBlock logs err and turns it into a terminal block showing only its code.
func (e *Engine) errorBlock(err error) blocks.Block {
	return e.errorBlockContext(context.Background(), err)
}

// errorBlockContext is errorBlock logging under ctx: inside a turn, with
// its id and trace.
func (e *Engine) errorBlockContext(ctx context.Context, err error) blocks.Block {
	log := e.cfg.Logger
	switch code := Code(err); {
	case code == CodeInternal && errors.Is(err, context.Canceled):
		// The caller left (a client disconnected) before the turn began.
		log.InfoContext(ctx, "assistant: request ended before the turn began", "code", string(code), "err", err)
	case code == CodeInternal:
		log.ErrorContext(ctx, "assistant: turn failed", "code", string(code), "err", err)
	case code == CodeModelBusy, code == CodeModelTimeout, code == CodeModelUnavailable:
		// The model's endpoint failed: an operator needs to see this.
		log.WarnContext(ctx, "assistant: model call failed", "code", string(code), "err", err)
	default:
		log.InfoContext(ctx, "assistant: turn refused", "code", string(code), "err", err)
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
	ThreadID      string          // the thread; Request.ThreadID continues it
	MessageID     string          // the stored assistant message
	UserMessageID string          // the stored user message it answers; Request.Replaces edits it
	Title         string          // the thread's title, as the meta blocks name it
	Text          string          // all markdown of the answer, concatenated
	Blocks        []blocks.Block  // the stored form of the answer; a confirm block's ID is a Decision's token
	Usage         providers.Usage // the tokens the turn's model calls reported
	Finish        string          // a Finish* reason; "" when the turn failed (Collect returns the error)
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
