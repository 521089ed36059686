// Package assistant is Parley's engine: Engine.Stream runs one turn of a
// streaming, tool-using assistant and returns its output as blocks.
//
// # A turn
//
// Stream authorizes the user (UseAssistant), validates the message, resolves
// or creates the thread, and persists the user message and an assistant
// placeholder atomically. It then runs the turn in a worker goroutine
// detached from the caller: up to Config.MaxToolRounds model calls that may
// use tools, then a forced final call without tools. Blocks stream as they
// form; whatever happens, the worker persists the assistant message at the
// end (blocks, model messages for replay, usage, status).
//
// The cheap refusals come first: authorization, the request's shape and
// sizes, Config.MaxTurnsPerUser turns in flight, then the quota, and only
// then the guard. A guard with a model-backed second opinion
// (guard.Config.Judge, guard/modeljudge) charges that model's tokens with
// the turn when its OnUsage is ChargeGuardUsage (ExecuteTool charges them
// to its user alike). With Config.TopicScope, a message the user types is
// classified by a cheap model call before the main one, and a clearly
// off-topic one gets Config.TopicRefusal instead (FinishOffTopic); the
// filter fails open. While a turn has made no change, a sentence in which
// the model claims one ("I have deleted note 1.") is withheld and the user
// is told nothing was changed (AuditClaimWithheld). A turn's output is capped (Config.MaxTurnOutputTokens,
// MaxTurnOutputBytes: FinishLength). Cancel, a newer message or
// TurnTimeout stop a turn: the stream ends at once and the partial reply is
// stored with its final status; the model's stream is drained for usage.
//
// # How a turn is built
//
// A turn is a driver and its parts. The driver (turn.go) only passes
// values between them: begin admits the request, chooses the connection,
// sets up the tools, builds the prompt, reserves the quota, screens the
// input and makes the first write; run starts the worker, and work runs
// the loop and the final writes. Each part's fields are written only in
// its own file, by its own methods:
//
//	admit.go         admission: the validated request, the thread and its history,
//	                 what the user says (read-only once admitted; begin's only: the
//	                 worker keeps the replay and the topic filter's text)
//	edit.go          edit: what an edit or a regeneration replaces, the changes it leaves
//	continuation.go  continuation: a decision or client results, checked at admission,
//	                 carried out by resume
//	input.go         input: the guard's verdict on the text, page context and entities
//	prompt.go        prompt: the system prompt as sections, each built once
//	budget.go        the one token estimator: the reservation, the history budget,
//	                 the usage of a call the server reports none for
//	compact.go       compaction: the history within its budget, and the summary call
//	toolbox.go       toolbox: what the model may call, the gates on a call, search_tools
//	round.go         one round of tool calls: gate, execute, settle; answer, the one
//	                 path of a tool's outcome
//	actor.go         actor: the one tool-call site (argument guard, rate limit, invoke,
//	                 propose, result screening, audit), also used by ExecuteTool
//	knowledge.go     knowledge: what the thread's tool calls returned, and its gate
//	workflow.go      workflow: the optional policy (Config.Workflow) that refuses a
//	                 change on an id the thread never saw, and checks a change made
//	transcript.go    transcript: the only writer of what the turn says (blocks, model
//	                 messages, usage, finish, error, the output cap)
//	claims.go        claims: the prose held a sentence at a time while the turn has
//	                 made no change, the claims of a change withheld, and the note
//	                 that nothing was changed (Config.DisableClaimCheck)
//	conn.go          conn: the connection's settings and the one request builder
//	stream.go        stream: the one place a model is called (turns, summaries, titles,
//	                 topic verdicts)
//	topic.go         the topic filter: a cheap verdict on a typed message before
//	                 the loop, and the refusal of one off topic
//	loop.go          the agentic loop: compaction, model calls, tool rounds
//	persist.go       replyWrites: the heartbeat, the stop write and the final write
//	cancel.go        stopper: cancel, supersession and timeout; the heartbeat's
//	                 watch; the Engine's one watcher of its live turns' threads
//	quota.go         reserve, release and charge
//
// # Threads and feedback
//
// Threads lists a user's threads; Thread reads one (another user's read is
// audited); RenameThread, ArchiveThread and DeleteThread (for good) are the
// owner's. SetFeedback rates an answer, one rating per user per message,
// with a Store that implements store.FeedbackStore.
//
// A client may name its conversations (Request.CreateThread, as useChat
// does): a chat name is the user's own, stored under an id derived from
// the user and the name, so no user reaches, squats or detects another's.
// Every method that takes a thread id takes the user's chat name too.
//
// # Connections and models
//
// Config.Connections names several model connections, each with its own
// provider, allowed models (Connection.Models) and completion-settings
// allowlist (Connection.Settings); without them, Config.Provider and Model
// are the one connection. A turn's connection and model are resolved once,
// at admission: Request.Model, else the user's stored choice
// (SetModelPreference, through the optional store.Preferences) when it is
// on the same connection, else the connection's default. A request naming
// a model no connection offers is refused (CodeInvalidRequest), as
// SetModelPreference refuses one; a stored choice the connections no
// longer offer falls back to the connection's default. Completion settings
// the connection does not allow are dropped and the others clamped, so
// nothing unlisted reaches the provider. The turn's first meta
// block names the connection and the model; spend is keyed per connection.
// Models lists what a user may pick.
//
// # Tools
//
// The model is an untrusted proposer. The tools offered to it are only those
// the Authorizer allows for the user (UseTool) on the request's page; a call
// to any other tool is refused and never executed. Arguments are validated
// against the tool's schema before it runs. Read tools run automatically, in
// parallel (Config.ParallelTools at once).
//
// Mutate and Destructive tools never run when the model calls them. The
// Engine runs the tool's dry run if it has one (tools.Proposer), stores a
// proposal and streams a confirm block whose ID is a single-use token; the
// turn ends. A later Request with a Decision consumes the token atomically,
// runs the stored call once and lets the model acknowledge the result.
// Config.AutoApprove and Request.Autonomous (RunAutonomous) skip the card.
//
// Config.Workflow adds the workflow policy: resolve, read, write, verify.
// A Mutate or Destructive call may then name only objects the thread has
// seen, in the user's messages or in a successful Read tool's result: each
// id at the tool's tools.Spec.IDArgs is looked for in the thread's stored
// model messages, and a call naming any other is answered UNRESOLVED_ID
// (find the id with a read tool first) before any proposal, card or run.
// After a change succeeds, the next model call is offered only the host's
// server-side Read tools, to check it, and the one after reports it.
//
// A turn also ends when it waits on the user in other ways: ask_user shows
// a form (answered by Request.Form), and a ClientSide tool's call goes to
// the client (answered by Request.ToolResults). WaitingOn says what a
// thread waits on. With more tools than Config.LazyToolThreshold, the model
// loads them by category with search_tools.
//
// Tool results, client-side tool outputs, page context and entity text are
// data, and may carry instructions a third party planted for the model
// (indirect injection). The guard scans them as documents
// (guard.CheckDocument) before the model reads them. A High finding, a
// Block or a guard failure withholds them: the model reads a notice instead,
// for a tool result {"ok", "withheld", "tool", "categories", "hint"}, and
// the event is audited (AuditGuardToolResult, AuditGuardContext). A Medium
// finding fences them: the model reads them after a line saying they are
// untrusted data whose instructions are not to be followed, inside
// <untrusted_data tool="name"> ... </untrusted_data> for a tool result, with
// angle brackets escaped. The stored model messages keep that form, so later
// turns never replay the planted text; the user's tool_result block keeps
// the tool's summary. Config.DisableGuard turns this off with the rest.
//
// # Errors
//
// Failures are one type, *Error, whose Code is safe to show and whose cause
// is for logs. In a stream an error is a terminal blocks.Error block holding
// the code and a safe message: provider text never reaches the user. Code
// maps an error to its ErrorCode; httpapi maps codes to HTTP statuses.
//
// # Observability
//
// The Engine traces and measures through the OpenTelemetry API only
// (Config.TracerProvider and MeterProvider; nil: the otel globals), named
// by the GenAI semantic conventions: an `invoke_agent {AssistantName}` span
// per turn, a `chat {model}` span per model call and an
// `execute_tool {name}` span per tool run, with the metrics
// gen_ai.client.token.usage, gen_ai.client.operation.duration and
// gen_ai.client.operation.time_to_first_chunk, and parley.turns,
// parley.tool.calls, parley.quota.refusals, parley.guard.findings and
// parley.turn.time_to_first_block (telemetry.go). No metric attribute
// holds a user's or a thread's id. Content is on spans only with
// Config.RecordContent, as the guard redacts it. Config.Logger's lines
// inside a turn carry "turn", and "trace_id" and "span_id" while a span
// records.
//
// # Concurrency
//
// An Engine is safe for concurrent use. Each sequence Stream returns is
// single-use and must be consumed by one goroutine.
package assistant
