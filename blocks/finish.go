package blocks

// Finish reasons: why a turn ended, as the Finish of its closing Meta block
// says it. A turn that ends on the model's answer reports the model's own
// reason (FinishStop, FinishLength, FinishToolCalls, FinishContentFilter,
// or another string a provider reports); the others are the Engine's. A
// turn that fails ends with an Error block instead, and has no finish.
//
// The package assistant names the same strings assistant.Finish*; encoders
// of the wire (blocks/uistream) read them from here.
const (
	FinishStop          = "stop"           // the model finished its answer
	FinishLength        = "length"         // the answer reached a token limit: the model's, or the turn's output cap
	FinishToolCalls     = "tool_calls"     // the model's last call asked for tools (not normally the end of a turn)
	FinishContentFilter = "content_filter" // the provider's filter stopped the answer
	FinishApproval      = "approval"       // the turn waits on a confirm card
	FinishClientTool    = "client_tool"    // the turn waits on client-side tool results
	FinishAskUser       = "ask_user"       // the turn waits on an ask_user form
	FinishBlocked       = "blocked"        // the guard blocked the message and a fixed rejection answered it
	FinishEmpty         = "empty"          // the model said nothing; a fallback answered
	FinishQuota         = "quota"          // a decision was carried out, but the user is out of quota: no model call
	FinishOffTopic      = "off_topic"      // the topic filter found the message off topic and a fixed refusal answered it
	// FinishTerminalTool: every call of the last tool round ran a Terminal
	// tool (tools.Spec.Terminal) and succeeded, so the results end the
	// turn without another model call.
	FinishTerminalTool = "tool"
)
