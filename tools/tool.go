package tools

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/blocks"
)

// BaseTool is a function the model may call.
//
// Spec must return the same value on every call. Execute runs the tool; the
// Engine has already authorized the call, and Invoke has validated Args
// against Spec().InputSchema. Execute reports expected failures (not found, invalid
// state) in Result.Error so the model can recover; a returned error or a
// panic becomes an INTERNAL tool error whose text the model and user never
// see. Execute must be safe for concurrent use and honour ctx.
type BaseTool interface {
	Spec() Spec
	Execute(ctx context.Context, call Call) (Result, error)
}

// Effect says what a tool does to the world, and so whether a human must
// approve it.
type Effect string

// Effects. Read tools run automatically; Mutate and Destructive tools need
// approval.
const (
	Read        Effect = "read"
	Mutate      Effect = "mutate"
	Destructive Effect = "destructive"
)

// Spec describes a tool.
type Spec struct {
	Name         string          // unique; ^[a-zA-Z0-9_-]{1,64}$
	Description  string          // what the tool does, for the model
	Category     string          // groups tools in catalogs and role rules; optional
	InputSchema  json.RawMessage // JSON Schema of the arguments object; nil: no arguments
	Effect       Effect          // zero value: Read
	Instructions string          // extra guidance added to the system prompt when offered
	ClientSide   bool            // executed by the client, not the server
	Pages        []string        // pages the tool is offered on; empty: every page
	Terminal     bool            // a successful call ends the turn without another model round
	// Reuse is how long a Read tool's result may answer an identical call
	// (same arguments) later in the thread without running the tool again.
	// Zero, the default, is never: the tool's answer may change with time
	// (a clock, live stats) or by others (another user, the host's back
	// end), and only the tool knows. Set it for data that only changes
	// through audited Mutate and Destructive calls. The Engine bounds it by
	// Config.KnowledgeMaxAge, and any such call the user makes meanwhile
	// makes the result stale.
	Reuse time.Duration
	// IDArgs names the arguments that hold ids of the host's objects, for
	// the Engine's workflow policy (assistant.Config.Workflow): with it on,
	// a Mutate or Destructive call may only name objects the conversation
	// has already seen. Each entry is a top-level argument name ("note_id")
	// or a JSON Pointer into the arguments (RFC 6901: "/target/id"); the
	// value there is one id (a string or a number) or an array of them. An
	// argument a call leaves out names nothing. See [IDsAt].
	IDArgs []string
}

// NeedsApproval reports whether the tool changes the world.
func (s Spec) NeedsApproval() bool { return s.Effect == Mutate || s.Effect == Destructive }

// Call is one invocation of a tool.
type Call struct {
	ID       string          // the model's tool call id
	User     parley.User     // on whose behalf the tool runs
	ThreadID string          //
	Args     json.RawMessage // validated JSON object; {} when the model sent none
	Approved bool            // a human approved this exact call
}

// Result is the envelope returned to the model (and, via UI, to the user).
type Result struct {
	OK      bool          `json:"ok"`
	Summary string        `json:"summary,omitempty"` // one line for the model and the tool_result block
	Data    any           `json:"data,omitempty"`    // JSON-encodable payload for the model
	Error   *ToolError    `json:"error,omitempty"`   // set when OK is false
	UI      *blocks.Block `json:"-"`                 // optional block shown to the user, never sent to the model
}

// ErrorCode classifies a tool failure for the model.
type ErrorCode string

// Tool error codes.
const (
	CodeInvalidArgs   ErrorCode = "INVALID_ARGS"      // arguments failed the schema; fix and retry
	CodeUnknownTool   ErrorCode = "UNKNOWN_TOOL"      // no such tool
	CodeNotLoaded     ErrorCode = "NOT_LOADED"        // the tool exists but must be loaded with search_tools first
	CodeNotAuthorized ErrorCode = "NOT_AUTHORIZED"    // this user may not use the tool
	CodeNeedsApproval ErrorCode = "NEEDS_APPROVAL"    // a human must approve this call
	CodeDeclined      ErrorCode = blocks.CodeDeclined // a human declined this call; nothing ran
	CodeNotFound      ErrorCode = "NOT_FOUND"         // the object the call names does not exist
	CodeConflict      ErrorCode = "CONFLICT"          // the world is not in the state the call needs
	CodeTimeout       ErrorCode = "TIMEOUT"           // the tool did not finish in time
	CodeRateLimited   ErrorCode = "RATE_LIMITED"      // too many calls; retry later
	CodeLoopDetected  ErrorCode = "LOOP_DETECTED"     // the same call was repeated too often
	CodeBlocked       ErrorCode = "BLOCKED"           // a guard refused the arguments
	CodeUnresolvedID  ErrorCode = "UNRESOLVED_ID"     // an id argument names nothing the conversation has seen; find it first
	CodeVerifyFirst   ErrorCode = "VERIFY_FIRST"      // a change was made: check it with a read tool before anything else
	CodeInternal      ErrorCode = "INTERNAL"          // the tool failed; details are logged, not shown
)

// ToolError is the error half of a Result.
type ToolError struct {
	Code      ErrorCode `json:"code"`
	Message   string    `json:"message"`             // safe for the model and the user
	Retryable bool      `json:"retryable,omitempty"` // the same call may succeed later
	Blocked   bool      `json:"blocked,omitempty"`   // do not retry; policy refused it
	Hint      string    `json:"hint,omitempty"`      // what the model should do instead
}

// OK returns a successful Result.
func OK(summary string, data any) Result { return Result{OK: true, Summary: summary, Data: data} }

// Fail returns a failed Result with the given code and message. A
// CodeBlocked or CodeNotAuthorized failure is marked Blocked: policy refused
// it and retrying will not help.
func Fail(code ErrorCode, message string) Result {
	blocked := code == CodeBlocked || code == CodeNotAuthorized
	return Result{Error: &ToolError{Code: code, Message: message, Blocked: blocked}}
}

// Registry finds tools by name. Implementations must be safe for concurrent
// use and must return the same tools for the life of an Engine.
type Registry interface {
	// Lookup returns the tool named name, or false.
	Lookup(name string) (BaseTool, bool)
	// All returns every tool, in a stable order.
	All() []BaseTool
}

// Sentinel errors.
var (
	// ErrUnknownTool: no tool has that name.
	ErrUnknownTool = errors.New("tools: unknown tool")
	// ErrInvalidSpec: a Spec is malformed (bad name, bad schema).
	ErrInvalidSpec = errors.New("tools: invalid spec")
	// ErrDuplicate: two tools share a name.
	ErrDuplicate = errors.New("tools: duplicate tool name")
	// ErrInvalidArgs: arguments are not valid JSON or fail the schema.
	ErrInvalidArgs = errors.New("tools: invalid arguments")
)
