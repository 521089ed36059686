package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/guard"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/tools"
)

// The Engine's traces and metrics, through the OpenTelemetry API only (the
// host brings the SDK), named by the GenAI semantic conventions (v1.41):
//
//   - a turn is an `invoke_agent {AssistantName}` span, from the first
//     check to the final write (Engine.Stream starts it, the turn's worker
//     ends it; a refused turn ends it at once);
//   - each model call is a `chat {model}` span under it, made at the one
//     model-call site (conn.stream);
//   - each tool execution (and a Proposer's dry run) is an
//     `execute_tool {name}` span, made at the one tool-call site
//     (actor.invoke, actor.propose).
//
// Metric attributes never hold a user's or a thread's id: their
// cardinality would grow with the users. Spans do hold them.
// Message content is on the spans only with Config.RecordContent, and then
// as the guard redacted it.

// instrumentation names the tracer and the meter.
const instrumentation = "github.com/parleyhq/parley/assistant"

// Attribute keys of Parley's own, beside the conventions'.
const (
	attrTurnOutcome = attribute.Key("parley.turn.outcome")    // a finish reason, "error" or "refused"
	attrToolOutcome = attribute.Key("parley.tool.outcome")    // "ok", or the tool error's code
	attrTransport   = attribute.Key("parley.tool.transport")  // "chat", "client", "http", "knowledge"
	attrDryRun      = attribute.Key("parley.tool.dry_run")    // the span is a Proposer's dry run
	attrQuotaKind   = attribute.Key("parley.quota.kind")      // "tokens", "spend", "tool_rate"
	attrGuardSource = attribute.Key("parley.guard.source")    // what was scanned: the audit kind
	attrGuardCat    = attribute.Key("parley.guard.category")  // one finding's category
	attrConnection  = attribute.Key("parley.connection.name") // the Engine's name of the connection
)

// Bucket boundaries the conventions give for the GenAI histograms.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// The span kinds, as options made once: a variadic argument built per
// call would be allocated per call.
var (
	internalSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	clientSpan   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
)

// telemetry is the Engine's tracer and instruments. Its methods are safe
// for concurrent use, and on a nil *telemetry (a conn built by a test)
// they use the global providers.
type telemetry struct {
	tracer    trace.Tracer
	content   bool   // Config.RecordContent
	agent     string // Config.AssistantName: gen_ai.agent.name
	agentSpan string // "invoke_agent " + agent

	tokens     metric.Int64Histogram   // gen_ai.client.token.usage
	duration   metric.Float64Histogram // gen_ai.client.operation.duration
	firstChunk metric.Float64Histogram // gen_ai.client.operation.time_to_first_chunk
	firstBlock metric.Float64Histogram // parley.turn.time_to_first_block
	turns      metric.Int64Counter     // parley.turns
	toolCalls  metric.Int64Counter     // parley.tool.calls
	refusals   metric.Int64Counter     // parley.quota.refusals
	findings   metric.Int64Counter     // parley.guard.findings
}

// newTelemetry makes the instruments of cfg's providers (nil: the global
// ones). An instrument the SDK refuses is logged and left a no-op.
func newTelemetry(cfg *Config) *telemetry {
	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(instrumentation)
	tm := &telemetry{tracer: tp.Tracer(instrumentation), content: cfg.RecordContent, agent: cfg.AssistantName}
	tm.agentSpan = "invoke_agent " + tm.agent
	var errs []error
	note := func(err error) { errs = append(errs, err) }
	var err error
	tm.tokens, err = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	note(err)
	tm.duration, err = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	note(err)
	tm.firstChunk, err = m.Float64Histogram("gen_ai.client.operation.time_to_first_chunk", metric.WithUnit("s"),
		metric.WithDescription("Time to receive the first chunk of a model call's stream."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	note(err)
	tm.firstBlock, err = m.Float64Histogram("parley.turn.time_to_first_block", metric.WithUnit("s"),
		metric.WithDescription("Time from a turn's start to its first block the user sees."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	note(err)
	tm.turns, err = m.Int64Counter("parley.turns", metric.WithUnit("{turn}"), metric.WithDescription("Turns, by outcome."))
	note(err)
	tm.toolCalls, err = m.Int64Counter("parley.tool.calls", metric.WithUnit("{call}"), metric.WithDescription("Tool calls, by tool and outcome."))
	note(err)
	tm.refusals, err = m.Int64Counter("parley.quota.refusals", metric.WithUnit("{refusal}"), metric.WithDescription("Turns and tool calls refused by a quota, spend cap or rate limit."))
	note(err)
	tm.findings, err = m.Int64Counter("parley.guard.findings", metric.WithUnit("{finding}"), metric.WithDescription("Guard findings, by category and what was scanned."))
	note(err)
	if err := errors.Join(errs...); err != nil {
		cfg.Logger.Warn("assistant: telemetry instruments", "err", err)
	}
	return tm
}

// globalTelemetry serves a nil *telemetry.
var globalTelemetry = sync.OnceValue(func() *telemetry {
	return newTelemetry(&Config{AssistantName: DefaultAssistantName, Logger: slog.New(slog.DiscardHandler)})
})

func (tm *telemetry) orGlobal() *telemetry {
	if tm == nil {
		return globalTelemetry()
	}
	return tm
}

// providerName is a provider's gen_ai.provider.name.
func providerName(p providers.Provider) string {
	if n, ok := p.(providers.NamedProvider); ok {
		return n.ProviderName()
	}
	return "_OTHER"
}

// turnSpan is a turn's span and what its metrics need at the end.
type turnSpan struct {
	tm    *telemetry
	span  trace.Span
	start time.Time
}

// startTurn starts the span of u's turn for req: ctx, returned, carries it
// to every span and log line of the turn.
func (tm *telemetry) startTurn(ctx context.Context, u parley.User, req Request) (context.Context, *turnSpan) {
	tm = tm.orGlobal()
	ctx, span := tm.tracer.Start(ctx, tm.agentSpan, internalSpan...)
	if span.IsRecording() {
		span.SetAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(tm.agent), semconv.UserID(u.ID))
		if req.ThreadID != "" && !req.CreateThread {
			span.SetAttributes(semconv.GenAIConversationID(req.ThreadID))
		}
	}
	return ctx, &turnSpan{tm: tm, span: span, start: time.Now()}
}

// refused ends the span of a turn refused before it began (err), and
// counts it; a quota's or spend cap's refusal also as such.
func (ts *turnSpan) refused(ctx context.Context, err error) {
	code := string(Code(err))
	if ts.tm.turns.Enabled(ctx) {
		ts.tm.turns.Add(ctx, 1, metric.WithAttributes(attrTurnOutcome.String("refused"), semconv.ErrorTypeKey.String(code)))
	}
	if ts.tm.refusals.Enabled(ctx) {
		switch Code(err) {
		case CodeQuotaExceeded:
			ts.tm.refusals.Add(ctx, 1, metric.WithAttributes(attrQuotaKind.String("tokens")))
		case CodeSpendCapExceeded:
			ts.tm.refusals.Add(ctx, 1, metric.WithAttributes(attrQuotaKind.String("spend")))
		}
	}
	ts.span.SetAttributes(semconv.ErrorTypeKey.String(code), attrTurnOutcome.String("refused"))
	ts.span.SetStatus(codes.Error, code)
	ts.span.End()
}

// firstBlock records the time to the turn's first kept block.
func (ts *turnSpan) firstBlock(ctx context.Context) {
	if ts == nil {
		return
	}
	ts.tm.firstBlock.Record(ctx, time.Since(ts.start).Seconds())
}

// end ends a turn's span with what out says of it, on thread and conn,
// and records its metrics. input is the user's text as stored: the guard
// has redacted it already.
func (ts *turnSpan) end(ctx context.Context, g *guard.Guard, thread string, c *conn, out *transcript, input string) {
	if ts == nil {
		return
	}
	tm := ts.tm
	outcome, errType := out.finish, ""
	if out.err != nil {
		outcome, errType = "error", string(Code(out.err))
	}
	if outcome == "" {
		outcome = FinishStop
	}
	attrs := [4]attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent, semconv.GenAIProviderNameKey.String(providerName(c.provider)),
		semconv.GenAIRequestModel(c.model), semconv.ErrorTypeKey.String(errType)}
	n := len(attrs)
	if errType == "" {
		n-- // error.type only for an error
	}
	if tm.duration.Enabled(ctx) {
		tm.duration.Record(ctx, time.Since(ts.start).Seconds(), metric.WithAttributes(attrs[:n]...))
	}
	if tm.turns.Enabled(ctx) {
		counted := [2]attribute.KeyValue{attrTurnOutcome.String(outcome), attrs[3]}
		tm.turns.Add(ctx, 1, metric.WithAttributes(counted[:n-2]...))
	}
	span := ts.span
	if span.IsRecording() {
		span.SetAttributes(attrs[:n]...)
		span.SetAttributes(semconv.GenAIConversationID(thread), attrConnection.String(c.name),
			semconv.GenAIUsageInputTokens(int(out.usage.InputTokens)), semconv.GenAIUsageOutputTokens(int(out.usage.OutputTokens)),
			attrTurnOutcome.String(outcome))
		if out.err == nil {
			span.SetAttributes(semconv.GenAIResponseFinishReasons(outcome))
		}
		if tm.content {
			input, _ = guard.Scrub(input) // redacted by the guard already, unless it is off
			span.SetAttributes(semconv.GenAIInputMessagesKey.String(messagesJSON("user", input)),
				semconv.GenAIOutputMessagesKey.String(messagesJSON("assistant", redacted(ctx, g, out.answerText()))))
		}
		if out.err != nil {
			span.SetStatus(codes.Error, errType)
		}
	}
	span.End()
}

// chatSpan is one model call's span.
type chatSpan struct {
	tm       *telemetry
	span     trace.Span
	provider string
	model    string
	start    time.Time
	first    time.Duration // to the first event; 0: none yet
	finish   providers.FinishReason
	answered string          // the model the server says answered
	before   providers.Usage // the transcript's usage before the call
}

// begin starts the span of a call of req on c, which writes to out.
func (cs *chatSpan) begin(ctx context.Context, c *conn, req *providers.Request, out *transcript) context.Context {
	cs.tm, cs.provider, cs.model, cs.before = c.tel.orGlobal(), providerName(c.provider), req.Model, out.usage
	cs.first, cs.finish, cs.answered = 0, "", ""
	name := "chat"
	if req.Model != "" { // "": the provider's default, which it does not name
		name += " " + req.Model
	}
	ctx, cs.span = cs.tm.tracer.Start(ctx, name, clientSpan...)
	if cs.span.IsRecording() {
		cs.span.SetAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(cs.provider), attrConnection.String(c.name))
		if req.Model != "" {
			cs.span.SetAttributes(semconv.GenAIRequestModel(req.Model))
		}
		if req.MaxTokens > 0 {
			cs.span.SetAttributes(semconv.GenAIRequestMaxTokens(req.MaxTokens))
		}
		if req.Temperature != nil {
			cs.span.SetAttributes(semconv.GenAIRequestTemperature(*req.Temperature))
		}
		if req.TopP != nil {
			cs.span.SetAttributes(semconv.GenAIRequestTopP(*req.TopP))
		}
	}
	cs.start = time.Now()
	return ctx
}

// event notes one event of the call's stream.
func (cs *chatSpan) event(ev providers.Event) {
	if cs.first == 0 {
		cs.first = max(time.Since(cs.start), time.Nanosecond)
	}
	if ev.Kind == providers.FinishEvent {
		cs.finish, cs.answered = ev.Finish, ev.Model
	}
}

// end ends the call's span, with the usage it added to out, and records
// its metrics.
func (cs *chatSpan) end(ctx context.Context, out *transcript, err error) {
	in, outTok := out.usage.InputTokens-cs.before.InputTokens, out.usage.OutputTokens-cs.before.OutputTokens
	base := [3]attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(cs.provider), semconv.GenAIRequestModel(cs.model)}
	tm := cs.tm
	if (in > 0 || outTok > 0) && tm.tokens.Enabled(ctx) { // a call that never reached the model used none
		tm.tokens.Record(ctx, in, metric.WithAttributes(base[0], base[1], base[2], semconv.GenAITokenTypeInput))
		tm.tokens.Record(ctx, outTok, metric.WithAttributes(base[0], base[1], base[2], semconv.GenAITokenTypeOutput))
	}
	if cs.first > 0 && tm.firstChunk.Enabled(ctx) {
		tm.firstChunk.Record(ctx, cs.first.Seconds(), metric.WithAttributes(base[:]...))
	}
	errType := ""
	if err != nil {
		errType = string(providers.CategoryOf(err))
	}
	if tm.duration.Enabled(ctx) {
		if errType != "" {
			tm.duration.Record(ctx, time.Since(cs.start).Seconds(), metric.WithAttributes(base[0], base[1], base[2], semconv.ErrorTypeKey.String(errType)))
		} else {
			tm.duration.Record(ctx, time.Since(cs.start).Seconds(), metric.WithAttributes(base[:]...))
		}
	}
	if span := cs.span; span.IsRecording() {
		span.SetAttributes(semconv.GenAIUsageInputTokens(int(in)), semconv.GenAIUsageOutputTokens(int(outTok)))
		if cs.finish != "" {
			span.SetAttributes(semconv.GenAIResponseFinishReasons(string(cs.finish)))
		}
		if cs.answered != "" {
			span.SetAttributes(semconv.GenAIResponseModel(cs.answered))
		}
		if cs.first > 0 {
			span.SetAttributes(semconv.GenAIResponseTimeToFirstChunk(cs.first.Seconds()))
		}
		if errType != "" {
			span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			span.SetStatus(codes.Error, errType)
		}
	}
	cs.span.End()
}

// toolSpan is one tool execution's span.
type toolSpan struct {
	span trace.Span
	tm   *telemetry
}

// startTool starts the span of c's execution; dryRun: of its dry run.
// With Config.RecordContent the arguments are recorded as the guard
// redacts them.
func (tm *telemetry) startTool(ctx context.Context, g *guard.Guard, c providers.ToolCall, dryRun bool) (context.Context, toolSpan) {
	tm = tm.orGlobal()
	ctx, span := tm.tracer.Start(ctx, "execute_tool "+c.Name, internalSpan...)
	if span.IsRecording() {
		span.SetAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(c.Name), semconv.GenAIToolCallID(c.ID),
			semconv.GenAIToolType("function"))
		if dryRun {
			span.SetAttributes(attrDryRun.Bool(true))
		}
		if tm.content {
			span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(redacted(ctx, g, string(c.Args))))
		}
	}
	return ctx, toolSpan{span: span, tm: tm}
}

// end ends the span with the tool's result r, or its error err.
func (ts toolSpan) end(ctx context.Context, g *guard.Guard, r tools.Result, err error) {
	span := ts.span
	if !span.IsRecording() {
		span.End()
		return
	}
	if errType := toolErrorType(r, err); errType != "" {
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		span.SetStatus(codes.Error, errType)
	} else if ts.tm.content {
		if raw, err := json.Marshal(scrubResult(r)); err == nil {
			span.SetAttributes(semconv.GenAIToolCallResultKey.String(redacted(ctx, g, string(raw))))
		}
	}
	span.End()
}

// toolErrorType is a tool outcome's error.type: its error's code, "_OTHER"
// for a Go error without one, "" for success.
func toolErrorType(r tools.Result, err error) string {
	switch {
	case r.Error != nil:
		return string(r.Error.Code)
	case err != nil || !r.OK:
		return semconv.ErrorTypeOther.Value.AsString()
	}
	return ""
}

// toolCall counts one tool call's outcome (at its audit, which every
// outcome passes).
func (tm *telemetry) toolCall(ctx context.Context, name, transport string, r tools.Result) {
	tm = tm.orGlobal()
	if !tm.toolCalls.Enabled(ctx) {
		return
	}
	outcome := "ok"
	if r.Error != nil {
		outcome = string(r.Error.Code)
	} else if !r.OK {
		outcome = semconv.ErrorTypeOther.Value.AsString()
	}
	tm.toolCalls.Add(ctx, 1, metric.WithAttributes(semconv.GenAIToolName(name), attrToolOutcome.String(outcome), attrTransport.String(transport)))
}

// toolRateRefused counts a tool call refused by the rate limit.
func (tm *telemetry) toolRateRefused(ctx context.Context) {
	tm.orGlobal().refusals.Add(ctx, 1, metric.WithAttributes(attrQuotaKind.String("tool_rate")))
}

// guardFindings counts each category of r's findings; source is what was
// scanned (the audit kind: guard_input, guard_tool_args, ...).
func (tm *telemetry) guardFindings(ctx context.Context, source string, r guard.Result) {
	tm = tm.orGlobal()
	if len(r.Findings) == 0 || !tm.findings.Enabled(ctx) {
		return
	}
	for _, c := range r.Categories() {
		tm.findings.Add(ctx, 1, metric.WithAttributes(attrGuardSource.String(source), attrGuardCat.String(c)))
	}
}

// redacted is text as a span may record it: as the guard redacts it, with
// credentials scrubbed; what the guard blocks, or could not scan, is
// withheld whole. Without a guard, only credentials are scrubbed.
func redacted(ctx context.Context, g *guard.Guard, text string) string {
	if g != nil {
		var r guard.Result
		if json.Valid([]byte(text)) {
			r = g.CheckArgs(ctx, json.RawMessage(text)) // JSON as JSON: keys and values apart
		} else {
			r = g.Check(ctx, text)
		}
		if r.Cause != nil || r.Action >= guard.Block {
			return "[withheld by the guard]"
		}
		text = r.Redacted
	}
	if json.Valid([]byte(text)) {
		// JSON by key as well: {"authorization": "Basic ..."}.
		b, _ := guard.ScrubJSON([]byte(text))
		return string(b)
	}
	text, _ = guard.Scrub(text)
	return text
}

// messagesJSON is one message of role as the conventions' message schema
// (gen_ai.input.messages, gen_ai.output.messages) writes it.
func messagesJSON(role, text string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	raw, _ := json.Marshal([]message{{Role: role, Parts: []part{{Type: "text", Content: text}}}})
	return string(raw)
}
