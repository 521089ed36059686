// Command bench measures what Parley's Engine costs on top of the model
// client it wraps. It runs an OpenAI-compatible mock server in a child
// process (so the server's CPU is not counted), then drives the same
// scripted turn two ways against it:
//
//   - raw: the openai-go client streaming the three responses of a turn by
//     hand (text appended, tool-call arguments assembled by index), as a host
//     would without Parley;
//   - engine: a full turn through assistant.Engine.Stream with the openai
//     provider, memstore and two Read tools, every block encoded as NDJSON.
//
// A turn is two tool rounds and a final answer of 200 text deltas. It
// reports CPU time and allocations per turn, their ratio, and how long the
// first block takes to reach the consumer after the provider yields the
// first text delta, and after it yields the delta that completed the
// block's text: the claim check holds prose back until its sentence ends,
// so the second is the Engine's own hand-off (-claims=false: the same).
//
//	go run ./internal/cmd/bench [-turns 300] [-c 1]
//
// With -c N, N turns are in flight at once on each side (N workers, each
// worker its own user on the Engine side, as MaxTurnsPerUser caps one
// user's turns); the sides still alternate in batches, of at least two
// turns per worker (so at most -turns/(2N), and at most 10, batches). It
// reports the same figures; wall time per turn is then the batch's wall
// time over its turns. The mock answers a request by how many tool
// results it carries, so overlapping turns each get their three responses.
//
// With -parked it measures turns that stay in flight: -c turns on each side
// (default 1; issue 27 uses 100), each two tool rounds and then an answer
// from a slow model, a text delta every -every (300ms) for -hold plus
// -margin (15s; the turns must still be parked once all are in flight,
// which takes 15-20 s at 10,000 on a 2-core machine: the bench says when
// a turn ended too soon).
// Each side runs in a child process of its own, so one side's freed memory
// cannot hide the other's. Once every turn has had a text delta it
// prints, per in-flight turn, the heap (the live heap a collection marked,
// runtime/metrics' /gc/heap/live:bytes, with the pool's idle connections
// closed first: they belong to no parked turn, and how many the tool
// rounds leave varies from run to run; HeapAlloc read after the
// collection would also count the garbage the streaming turns make in
// the meantime) and the RSS (VmRSS of /proc/self/status after
// debug.FreeOSMemory) over the baseline taken before the turns, at that
// moment and again after -hold (20s): growth between the two is memory a
// parked turn gains while it streams. It prints the goroutines per turn
// (runtime.NumGoroutine over the baseline, over -c) and, after every turn
// ended and the idle connections were closed, whether the count came back
// to the baseline within 30 s. With -heapprofile F it also writes each
// side's heap profiles at the three points, every allocation sampled
// (F.engine.base, F.engine, F.engine.end): go tool pprof -diff_base
// F.engine.base F.engine shows what the parked turns hold.
//
// With -pg DSN the Engine uses store/sqlstore on that PostgreSQL (tables in
// a schema of their own, dropped at the end; at most 20 connections, plus
// the watcher's; default memstore), and both
// sides print the database's transactions per second from pg_stat_database
// (xact_commit + xact_rollback of the DSN's database) over 5 s before the
// turns and over the hold; the difference over -c is the transactions per
// parked turn per second. The raw side, which uses no database, shows what
// other clients of that database add.
//
//	go run ./internal/cmd/bench -parked -c 100 [-pg postgres://...] [-hold 20s] [-every 300ms]
//
// With -thread N it measures something else: what a thread of N turns
// sends the model, with compaction at -window tokens and without it, on
// real prose from -corpus (a JSONL file of {"text"} rows; by default the
// benign prompts of ../shared/guardcorpus). Each turn calls a Read tool
// returning about 6 KB and answers; it prints the prompt's input tokens
// at turns 1, 12, 30 and 60, the largest prompt and the summary calls' cost.
//
//	go run ./internal/cmd/bench -thread 60 [-window 32768]
package main
