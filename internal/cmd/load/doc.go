// Command load drives the example server (examples/server) with real HTTP
// traffic and reports what the server got wrong: errors, lost messages,
// replies stored differently from what streamed, time to first byte and
// peak memory. It is a measuring tool, opt-in and bounded: it only ever
// connects to 127.0.0.1, every request has a timeout and the whole run has
// one (-timeout).
//
//	go run ./internal/cmd/load [-scenario turns] [-concurrency 200] [-rounds 5]
//	go run ./internal/cmd/load -postgres 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./internal/cmd/load -scenario bigbody [-field args]
//	go run ./internal/cmd/load -scenario endless
//
// It builds the server once (go build ./examples/server, from the module
// that holds the working directory) into a temporary directory and runs it
// as a child process on a free 127.0.0.1 port, with a fresh SQLite file in
// that directory or, with -postgres, a fresh PostgreSQL database named
// parley_load_<random> that is created through the given DSN and dropped at
// the end. PARLEY_* variables of the caller's environment are not passed
// on, so a configured real model is never called. The child is stopped
// (SIGTERM, then SIGKILL) at the end of the run and on Ctrl-C.
//
// The server's peak RSS is its VmHWM from /proc/<pid>/status (Linux only;
// "n/a" elsewhere). Its log is scanned, once it has stopped, for ERROR and
// WARN lines, and with -race for the race detector's reports.
//
// # Scenarios
//
// turns (the default) reproduces many users chatting at once. Each of
// -concurrency workers keeps one thread and sends -rounds messages in it,
// one after another, to POST /api/chat/stream (the first without a
// thread_id, which the first meta block names), reading every stream to
// its end. Workers take the demo users in turn. When all are done it reads
// every thread back (GET /api/chat/threads/{id}) and checks that each user
// message that was answered with a stream is stored, and that each reply
// is stored with the status the stream ended with (complete, or failed
// after an error block) and the same text the client saw: the content of
// its markdown, code and mermaid blocks, in order. It also counts stored
// replies that no client saw (placeholders of refused turns). Time to
// first byte runs from sending the request to the first NDJSON line (the
// turn's meta block); time to first text, to its first markdown or code
// block. The server runs with no per-user cap on turns in flight
// (PARLEY_MAX_TURNS_PER_USER=-1) unless -per-user-cap is given.
//
// bigbody sends -concurrency (default 100) POST /api/chat/stream requests
// at once, each carrying a page_context of -body-bytes, or with -field args
// as many POST /api/chat/tools/list_notes/execute requests carrying tool
// arguments of that size. It reports the answers by status and code (for
// execute, a 200 carrying a tool error is counted with the tool's code) and
// the server's peak RSS before and after. A body over the server's limit
// is refused with 413 before it is read; lower -body-bytes to measure what
// a large field inside the limit costs.
//
// endless points the server at a local OpenAI-compatible model
// (PARLEY_LLM_BASE_URL) whose answer never ends on its own: it streams
// content deltas with no usage until the server hangs up, or until
// -endless-for or -endless-bytes is reached, when it finishes with
// finish_reason "stop". One message is sent; the report gives the bytes
// streamed to the client, the finish reason of the final meta block
// ("length" means the server cut the turn itself), the time, the server's
// peak RSS, and the stored reply's size and status.
//
// # Flags
//
//	-scenario turns|bigbody|endless   what to run (default turns)
//	-concurrency N    parallel workers (default 200 for turns, 100 for bigbody)
//	-rounds N         messages per worker in turns (default 5)
//	-users LIST       demo users, comma-separated (default alice,bob,sam); a user
//	                  the server answers 401 for is left out, with a note
//	-postgres DSN     use PostgreSQL: a postgres:// URL whose host is 127.0.0.1,
//	                  localhost or ::1; the user must be allowed to create databases
//	-max-conns N      PARLEY_DATABASE_MAX_CONNS for the server (default: unset)
//	-per-user-cap N   PARLEY_MAX_TURNS_PER_USER for the server (default: -1 for
//	                  turns, unset for the other scenarios)
//	-field page_context|args   what bigbody makes large (default page_context)
//	-body-bytes N     bigbody's field size (default 1 MiB less 512 bytes: a body
//	                  just under 1 MiB)
//	-endless-for D    endless: how long the model streams at most (default 30s)
//	-endless-bytes N  endless: how much content it streams at most (default 256 MiB)
//	-request-timeout D  bound on each request (default 2m; endless adds -endless-for)
//	-timeout D        bound on the whole run, build included (default 5m)
//	-keep             keep the temporary directory (server binary, log, SQLite
//	                  file) and the PostgreSQL database, and print where they are
//	-race             build the server with the race detector (go build -race):
//	                  its reports in the server's log are counted in the "data
//	                  races" row (the server runs on; its RSS is the race
//	                  detector's too)
//
// # Output and exit status
//
// A plain two-column table on standard output; progress goes to standard
// error. The exit status is 0 when the run completed, whatever it found,
// 1 when it could not be set up (build, database, server start), and 2 when
// it was cut short by -timeout or a signal (the figures then are partial).
package main
