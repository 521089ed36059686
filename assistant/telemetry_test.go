package assistant_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
)

// observed is an Engine's spans and metrics, in memory.
type observed struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func observe(cfg *assistant.Config) *observed {
	o := &observed{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	cfg.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(o.spans))
	cfg.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(o.reader))
	return o
}

// span is the one ended span named name.
func (o *observed) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range o.spans.Ended() {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q, want 1; spans: %v", len(found), name, o.names())
	}
	return found[0]
}

func (o *observed) names() []string {
	var names []string
	for _, s := range o.spans.Ended() {
		names = append(names, s.Name())
	}
	return names
}

// metrics collects the metrics: name -> its data points' attribute sets
// and values.
func (o *observed) metrics(t *testing.T) map[string][]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string][]point{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{p.Attributes, float64(p.Value)})
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{p.Attributes, float64(p.Sum)})
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{p.Attributes, float64(p.Count)})
				}
			}
		}
	}
	return out
}

type point struct {
	attrs attribute.Set
	value float64 // a sum's value, an int histogram's sum, a float histogram's count
}

// pointOf is the point of metric whose attributes include want.
func pointOf(t *testing.T, points []point, want ...attribute.KeyValue) (point, bool) {
	t.Helper()
	for _, p := range points {
		if slices.IndexFunc(want, func(kv attribute.KeyValue) bool { v, ok := p.attrs.Value(kv.Key); return !ok || v != kv.Value }) < 0 {
			return p, true
		}
	}
	return point{}, false
}

func attrOf(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantAttr(t *testing.T, s sdktrace.ReadOnlySpan, key, want string) {
	t.Helper()
	v, ok := attrOf(s, key)
	if !ok || v.Emit() != want {
		t.Errorf("span %q: %s = %q (set %v), want %q", s.Name(), key, v.Emit(), ok, want)
	}
}

// A turn with a tool call is an invoke_agent span holding two chat spans and
// an execute_tool span, attributed by the GenAI conventions; the metrics
// count its tokens, its duration, its outcome and the tool call's.
func TestTelemetryTurnWithToolCall(t *testing.T) {
	var o *observed
	p := fake.New(
		fake.Turn{fake.CallTool("c1", "get_weather", `{"city":"Oslo"}`), fake.Usage(100, 10)},
		fake.Turn{fake.Text("Sunny in Oslo."), fake.Usage(150, 5)},
	)
	h := newHarness(t, p, func(c *assistant.Config) { c.Model = "m-1"; o = observe(c) })
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "weather in Oslo?"})
	if err != nil {
		t.Fatal(err)
	}

	turn := o.span(t, "invoke_agent Assistant")
	wantAttr(t, turn, "gen_ai.operation.name", "invoke_agent")
	wantAttr(t, turn, "gen_ai.agent.name", "Assistant")
	wantAttr(t, turn, "gen_ai.provider.name", "_OTHER") // the fake provider names no service
	wantAttr(t, turn, "gen_ai.request.model", "m-1")
	wantAttr(t, turn, "gen_ai.conversation.id", reply.ThreadID)
	wantAttr(t, turn, "gen_ai.usage.input_tokens", "250")
	wantAttr(t, turn, "gen_ai.usage.output_tokens", "15")
	wantAttr(t, turn, "gen_ai.response.finish_reasons", `["stop"]`)
	if turn.Status().Code == codes.Error {
		t.Errorf("turn span status %v, want not an error", turn.Status())
	}

	var chats []sdktrace.ReadOnlySpan
	for _, s := range o.spans.Ended() {
		if s.Name() == "chat m-1" {
			chats = append(chats, s)
		}
	}
	if len(chats) != 2 {
		t.Fatalf("chat spans: %v, want two named %q", o.names(), "chat m-1")
	}
	wantAttr(t, chats[0], "gen_ai.operation.name", "chat")
	wantAttr(t, chats[0], "gen_ai.request.model", "m-1")
	wantAttr(t, chats[0], "gen_ai.usage.input_tokens", "100")
	wantAttr(t, chats[0], "gen_ai.usage.output_tokens", "10")
	wantAttr(t, chats[0], "gen_ai.response.finish_reasons", `["tool_calls"]`)
	wantAttr(t, chats[1], "gen_ai.response.finish_reasons", `["stop"]`)

	tool := o.span(t, "execute_tool get_weather")
	wantAttr(t, tool, "gen_ai.operation.name", "execute_tool")
	wantAttr(t, tool, "gen_ai.tool.name", "get_weather")
	wantAttr(t, tool, "gen_ai.tool.call.id", "c1")
	for _, s := range append(chats, tool) {
		if s.Parent().SpanID() != turn.SpanContext().SpanID() || s.SpanContext().TraceID() != turn.SpanContext().TraceID() {
			t.Errorf("span %q is not a child of the turn's span", s.Name())
		}
	}
	// No content by default.
	for _, s := range o.spans.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "Oslo") {
				t.Errorf("span %q records content by default: %s = %s", s.Name(), kv.Key, kv.Value.Emit())
			}
		}
	}

	m := o.metrics(t)
	chat := []attribute.KeyValue{attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "m-1")}
	if pt, ok := pointOf(t, m["gen_ai.client.token.usage"], append(chat, attribute.String("gen_ai.token.type", "input"))...); !ok || pt.value != 250 {
		t.Errorf("gen_ai.client.token.usage input: %v %v, want sum 250", pt, ok)
	}
	if pt, ok := pointOf(t, m["gen_ai.client.token.usage"], append(chat, attribute.String("gen_ai.token.type", "output"))...); !ok || pt.value != 15 {
		t.Errorf("gen_ai.client.token.usage output: %v %v, want sum 15", pt, ok)
	}
	if pt, ok := pointOf(t, m["gen_ai.client.operation.duration"], chat...); !ok || pt.value != 2 {
		t.Errorf("gen_ai.client.operation.duration of chat: %v %v, want 2 calls", pt, ok)
	}
	if pt, ok := pointOf(t, m["gen_ai.client.operation.time_to_first_chunk"], chat...); !ok || pt.value != 2 {
		t.Errorf("gen_ai.client.operation.time_to_first_chunk: %v %v, want 2 calls", pt, ok)
	}
	if _, ok := pointOf(t, m["gen_ai.client.operation.duration"], attribute.String("gen_ai.operation.name", "invoke_agent")); !ok {
		t.Errorf("no gen_ai.client.operation.duration for the turn")
	}
	if pt, ok := pointOf(t, m["parley.turns"], attribute.String("parley.turn.outcome", "stop")); !ok || pt.value != 1 {
		t.Errorf("parley.turns: %v, want one stop", m["parley.turns"])
	}
	if pt, ok := pointOf(t, m["parley.tool.calls"], attribute.String("gen_ai.tool.name", "get_weather"), attribute.String("parley.tool.outcome", "ok"),
		attribute.String("parley.tool.transport", "chat")); !ok || pt.value != 1 {
		t.Errorf("parley.tool.calls: %v, want one ok get_weather", m["parley.tool.calls"])
	}
	if len(m["parley.turn.time_to_first_block"]) != 1 {
		t.Errorf("parley.turn.time_to_first_block: %v, want one point", m["parley.turn.time_to_first_block"])
	}
	noIDs(t, m, reply.ThreadID)
}

// noIDs fails if any metric attribute holds a user's or thread's id.
func noIDs(t *testing.T, m map[string][]point, ids ...string) {
	t.Helper()
	ids = append(ids, alice.ID, bob.ID, sam.ID)
	for name, points := range m {
		for _, p := range points {
			for _, kv := range p.attrs.ToSlice() {
				if strings.Contains(string(kv.Key), "user") || strings.Contains(string(kv.Key), "conversation") || strings.Contains(string(kv.Key), "thread") {
					t.Errorf("metric %s has attribute %s", name, kv.Key)
				}
				if slices.Contains(ids, kv.Value.Emit()) {
					t.Errorf("metric %s: %s = %q, a user's or thread's id", name, kv.Key, kv.Value.Emit())
				}
			}
		}
	}
}

// A model call that fails marks its chat span, the turn's span and the
// duration metrics with error.type.
func TestTelemetryModelErrorHasErrorType(t *testing.T) {
	var o *observed
	p := fake.New(fake.Turn{fake.Fail(&providers.Error{Category: providers.CategoryAuth, Err: errors.New("401 bad key")})})
	h := newHarness(t, p, func(c *assistant.Config) { c.Model = "m-1"; c.ModelRetries = -1; o = observe(c) })
	_, _, err := h.collect(t, alice, assistant.Request{Message: "hello"})
	if !errors.Is(err, assistant.ErrModelUnavailable) {
		t.Fatalf("err = %v, want ErrModelUnavailable", err)
	}
	chat := o.span(t, "chat m-1")
	wantAttr(t, chat, "error.type", string(providers.CategoryAuth))
	if chat.Status().Code != codes.Error {
		t.Errorf("chat span status %v, want Error", chat.Status())
	}
	turn := o.span(t, "invoke_agent Assistant")
	wantAttr(t, turn, "error.type", string(assistant.CodeModelUnavailable))
	wantAttr(t, turn, "parley.turn.outcome", "error")
	if turn.Status().Code != codes.Error {
		t.Errorf("turn span status %v, want Error", turn.Status())
	}
	m := o.metrics(t)
	if _, ok := pointOf(t, m["gen_ai.client.operation.duration"], attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("error.type", string(providers.CategoryAuth))); !ok {
		t.Errorf("no chat duration with error.type: %v", m["gen_ai.client.operation.duration"])
	}
	if _, ok := pointOf(t, m["parley.turns"], attribute.String("parley.turn.outcome", "error"), attribute.String("error.type", "model_unavailable")); !ok {
		t.Errorf("parley.turns: %v, want an error outcome", m["parley.turns"])
	}
	noIDs(t, m)
}

// A tool that fails marks its execute_tool span with the tool error's code,
// and the log line about it names the turn, the thread, the tool and the
// trace and span of the tool's execution.
func TestTelemetryToolErrorHasErrorType(t *testing.T) {
	var o *observed
	var logs bytes.Buffer
	p := fake.New(
		fake.Turn{fake.CallTool("c1", "explode", `{}`)},
		fake.Turn{fake.Text("It failed.")},
	)
	h := newHarness(t, p, func(c *assistant.Config) {
		o = observe(c)
		c.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	})
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "explode"})
	if err != nil {
		t.Fatal(err)
	}
	tool := o.span(t, "execute_tool explode")
	var line map[string]any
	for l := range strings.Lines(logs.String()) {
		if strings.Contains(l, "assistant: tool failed") {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	for key, want := range map[string]string{
		"turn": reply.MessageID, "thread": reply.ThreadID, "tool": "explode",
		"trace_id": tool.SpanContext().TraceID().String(), "span_id": tool.SpanContext().SpanID().String(),
	} {
		if line[key] != want {
			t.Errorf("log line %v: %s = %v, want %q", line, key, line[key], want)
		}
	}
	wantAttr(t, tool, "error.type", "INTERNAL")
	if tool.Status().Code != codes.Error {
		t.Errorf("tool span status %v, want Error", tool.Status())
	}
	m := o.metrics(t)
	if _, ok := pointOf(t, m["parley.tool.calls"], attribute.String("gen_ai.tool.name", "explode"), attribute.String("parley.tool.outcome", "INTERNAL")); !ok {
		t.Errorf("parley.tool.calls: %v, want explode INTERNAL", m["parley.tool.calls"])
	}
}

// A turn refused by the quota is a turn span with error.type, counted as a
// refused turn and a quota refusal, with no user in the metrics.
func TestTelemetryQuotaRefusal(t *testing.T) {
	var o *observed
	ledger, err := memquota.New(quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(100)}})
	if err != nil {
		t.Fatal(err)
	}
	// The day's allowance is used up.
	hold, err := ledger.Reserve(context.Background(), alice.ID, 100, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := ledger.Settle(context.Background(), hold, 100); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, fake.New(fake.Turn{fake.Text("never")}), func(c *assistant.Config) { c.Ledger = ledger; o = observe(c) })
	_, _, err = h.collect(t, alice, assistant.Request{Message: "hello there, a long message"})
	if !errors.Is(err, assistant.ErrQuotaExceeded) {
		t.Fatalf("err = %v, want ErrQuotaExceeded", err)
	}
	turn := o.span(t, "invoke_agent Assistant")
	wantAttr(t, turn, "error.type", "quota_exceeded")
	m := o.metrics(t)
	if pt, ok := pointOf(t, m["parley.quota.refusals"], attribute.String("parley.quota.kind", "tokens")); !ok || pt.value != 1 {
		t.Errorf("parley.quota.refusals: %v, want one tokens refusal", m["parley.quota.refusals"])
	}
	if _, ok := pointOf(t, m["parley.turns"], attribute.String("parley.turn.outcome", "refused"), attribute.String("error.type", "quota_exceeded")); !ok {
		t.Errorf("parley.turns: %v, want a refused turn", m["parley.turns"])
	}
	noIDs(t, m)
}

// Guard findings are counted by category and source; the card number the
// guard redacts never reaches a span, and with RecordContent the message
// is recorded as redacted.
func TestTelemetryContentIsRedacted(t *testing.T) {
	for _, record := range []bool{false, true} {
		t.Run(fmt.Sprint("RecordContent=", record), func(t *testing.T) {
			var o *observed
			p := fake.New(
				fake.Turn{fake.CallTool("c1", "get_weather", `{"city":"Oslo 4111 1111 1111 1111"}`)},
				fake.Turn{fake.Text("Your card 4111 1111 1111 1111 is noted; sunny.")},
			)
			h := newHarness(t, p, func(c *assistant.Config) { c.RecordContent = record; o = observe(c) })
			if _, _, err := h.collect(t, alice, assistant.Request{Message: "pay with card 4111 1111 1111 1111 please"}); err != nil {
				t.Fatal(err)
			}
			for _, s := range o.spans.Ended() {
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.Emit(), "4111 1111") {
						t.Errorf("span %q: %s holds the card number: %s", s.Name(), kv.Key, kv.Value.Emit())
					}
				}
			}
			turn := o.span(t, "invoke_agent Assistant")
			in, ok := attrOf(turn, "gen_ai.input.messages")
			if ok != record {
				t.Fatalf("gen_ai.input.messages set %v, want %v", ok, record)
			}
			if record {
				if !strings.Contains(in.Emit(), "pay with card [CARD_REDACTED] please") {
					t.Errorf("gen_ai.input.messages = %s, want the redacted message", in.Emit())
				}
				if out, _ := attrOf(turn, "gen_ai.output.messages"); !strings.Contains(out.Emit(), "is noted; sunny") {
					t.Errorf("gen_ai.output.messages = %s, want the answer", out.Emit())
				}
				tool := o.span(t, "execute_tool get_weather")
				if args, _ := attrOf(tool, "gen_ai.tool.call.arguments"); !strings.Contains(args.Emit(), "Oslo") {
					t.Errorf("gen_ai.tool.call.arguments = %s, want the redacted arguments", args.Emit())
				}
				if res, _ := attrOf(tool, "gen_ai.tool.call.result"); !strings.Contains(res.Emit(), "sunny") {
					t.Errorf("gen_ai.tool.call.result = %s, want the result", res.Emit())
				}
			}
			m := o.metrics(t)
			if _, ok := pointOf(t, m["parley.guard.findings"], attribute.String("parley.guard.source", assistant.AuditGuardInput)); !ok {
				t.Errorf("parley.guard.findings: %v, want the input's finding", m["parley.guard.findings"])
			}
			noIDs(t, m)
		})
	}
}

// BenchmarkTurnWithSDK is BenchmarkTurn with the SDK's in-memory span
// recorder and ManualReader installed: every span records.
func BenchmarkTurnWithSDK(b *testing.B) {
	benchTurn(b, func(c *assistant.Config) { observe(c) })
}

// ExecuteTool goes through the one tool-call site: its run is an
// execute_tool span, counted with transport http; a call over the tool
// rate is counted as a quota refusal of kind tool_rate.
func TestTelemetryExecuteToolAndToolRate(t *testing.T) {
	var o *observed
	h := newHarness(t, fake.New(), func(c *assistant.Config) {
		o = observe(c)
		c.RateLimiter = &memquota.RateLimiter{}
		c.ToolRate = quota.Rate{Calls: 1, Per: time.Minute}
	})
	for range 2 {
		if _, err := h.eng.ExecuteTool(context.Background(), alice, assistant.ExecuteRequest{Tool: "get_weather", Args: []byte(`{"city":"Oslo"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	tool := o.span(t, "execute_tool get_weather") // the second call never ran
	wantAttr(t, tool, "gen_ai.tool.call.id", "http_get_weather")
	m := o.metrics(t)
	if pt, ok := pointOf(t, m["parley.tool.calls"], attribute.String("gen_ai.tool.name", "get_weather"), attribute.String("parley.tool.outcome", "ok"),
		attribute.String("parley.tool.transport", "http")); !ok || pt.value != 1 {
		t.Errorf("parley.tool.calls: %v, want one ok over http", m["parley.tool.calls"])
	}
	if _, ok := pointOf(t, m["parley.tool.calls"], attribute.String("parley.tool.outcome", "RATE_LIMITED")); !ok {
		t.Errorf("parley.tool.calls: %v, want one RATE_LIMITED", m["parley.tool.calls"])
	}
	if pt, ok := pointOf(t, m["parley.quota.refusals"], attribute.String("parley.quota.kind", "tool_rate")); !ok || pt.value != 1 {
		t.Errorf("parley.quota.refusals: %v, want one tool_rate", m["parley.quota.refusals"])
	}
	noIDs(t, m)
}

// A program's call of a change is dry run before its user is asked: the
// dry run is an execute_tool span marked dry_run, then the approved run is
// another.
func TestTelemetryConsentDryRunHasASpan(t *testing.T) {
	var o *observed
	h := newHarness(t, fake.New(), func(c *assistant.Config) { o = observe(c) })
	approve := func(context.Context, assistant.Confirmation) assistant.Consent { return assistant.Approved }
	if r, err := h.eng.ExecuteTool(context.Background(), alice, assistant.ExecuteRequest{Tool: "add_note", Transport: "mcp", Confirm: approve}); err != nil || !r.OK {
		t.Fatalf("ExecuteTool: %+v, %v", r, err)
	}
	var dry, run int
	for _, s := range o.spans.Ended() {
		if s.Name() != "execute_tool add_note" {
			continue
		}
		if v, ok := attrOf(s, "parley.tool.dry_run"); ok && v.AsBool() {
			dry++
		} else {
			run++
		}
	}
	if dry != 1 || run != 1 {
		t.Fatalf("execute_tool add_note spans: %d dry runs and %d runs, want one of each (%v)", dry, run, o.names())
	}
}
