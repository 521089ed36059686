// Package tools defines what the model may call: a [BaseTool] is a [Spec]
// (name, description, argument schema, effect) and an Execute method that
// returns a [Result] envelope. A [Registry] — usually a [Set] — holds the
// tools an Engine offers, and [Invoke] is the one way they run.
//
// # Writing a tool
//
// Most tools are typed: describe the arguments as a Go struct and let [New]
// derive the schema, validate every call against it and decode the
// arguments before the handler runs.
//
//	type forecastArgs struct {
//		City string `json:"city" jsonschema:"city name, e.g. Lisbon"`
//		Days int    `json:"days,omitempty" jsonschema:"1 to 14; default 3"`
//	}
//
//	forecast := tools.Must(tools.New(tools.Spec{
//		Name:        "get_forecast",
//		Description: "Weather forecast for a city.",
//	}, func(ctx context.Context, call tools.Call, in forecastArgs) (tools.Result, error) {
//		f, err := weather.Forecast(ctx, in.City, in.Days)
//		if errors.Is(err, weather.ErrUnknownCity) {
//			return tools.Errorf(tools.CodeNotFound, "no city named %q", in.City), nil
//		}
//		if err != nil {
//			return tools.Result{}, err // logged; the model sees "the tool failed"
//		}
//		return tools.OK(fmt.Sprintf("%d-day forecast for %s", len(f), in.City), f), nil
//	}))
//	reg, err := tools.NewSet(forecast, otherTool)
//
// A tool may also implement [BaseTool] by hand, with its own InputSchema;
// [NewSet] compiles that schema once and [Invoke] validates calls against
// it all the same. Summary is one line for the model and the tool_result
// block; Data is the JSON payload the model reads; UI is an optional block
// shown to the user and never sent to the model.
//
// # Typed tools
//
// [New] infers Spec.InputSchema from the input type when it is nil (see
// [SchemaFor]): a struct's fields are named by their json tags and
// described by their jsonschema tags, fields without omitempty or omitzero
// are required, and unknown properties are refused. Use struct{} for a tool
// without arguments. To constrain values beyond what a Go type says (ranges,
// enums, patterns), set InputSchema yourself — [SchemaFor] gives a starting
// point — and keep In as the type the arguments decode into. The schema is
// compiled once, in New.
//
// # Effects and approval
//
// Spec.Effect says what a call does to the world. [Read] tools (the default)
// run as soon as the model calls them. [Mutate] and [Destructive] tools
// never run on the model's say-so: the Engine turns the call into a proposal
// that a human confirms, and only then runs it with Call.Approved set.
// Declare the strongest effect a tool can have; the gate is enforced in Go,
// whatever the model is told.
//
// Spec.IDArgs names the arguments that hold ids of the host's objects
// ("note_id", or a JSON Pointer such as "/target/id"); [IDsAt] reads them.
// With the Engine's workflow policy on, a Mutate or Destructive call may
// only name ids the conversation has already seen, and is otherwise
// answered UNRESOLVED_ID before any proposal.
//
// # Errors
//
// A tool reports expected failures — not found, wrong state, bad input the
// schema could not catch — as a failed Result: [Fail], [Errorf], optionally
// [Result.WithHint] or [Result.WithRetry]. The model reads the code and
// message and can recover. Messages must be safe to show a user.
//
// A returned error, or a panic, means a bug or an outage: [Invoke] returns
// it for the log and gives the model INTERNAL "the tool failed", without
// details. Arguments that
// are not valid JSON or break the schema never reach the tool: the model
// gets INVALID_ARGS with a message naming each field, such as
// `"city": missing required property; "days": must be <= 14`, and the error
// wraps [ErrInvalidArgs]. A call whose context deadline passes gets TIMEOUT.
// [MarshalForModel] renders the envelope the model reads.
//
// Construction errors wrap [ErrInvalidSpec] or [ErrDuplicate]; test them
// with errors.Is. The tools/toolstest package runs a tool with a fake call
// and asserts on its Result.
//
// # Concurrency
//
// Execute must be safe for concurrent use: the Engine runs Read calls of
// one round in parallel, and many turns share a tool. A typed tool's
// handler gets its own decoded In on every call. [Set] is immutable after
// [NewSet] and safe for concurrent use, and so is [Invoke]. Execute must
// honour ctx; Invoke stops waiting when ctx is done, and a tool that keeps
// running after that has its result discarded.
package tools
