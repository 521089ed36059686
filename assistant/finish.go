package assistant

// Finish reasons: why a turn ended, as its closing Meta block and
// Reply.Finish report it. A turn that ends normally reports the model's own
// reason (FinishStop, FinishLength, ...); the others are the Engine's.
const (
	FinishStop          = "stop"           // the model finished its answer
	FinishLength        = "length"         // the answer reached a token limit: the model's, or Config.MaxTurnOutputTokens/MaxTurnOutputBytes
	FinishToolCalls     = "tool_calls"     // the model's last call asked for tools (not normally the end of a turn)
	FinishContentFilter = "content_filter" // the provider's filter stopped the answer
	FinishApproval      = "approval"       // the turn waits on a confirm card (Request.Decision answers it)
	FinishClientTool    = "client_tool"    // the turn waits on client-side tool results (Request.ToolResults)
	FinishAskUser       = "ask_user"       // the turn waits on an ask_user form (Request.Form)
	FinishBlocked       = "blocked"        // the guard blocked the message and Config.GuardRejection answered it
	FinishEmpty         = "empty"          // the model said nothing; the Engine answered with a fallback
	FinishQuota         = "quota"          // a decision was carried out, but the user is out of quota: no model call
)
