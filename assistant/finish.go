package assistant

import "github.com/parleyhq/parley/blocks"

// Finish reasons: why a turn ended, as its closing Meta block and
// Reply.Finish report it. A turn that ends normally reports the model's own
// reason (FinishStop, FinishLength, ...); the others are the Engine's. They
// are the strings of blocks.Finish*, named here too so that code driving
// the Engine needs no second import.
const (
	FinishStop          = blocks.FinishStop          // the model finished its answer
	FinishLength        = blocks.FinishLength        // the answer reached a token limit: the model's, or Config.MaxTurnOutputTokens/MaxTurnOutputBytes
	FinishToolCalls     = blocks.FinishToolCalls     // the model's last call asked for tools (not normally the end of a turn)
	FinishContentFilter = blocks.FinishContentFilter // the provider's filter stopped the answer
	FinishApproval      = blocks.FinishApproval      // the turn waits on a confirm card (Request.Decision answers it)
	FinishClientTool    = blocks.FinishClientTool    // the turn waits on client-side tool results (Request.ToolResults)
	FinishAskUser       = blocks.FinishAskUser       // the turn waits on an ask_user form (Request.Form)
	FinishBlocked       = blocks.FinishBlocked       // the guard blocked the message and Config.GuardRejection answered it
	FinishEmpty         = blocks.FinishEmpty         // the model said nothing; the Engine answered with a fallback
	FinishQuota         = blocks.FinishQuota         // a decision was carried out, but the user is out of quota: no model call
	FinishOffTopic      = blocks.FinishOffTopic      // Config.TopicScope's filter found the message off topic and Config.TopicRefusal answered it
	FinishTerminalTool  = blocks.FinishTerminalTool  // every call of the last round was a Terminal tool that succeeded: no further model call
)
