// Package httpapi serves an assistant.Engine over HTTP: one NDJSON streaming
// endpoint and a small REST surface for threads and tools.
//
// # Routes
//
//	POST   /api/chat/stream         {"thread_id"?, "message", "page"?, "page_context"?}
//	                                -> application/x-ndjson, one compact block per line;
//	                                the first line is a meta block whose "m" carries thread_id
//	GET    /api/chat/threads        -> {"threads": [...]}, newest first; ?limit=1..200, ?before=RFC 3339
//	GET    /api/chat/threads/{id}   -> {"thread": {...}, "messages": [...]}, blocks in stored form
//	DELETE /api/chat/threads/{id}   -> 204; archives the thread
//	POST   /api/chat/threads/{id}/cancel -> 202; stops the running turn, on any instance
//	GET    /api/chat/tools          -> {"tools": [...]}, what this user may use; ?page=
//	POST   /api/chat/tools/{name}/execute {"args"?, "thread_id"?, "page"?}
//	                                -> the result envelope {"ok", "summary", "data", "error"};
//	                                404 for a tool this user may not use (same gate as the model)
//	GET    /api/chat/quota          -> {"user_id", "daily", "weekly", "monthly"}: per period
//	                                used, held, limit (-1 unlimited), start, resets_at
//	GET    /api/chat/quota/{user}   -> the same for another user (ManageQuota)
//	PUT    /api/chat/quota/{user}   {"daily"?: n|null, "weekly"?: n|null, "monthly"?: n|null}
//	                                -> the new usage; n sets an override (-1 unlimited), null
//	                                restores the system default, an absent key is unchanged
//
// # Errors
//
// Every error is {"error": {"code", "message"}} with a status from StatusOf,
// the one mapping from assistant error codes. A thread the user may not
// read is 404, never 403. A stream refused before it starts (forbidden,
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
