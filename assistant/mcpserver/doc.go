// Package mcpserver serves an assistant.Engine's tools over the Model
// Context Protocol (streamable HTTP), so an MCP client (an IDE, another
// agent) uses the same tools as the chat, behind the same gate.
//
//	h, err := mcpserver.New(eng, mcpserver.Config{Authenticate: authenticate})
//	mux.Handle("/mcp", h)
//
// # Authentication and sessions
//
// Every HTTP request is authenticated with Config.Authenticate, the same
// kind of function httpapi uses; a request it refuses is answered 401 and
// reaches nothing. A session is bound to the user who opened it: another
// user presenting its id is refused with 403. A browser's cross-origin
// request is refused with 403 unless its origin is in
// Config.TrustedOrigins, as httpapi refuses it.
//
// # Tools
//
// tools/list shows exactly the tools the Engine's Authorizer lets the user
// use (Engine.Tools on no page: page-tagged and client-side tools are not
// served), annotated with what the Engine enforces: read-only, or needing
// approval (destructive, or not). tools/call goes through
// Engine.ExecuteTool, the gate every direct call passes: authorization
// again, the argument size and NUL checks, the guard, the schema, the
// tool-call rate limit, and an audit row with transport "mcp" (a call of a
// tool the user may not use is audited too).
//
// # Approvals
//
// A Mutate or Destructive tool never runs on a bare call. The user is asked
// through an MCP elicitation when the client supports it: accept runs the
// call once, decline or cancel runs nothing. A client that cannot ask (or
// Config.NoElicitation) gets an error result saying the call waits for the
// user's approval in the app: a new conversation holds the confirm card,
// which the user applies or declines like any other (a decision turn,
// Request.Decision). The result names the conversation, never the card's
// token.
//
// # Errors
//
// A tool that does not exist, or that the user may not use, is a JSON-RPC
// invalid-params error ("unknown tool"), the name not echoed. A tool's
// failure, and the gate's refusals (invalid or blocked arguments, rate
// limits, a declined approval), are error results carrying the result
// envelope ({"ok", "summary", "data", "error"}) as the chat's model reads
// it: a tool's internal error text never leaves the server.
package mcpserver
