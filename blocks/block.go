package blocks

import "encoding/json"

// Kind names what a Block is. The set is closed except for Component blocks,
// whose Tag names a host-registered UI component.
type Kind string

// The block kinds. See the package documentation for the fields each uses.
const (
	Markdown   Kind = "markdown"    // prose; Content. Consecutive chunks concatenate.
	Reasoning  Kind = "reasoning"   // the model's visible reasoning, shown apart from the answer; Content. Consecutive chunks concatenate.
	Code       Kind = "code"        // fenced code; Content, Tag = language
	Mermaid    Kind = "mermaid"     // mermaid diagram source; Content
	Load       Kind = "load"        // placeholder while a fenced block streams; Tag = kind being loaded
	ToolCall   Kind = "tool_call"   // the model called a tool; ID, Name, Data = arguments, ClientSide
	ToolResult Kind = "tool_result" // a tool's outcome; ID, Name, OK, Content = summary or error message, ErrorCode = tool error code
	Confirm    Kind = "confirm"     // approval card; ID = token, Name = tool, Content = summary, CallID, Effect
	Form       Kind = "form"        // ask_user form; ID = call id, Data = questions
	Component  Kind = "component"   // custom UI block; Tag = component name, Data = props
	Warning    Kind = "warning"     // a notice to the user; Content, Data = what it is about (the guard's: assistant.GuardNotice)
	Error      Kind = "error"       // terminal error; ErrorCode, Content = safe message
	Meta       Kind = "meta"        // turn metadata; Meta
)

// CodeDeclined is the ErrorCode of a tool_result block whose call a human
// declined: nothing ran. Encoders show such a result as a denial rather
// than a failure. It is tools.CodeDeclined, defined here so that packages
// below tools can read it.
const CodeDeclined = "DECLINED"

// Block is one unit of assistant output. The same value is streamed to the
// client (compact NDJSON keys) and persisted (verbose keys), so reloading a
// thread shows exactly what streamed.
type Block struct {
	Kind    Kind   // wire "k", stored "kind"
	Content string // wire "c", stored "content"
	// Tag is the language of a code block, the kind a load block stands
	// for ("code" or "mermaid"), or a component block's name. Other kinds
	// leave it empty.
	Tag       string // wire "t", stored "tag" (on tool_call and confirm blocks the key spells ClientSide and Effect for older readers)
	ErrorCode string // wire "e", stored "error_code" (error blocks; tool_result error code)
	ID        string // wire "id", stored "id" (tool call id, confirm token)
	Name      string // wire "n", stored "name" (tool name)
	// CallID is, on a confirm block, the id of the tool call the card
	// decides: the ID of that call's tool_call block. Cards stored before
	// it existed have none.
	CallID string // wire "ci", stored "call_id"
	// ClientSide marks a tool_call block whose call the client runs (a
	// tools.Spec.ClientSide tool): the turn ends, and the client posts the
	// result with its next request.
	ClientSide bool // wire "cs", stored "client_side"
	// Effect is, on a confirm block, the effect of the tool the card
	// approves, as tools.Effect spells it: "mutate" or "destructive".
	Effect string          // wire "ef", stored "effect"
	OK     bool            // wire "ok", stored "ok" (tool_result only; always written there)
	Data   json.RawMessage // wire "d", stored "data": a JSON value
	Meta   *MetaInfo       // wire "m", stored "meta" (meta blocks)
}

// MetaInfo is the payload of a Meta block. Its keys are the same on the wire
// and in storage.
type MetaInfo struct {
	ThreadID      string `json:"thread_id,omitempty"`
	MessageID     string `json:"message_id,omitempty"`      // the assistant message
	UserMessageID string `json:"user_message_id,omitempty"` // the user message of this turn
	Title         string `json:"title,omitempty"`
	InputTokens   int64  `json:"input_tokens,omitempty"`
	OutputTokens  int64  `json:"output_tokens,omitempty"`
	// Finish says why the turn ended, in its closing meta block: one of
	// the Finish* constants, or another reason the model's provider
	// reported. A turn that failed or was cancelled has no finish: it ends
	// with an Error block instead.
	Finish string `json:"finish,omitempty"`
	// Waiting says, while the model is busy or unreachable and the turn
	// waits to try it again, what the user is waiting for: a short safe
	// sentence. Not stored.
	Waiting string `json:"waiting,omitempty"`
	// Connection and Model name, in a turn's first meta block, the model
	// connection and the model that answer it (Model "": the provider's
	// default).
	Connection string `json:"connection,omitempty"`
	Model      string `json:"model,omitempty"`
}

// Terminal reports whether b ends a stream: an Error block is always last.
func (b *Block) Terminal() bool { return b.Kind == Error }
