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
// # Models
//
// PARLEY_LLM_* configure a connection to an OpenAI-compatible server, named
// after its preset ("ollama", "openrouter", …; "openai" for a generic one),
// and PARLEY_ANTHROPIC_* one to Anthropic, named "anthropic". With both,
// the OpenAI-compatible one is the default and users may pick a model of
// either: the page shows a model picker when there is more than one model
// (assistant.Config.Connections), stores the choice as the user's
// preference and names it in each request, and each answer names the model
// that wrote it. With neither, the demo model answers alone, and no picker
// shows. Ollama, for example:
//
//	PARLEY_LLM_PRESET=ollama PARLEY_LLM_MODEL=qwen3:8b go run ./examples/server
//
// Anthropic's key is best kept in a file only you can read:
//
//	chmod 600 $HOME/.config/anthropic.key
//	PARLEY_ANTHROPIC_API_KEY_FILE=$HOME/.config/anthropic.key go run ./examples/server
//
// Each new thread is named by a short model call after its first answer
// (assistant.Config.GenerateTitles). A long thread is kept inside the
// model's context window (PARLEY_LLM_CONTEXT_WINDOW) by folding its oldest
// turns into a running summary, also written by the model. The demo model
// stands in for both calls with simple rules: its title is the first few
// words of the question that are not small words ("Launch Code TEAL-42"),
// and its summary keeps what the user stated, as "- " bullets, the newest
// 40 at most. A user message states a fact when its first line is "my X is
// Y" or starts with "remember" or "note that"; "what is my X" and "what
// did I ask you to remember" answer from the summary and the turns still
// replayed. Try PARLEY_LLM_CONTEXT_WINDOW=4096, "my launch code is
// TEAL-42", a few dozen long messages, then "what is my launch code".
//
// The notes live in the same database as the threads, in a table of the
// example's own, demo_notes (created at start if missing), so what a
// transcript says about them stays true after a restart; with the memory
// store they are in memory too. At start, each demo user who has no notes
// is given a few. Note ids are never reused, so a confirm card for a note
// that has since gone can only find nothing, never act on a newer note.
//
// Environment (a value that does not parse stops the server with a message
// naming the variable; a wrong key or model is logged at Error on the first
// call the model server refuses, naming the variable to check; an unknown
// PARLEY_* variable is logged with the closest known name). The list is
// serverVariables, and README.md's configuration table says what each
// wrong value does:
//
//	PARLEY_ADDR           listen address (default 127.0.0.1:8080, loopback only;
//	                      :8080 for every interface; 127.0.0.1:0 picks a free port; a bare
//	                      port is refused). The log names the bound address once it is bound:
//	                      "parley example listening addr=127.0.0.1:PORT url=http://127.0.0.1:PORT/"
//	PARLEY_LLM_PRESET     an OpenAI-compatible server by kind: openai, azure, vllm, ollama,
//	                      openrouter or lmstudio (the providers/openai presets: ollama and
//	                      lmstudio send the token limit as max_tokens, the only field they
//	                      read); generic (the default) needs PARLEY_LLM_BASE_URL. Either
//	                      switches off the demo model
//	PARLEY_LLM_BASE_URL   the server's endpoint, e.g. https://api.openai.com/v1 (http:// or
//	                      https:// is required); replaces the
//	                      preset's (azure has none: https://RESOURCE.openai.azure.com/openai/v1)
//	PARLEY_LLM_API_KEY    its API key (may be empty for local servers)
//	PARLEY_LLM_MODEL      the model name (default gpt-4o-mini with openai or generic; the
//	                      other presets need one: a pulled model, a deployment's name)
//	PARLEY_LLM_MODELS     the models a user may pick there, comma-separated (default: the
//	                      model alone; without PARLEY_LLM_MODEL the first is the default)
//	PARLEY_ANTHROPIC_API_KEY  an Anthropic API key: adds a connection to Anthropic
//	PARLEY_ANTHROPIC_API_KEY_FILE  or a file holding it, of mode 0600 or 0400; a file others
//	                      may read stops the server. Set one of the two, not both
//	PARLEY_ANTHROPIC_BASE_URL  a proxy or gateway in place of Anthropic's API
//	PARLEY_ANTHROPIC_MODEL, PARLEY_ANTHROPIC_MODELS  as the PARLEY_LLM ones (default
//	                      claude-sonnet-5-5)
//	PARLEY_LLM_CONTEXT_WINDOW  the model's context window in tokens (default 32768); a
//	                      thread that outgrows it has its oldest turns summarized
//	PARLEY_MODEL_FAMILY   anthropic or openai adds a calibration note for models that
//	                      follow instructions closely; generic (the default) does not
//	PARLEY_OPERATOR_ADDENDUM  site rules added to every system prompt (default none)
//	PARLEY_TITLES         on (the default): a short model call names each new thread
//	                      after its first answer, charged to the user; off: the first
//	                      words of its first message name it
//	PARLEY_DATABASE_PATH  the SQLite file (default parley.db; "" keeps everything in memory);
//	                      its directory must exist
//	PARLEY_DATABASE_URL   postgres://user:pass@host/db switches to PostgreSQL
//	PARLEY_DATABASE_MAX_CONNS  the most database connections open at once (default 16
//	                      on PostgreSQL, 8 on SQLite); past it a request waits for one
//	PARLEY_MAX_TURNS_PER_USER  turns one user may have running at once (default 0: the
//	                      Engine's default, 4; -1: no cap); another is refused with 429
//	                      too_many_turns
//	PARLEY_RETENTION_DAYS delete threads idle for longer (default -1: keep forever)
//	PARLEY_HEARTBEAT      how often a running turn checkpoints (default 5s); a reply
//	                      silent for three is marked interrupted by the sweeper
//	PARLEY_DEMO_DELAY     the demo model's pause before each streamed word (default 25ms;
//	                      0: none); the tests slow it to hold a turn open
//	PARLEY_QUOTA_DAILY, PARLEY_QUOTA_WEEKLY, PARLEY_QUOTA_MONTHLY
//	                      system default token limits per user (unset: unlimited)
//	PARLEY_MCP_TOOLS      the http:// or https:// streamable HTTP endpoint of an MCP server
//	                      whose tools the assistant may use, named ext_<tool> (default none);
//	                      an unreachable server stops the server
//	PARLEY_LOG_LEVEL      debug, info (default), warn or error
//
// Telemetry is set by the standard OpenTelemetry variables (listed in
// telemetryVariables; other OTEL_* ones, such as OTEL_SERVICE_NAME or
// OTEL_EXPORTER_OTLP_HEADERS, are read by the SDK and its exporters):
//
//	OTEL_TRACES_EXPORTER  console prints each span to stdout as JSON; otlp sends them
//	                      over OTLP/HTTP; none. Unset: otlp when
//	                      OTEL_EXPORTER_OTLP_ENDPOINT is set, else none
//	OTEL_METRICS_EXPORTER the same, for the metrics (console prints every minute, or
//	                      every OTEL_METRIC_EXPORT_INTERVAL milliseconds, and at exit)
//	OTEL_EXPORTER_OTLP_ENDPOINT  the collector, e.g. http://localhost:4318
//
// Inside a turn, each log line carries turn, trace_id and span_id.
//
// # Running it as a service
//
// The server reads request headers for at most 10s and closes idle
// connections after 2 minutes; it has no write timeout, as replies stream.
// On SIGINT or SIGTERM it stops accepting, waits up to 10s for open
// requests and then up to 10s for turns still running (their replies are
// saved even when the client has gone), and logs each step; a second
// signal exits at once. A turn cut off there is marked interrupted by the
// next start's sweep. The sweeps log at Debug when they find nothing.
//
// Authentication is a demo: the X-Demo-User header names the user, "alice"
// or "bob" (role user) or "sam" (role staff); no header is 401. The page at
// / lets you pick one. It trusts the header, so the server listens on
// loopback by default; give PARLEY_ADDR another address only where nobody
// else can reach it.
//
// The Engine's tools are served over MCP (streamable HTTP) at /mcp,
// authenticated by the same header: an MCP client sees the tools its user
// may use, and a change waits for the user's approval (the client's
// elicitation, else a confirm card in a new conversation on the page).
package main
