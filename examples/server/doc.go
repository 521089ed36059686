// Command server is a runnable Parley host: a tiny "notes" application with an
// assistant that can list, add and delete the user's notes.
//
//	go run ./examples/server
//
// It shows the three ways a turn can stop and wait for the user:
//
//   - Approval. add_note and delete_note change data, so the model's call
//     becomes a confirm card (their dry runs word it, and a delete of a note
//     that is not the user's gets no card); the tool runs only when the user
//     clicks Apply, and the model then acknowledges the outcome. A sweeper
//     marks cards left undecided past their expiry.
//   - Forms. The model calls ask_user ("new note"; "show me a form" asks
//     one question of every type) and the page renders the form; the
//     answers arrive as the user's next message.
//   - Client-side tools. browser_time runs in the page, which posts its
//     result back ("what time is it in my browser").
//
// With no configuration it uses a built-in deterministic demo model and a
// SQLite file, ./parley.db.
//
// The notes live in the same database as the threads, in a table of the
// example's own, demo_notes (created at start if missing), so what a
// transcript says about them stays true after a restart; with the memory
// store they are in memory too. At start, each demo user who has no notes
// is given a few. Note ids are never reused, so a confirm card for a note
// that has since gone can only find nothing, never act on a newer note.
//
// Environment:
//
//	PARLEY_ADDR          listen address (default :8080)
//	PARLEY_LLM_BASE_URL  an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1
//	                     or http://localhost:11434/v1 (Ollama); switches off the demo model
//	PARLEY_LLM_API_KEY   its API key (may be empty for local servers)
//	PARLEY_LLM_MODEL     the model name (default gpt-4o-mini)
//	PARLEY_DATABASE_PATH the SQLite file (default parley.db; "" keeps everything in memory)
//	PARLEY_DATABASE_URL  postgres://user:pass@host/db switches to PostgreSQL
//	PARLEY_RETENTION_DAYS delete threads idle for longer (default -1: keep forever)
//	PARLEY_HEARTBEAT     how often a running turn checkpoints (default 5s); a reply
//	                     silent for three is marked interrupted by the sweeper
//	PARLEY_QUOTA_DAILY, PARLEY_QUOTA_WEEKLY, PARLEY_QUOTA_MONTHLY
//	                     system default token limits per user (unset: unlimited)
//
// Authentication is a demo: the X-Demo-User header names the user, "alice"
// or "bob" (role user) or "sam" (role staff); no header is 401. The page at / lets
// you pick one.
package main
