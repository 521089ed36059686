// Package uistream encodes a turn's blocks as the Vercel AI SDK's UI
// message stream (protocol v1: server-sent events, one JSON chunk per
// event), the wire the SDK's useChat and Chat read, and a stored thread's
// blocks as the UI message parts the stream built.
//
// An Encoder is pure and stateful: it keeps the open text part, the step,
// and the tool calls it has announced, and writes each block as zero or
// more chunks:
//
//	meta (first)      start {messageId, messageMetadata}, start-step
//	markdown          text-start (once per part), text-delta
//	reasoning         reasoning-start (once per part), reasoning-delta
//	code, mermaid     text-delta with the fenced block
//	tool_call         tool-input-available {toolCallId, toolName, input}
//	tool_result       tool-output-available {output} | tool-output-error | tool-output-denied (DECLINED)
//	confirm           tool-approval-request {approvalId: token, toolCallId: CallID}
//	form              nothing: its ask_user tool call carries the form as input
//	component         data-<tag> {data}
//	warning           data-warning {data: {"text"}}
//	error             error {errorText}: the stream ends
//	meta (waiting)    data-status {data: {"waiting"}, transient: true}
//	meta (last)       finish-step; finish {finishReason, messageMetadata} at Close
//
// A confirm card goes to the call its CallID names, if this stream
// announced it and it has no result; a card without a CallID (built by
// hand, or stored before cards carried one) goes to the oldest such call
// of its tool. A card with no call to go to writes nothing.
//
// A tool result after the step's tool calls opens a new step before the
// next text or call, as the SDK's own server does. Only the chunk types and
// fields of protocol v1 that SDK 5, 6 and 7 clients all accept are written
// (tool-approval-request and tool-output-denied need SDK 6 or later);
// optional fields are omitted, never null.
//
// # Continuations
//
// A stream that continues a message the client already shows (an
// approval, client tool outputs) passes Options.MessageID, the client's id
// for it, and opens no step of its own: the outputs of the calls it answers
// belong to the step that made them. Options.Answered names the calls whose
// outputs the client supplied itself; their results are not sent back.
//
// # Reloading a thread
//
// History gives the parts of a stored thread's answers, the shape useChat
// takes as its initial messages: the parts the Encoder's chunks added up
// to when the answers streamed. The block to part mapping is written once,
// in parts.go, for both. Cards, which the stored blocks cannot tell,
// say how each confirm card was decided.
//
// # Concurrency
//
// An Encoder or a History is not safe for concurrent use.
package uistream
