// Package httpapi serves an assistant.Engine over HTTP: one NDJSON streaming
// endpoint and a small REST surface for threads, tools, quotas and stored
// system prompts.
//
// # Routes
//
//	POST   /api/chat/stream         one turn (see StreamRequest): {"thread_id"?, "message"?,
//	                                "page"?, "page_context"?, "decision"?, "tool_results"?,
//	                                "form"?, "autonomous"?, "replaces"?, "regenerate"?,
//	                                "entities"?: [{"type", "id"}], "model"?, "settings"?}: a
//	                                message, a decision on a confirm card, client tool
//	                                results, ask_user form answers, an edit or a regeneration
//	                                -> application/x-ndjson, one compact block per line;
//	                                the first line is a meta block whose "m" carries thread_id,
//	                                and the "connection" and "model" that answer.
//	                                "replaces": a user message's id, with "message" its new
//	                                text; "regenerate": true, without "message", answers the
//	                                last user message again. Either needs "thread_id"; the
//	                                replaced message and all after it are superseded (404 for
//	                                an id that is not a user message of the thread, 409 if it
//	                                is already superseded or there is nothing to regenerate).
//	                                "entities" name host objects the message is about; each
//	                                reaches the model only if the Authorizer allows
//	                                ReadEntity (at most assistant.MaxEntities).
//	                                "model": "connection/model", "connection/" or a model's
//	                                name; "" or absent: the user's preference, else the
//	                                default. A model no connection offers is 400
//	                                invalid_request, as on the preference route (see Models).
//	                                "settings": {"temperature"?, "top_p"?, "max_tokens"?,
//	                                "reasoning_effort"?}: those the connection does not allow
//	                                are dropped, the others clamped (temperature 0-2, top_p
//	                                0-1, max_tokens up to the connection's max_output_tokens)
//	POST   /api/chat/ui             the AI SDK's useChat body {"id", "messages", "trigger",
//	                                "messageId"?, and "page"?, "page_context"?, "entities"?,
//	                                "model"?, "settings"? as in /api/chat/stream: top-level
//	                                keys a client adds with the body option of useChat or
//	                                sendMessage} -> its UI message stream (text/event-stream,
//	                                v1): the chat id names the user's own thread (1 to 128
//	                                ASCII letters, digits, '-' and '_'; else 400), stored under
//	                                an id of its own, so another user's chat or thread of that
//	                                id answers as one never used; only the last message is
//	                                read (see ui.go); refusals before the stream are a status
//	                                with the safe message as text/plain. The start chunk's
//	                                messageMetadata carries threadId (the stored id; the chat
//	                                id names the thread on every route too), messageId,
//	                                userMessageId, title, connection and model
//	GET    /api/chat/ui/{id}/stream -> the chat's stream running on this instance (or on
//	                                another, through a relaying Store: relay.go), replayed
//	                                from its start, or 204
//	GET    /api/chat/ui/{id}        -> {"messages": [...]}: the thread as useChat's initial
//	                                messages, the parts that streamed (uistream.History)
//	GET    /api/chat/threads        -> {"threads": [...]}, newest first; ?limit=1..200, ?before=RFC 3339
//	POST   /api/chat/threads        no body or {} -> {"thread"}: an empty thread to start a
//	                                chat in; the user's empty untitled draft if there is one,
//	                                else a new one. Always 200, reused or new; its first
//	                                message names it
//	GET    /api/chat/threads/{id}   -> {"thread", "messages", "proposals", "waiting", "feedback"}:
//	                                the transcript in stored block form, the state of its
//	                                confirm cards ({"token", "tool", "summary", "status",
//	                                "expires_at"}), what else it waits on ({"form"?,
//	                                "tool_calls"}: an ask_user form, client calls) and the
//	                                user's ratings of its answers. Messages an edit or a
//	                                regeneration superseded are left out; ?superseded=1 adds
//	                                them, with "superseded_at"; a message that replaced
//	                                another names it in "replaces"
//	PATCH  /api/chat/threads/{id}   {"title"} -> {"thread"}; renames the thread
//	DELETE /api/chat/threads/{id}   -> 204; archives the thread; ?hard=true deletes it for good
//	GET    /api/chat/threads/{id}/stream -> the NDJSON stream of the thread's turn running on
//	                                this instance (or another, as above), replayed from its
//	                                first block and followed to its end, or 204 (resume.go)
//	POST   /api/chat/threads/{id}/cancel -> 202; stops the running turn, on any instance
//	PUT    /api/chat/threads/{id}/messages/{message_id}/feedback
//	                                {"rating": "up"|"down", "category"?, "comment"?}
//	                                -> {"feedback"}; rates an answer, replacing an earlier rating
//	DELETE /api/chat/threads/{id}/messages/{message_id}/feedback
//	                                -> 204; withdraws the rating
//	GET    /api/chat/models         -> {"connections": [{"name", "default_model", "models",
//	                                "context_window", "max_output_tokens"?, "settings"}],
//	                                "default": {"connection", "model"}, "current": {...},
//	                                "preference"?: {...}}: what this user may pick. "models"
//	                                lists the default first; "settings" names what a request
//	                                may set there; "current" is what a request naming no model
//	                                uses now; "preference" is the user's own stored choice, as
//	                                stored (absent if none, or the Store keeps none)
//	GET    /api/chat/auto-approve     -> {"grants": [...]}: the tools, and "category:<name>"s,
//	                                the user runs without an approval card
//	PUT    /api/chat/auto-approve     {"grants": [...]} -> the same; replaces the whole list ([]
//	                                clears it). A grant that names no Mutate tool the user may
//	                                use (a Destructive one only with
//	                                assistant.Config.AutoApproveDestructive) is 400; 501
//	                                unsupported when the Store keeps none
//	PUT    /api/chat/models/preference {"connection", "model"} -> the list above; stores the
//	                                user's choice for requests naming no model ("model" "": the
//	                                connection's default; "connection" "": the default one;
//	                                both "": clears it). A connection or model not offered is
//	                                400, as it is in a stream's "model". 501 unsupported when the Store does not
//	                                implement store.Preferences
//	GET    /api/chat/tools          -> {"tools": [...]}, what this user may use; ?page=; each
//	                                with name, description, category, effect, needs_approval,
//	                                client_side and input_schema (its arguments' JSON Schema)
//	POST   /api/chat/tools/{name}/execute {"args"?, "thread_id"?, "page"?}
//	                                -> the result envelope {"ok", "summary", "data", "error"};
//	                                404 for a tool this user may not use (same gate as the model),
//	                                403 for one whose effect Config.Execute does not allow
//	GET    /api/chat/quota          -> {"user_id", "daily", "weekly", "monthly"}: per period
//	                                used, held, limit (-1 unlimited), start, resets_at
//	GET    /api/chat/quota/{user}   -> the same for another user (ManageQuota)
//	PUT    /api/chat/quota/{user}   {"daily"?: n|null, "weekly"?: n|null, "monthly"?: n|null}
//	                                -> the new usage; n sets an override (-1 unlimited), null
//	                                restores the system default, an absent key is unchanged
//	GET    /api/chat/prompts        -> {"prompts": [...]}, the stored system prompts, newest
//	                                first: {"id", "name", "text", "active", "created_by",
//	                                "created_at", "updated_at"}
//	POST   /api/chat/prompts        {"name"?, "text"} -> 201 {"prompt"}, stored inactive;
//	                                413 for a text over assistant.MaxPromptTextBytes
//	POST   /api/chat/prompts/{prompt_id}/activate no body or {} -> 204; the one active
//	                                prompt from the next turn on, in place of
//	                                assistant.Config.CustomInstructions
//	POST   /api/chat/prompts/deactivate no body or {} -> 204; none active
//	DELETE /api/chat/prompts/{prompt_id} -> 204; deleting the active prompt leaves none active
//
// The prompt routes are for users the Authorizer allows ManagePrompts
// (403 for others, before any id is looked up); an unknown prompt id is
// 404, and so is every prompt route when the Store does not implement
// store.SystemPrompts.
//
// A thread is {"id", "title", "created_at", "updated_at", "archived_at"?,
// "summarized_through"?}: summarized_through is the seq up to which the
// model sees the conversation only as a summary, so a client can mark those
// messages. The summary itself is not shown: it is the model's working
// note, not part of what the user and the assistant said.
//
// # Requests
//
// A request that carries a body (POST, PUT, PATCH or DELETE) must send it as
// Content-Type: application/json (a charset parameter, if any, must be
// UTF-8); anything else, a form post or text/plain included, is 415
// unsupported_media_type. A request without a body (a DELETE, a cancel, a
// new thread, an activation) needs no Content-Type. A body is at most Config.MaxBodyBytes (DefaultMaxBodyBytes,
// 512 KiB): a larger one is 413 before it is read past the limit. The AI
// SDK route takes up to 16 times that (useChat sends the whole
// conversation) but holds one field or message at a time, each bounded by
// MaxBodyBytes alike and refused with 413 once read past it. Unknown
// JSON fields are refused, and so is a U+0000 in any field, the path
// included.
//
// # Cross-origin protection
//
// The Handler runs behind http.CrossOriginProtection: a browser's
// cross-origin request of any method but GET, HEAD and OPTIONS (by
// Sec-Fetch-Site, or an Origin that does not match Host) is 403 forbidden
// before it is routed, so a host that signs users in with cookies cannot be
// driven from another site. GET, HEAD and OPTIONS are never blocked;
// requests with neither header (same-origin requests of older browsers,
// non-browser clients) pass. Config.TrustedOrigins
// admits a UI served from another origin; Config.DisableCrossOriginProtection
// is for hosts that apply their own protection in front of the Handler.
//
// # Direct tool execution
//
// POST /api/chat/tools/{name}/execute runs a tool without a confirm card,
// since the user pressed a button in the host's own UI. Config.Execute
// bounds what such a button may do: ExecuteReadAndMutate (the zero value)
// runs Read and Mutate tools and refuses Destructive ones with 403, never
// running them; ExecuteReadOnly runs only Read tools; ExecuteAll runs every
// tool the user may use, for hosts whose UI confirms destructive actions
// itself.
//
// # Errors
//
// Every error is {"error": {"code", "message"}} with a status from StatusOf,
// the one mapping from assistant error codes, except on the routes the AI
// SDK's chat transport calls (POST /api/chat/ui and GET
// /api/chat/ui/{id}/stream): there every refusal, 401, 403, 413 and 415
// included, is the message alone as text/plain, since that client throws a
// failed response's text as the error useChat shows. The Handler adds 405
// method_not_allowed (with an Allow header listing the path's methods) and
// 415 unsupported_media_type. A 400 names what is
// wrong: the field and the type it needs, the unknown field, the byte where
// the JSON broke, the query parameter, the field holding a NUL; names taken
// from input are clipped to 64 bytes, and the body is never logged (a
// malformed one is logged at Debug with its path). A thread the user may
// not read is 404, never 403. A stream refused before it starts (forbidden,
// unknown thread, empty or oversized message) answers with a status; once
// streaming, a failure is a terminal error block in the stream.
//
// # Streaming
//
// Each block is flushed as it is written, through http.NewResponseController,
// so wrapping middleware that implements Unwrap does not buffer the stream.
// A client that disconnects detaches from the turn; the turn completes and
// is persisted.
package httpapi
