package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers"
)

// Bounds for "promptly": generous, because they only catch hangs, and the
// suite runs under -race on loaded CI machines.
const (
	callTimeout = 10 * time.Second
	promptly    = 5 * time.Second
)

// Run runs the conformance suite against the providers h makes. Each
// subtest makes a fresh provider.
func Run(t *testing.T, h Harness) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"TextStreamsInOrderThenUsageThenFinishStop", testText},
		{"ReasoningStreamsBeforeText", testReasoning},
		{"ParallelToolCallsArriveAssembledInOrder", testParallelToolCalls},
		{"RequestReachesModelIntact", testRequestRoundTrip},
		{"Status401IsErrAuth", statusTest(401, 0, providers.ErrAuth)},
		{"Status404IsErrNotFound", statusTest(404, 0, providers.ErrNotFound)},
		{"Status429IsErrRateLimitWithRetryAfter", statusTest(429, 7*time.Second, providers.ErrRateLimit)},
		{"Status500IsErrUnavailable", statusTest(500, 0, providers.ErrUnavailable)},
		{"DroppedStreamDeliversTextThenErrConnection", faultTest(FaultDrop)},
		{"MalformedChunkIsErrConnection", faultTest(FaultMalformed)},
		{"CanceledContextEndsStreamWithErrCanceled", testCanceled},
		{"ExpiredDeadlineEndsStreamWithErrTimeout", testDeadline},
		{"BreakingEarlyReturnsPromptlyAndLeaksNoGoroutine", testBreakEarly},
		{"ConcurrentStreamsAreIndependent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, h) })
	}
}

// result is a whole stream, consumed.
type result struct {
	events []providers.Event
	err    error
}

func (r result) text(kind providers.EventKind) string {
	var b strings.Builder
	for _, e := range r.events {
		if e.Kind == kind {
			b.WriteString(e.Text)
		}
	}
	return b.String()
}

func (r result) kinds(kind providers.EventKind) []providers.Event {
	var out []providers.Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// collect consumes seq, checking the element contract: events come with a
// nil error, an error comes with a zero Event and is the last element.
func collect(t *testing.T, seq iter.Seq2[providers.Event, error]) result {
	t.Helper()
	var r result
	for ev, err := range seq {
		if r.err != nil {
			t.Errorf("element after the error %v: %+v, %v", r.err, ev, err)
			continue
		}
		if err != nil {
			if ev.Kind != 0 {
				t.Errorf("error %v came with a non-zero event %+v", err, ev)
			}
			r.err = err
			continue
		}
		if ev.Kind < providers.TextDelta || ev.Kind > providers.FinishEvent {
			t.Errorf("event of unknown kind %d", ev.Kind)
		}
		r.events = append(r.events, ev)
	}
	return r
}

func stream(t *testing.T, p providers.Provider, req *providers.Request) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	return collect(t, p.Stream(ctx, req))
}

func simpleRequest() *providers.Request {
	return &providers.Request{
		Model:    "test-model",
		Messages: []providers.Message{{Role: providers.User, Content: "Say hello."}},
	}
}

// checkFinishedCleanly asserts the tail every successful stream has: exactly
// one Usage equal to want, then exactly one Finish with reason, last.
func checkFinishedCleanly(t *testing.T, r result, want providers.Usage, reason providers.FinishReason) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("stream failed: %v", r.err)
	}
	if n := len(r.events); n == 0 || r.events[n-1].Kind != providers.FinishEvent {
		t.Fatalf("last event is not a Finish: %+v", r.events)
	}
	if fs := r.kinds(providers.FinishEvent); len(fs) != 1 {
		t.Errorf("got %d Finish events, want 1", len(fs))
	}
	if got := r.events[len(r.events)-1].Finish; got != reason {
		t.Errorf("finish reason = %q, want %q", got, reason)
	}
	us := r.kinds(providers.UsageEvent)
	if len(us) != 1 {
		t.Fatalf("got %d Usage events, want 1", len(us))
	}
	if us[0].Usage != want {
		t.Errorf("usage = %+v, want %+v", us[0].Usage, want)
	}
}

func testText(t *testing.T, h Harness) {
	s := Scenario{
		Text:  []string{"Hel", "lo, ", "wor", "ld", "!"},
		Usage: providers.Usage{InputTokens: 12, OutputTokens: 5, CachedInputTokens: 4},
	}
	m := h.MakeModel(t, s)
	r := stream(t, m.Provider, simpleRequest())
	checkFinishedCleanly(t, r, s.Usage, providers.FinishStop)
	if got := r.text(providers.TextDelta); got != "Hello, world!" {
		t.Errorf("text = %q, want %q", got, "Hello, world!")
	}
	if n := len(r.kinds(providers.TextDelta)); n < 2 {
		t.Errorf("got %d text deltas: the text was not streamed", n)
	}
	if cs := r.kinds(providers.ToolCallEvent); len(cs) != 0 {
		t.Errorf("unexpected tool calls: %+v", cs)
	}
	// Text comes before usage and finish.
	seenTail := false
	for _, e := range r.events {
		switch e.Kind {
		case providers.UsageEvent, providers.FinishEvent:
			seenTail = true
		case providers.TextDelta:
			if seenTail {
				t.Errorf("text delta %q after usage or finish", e.Text)
			}
		}
	}
}

func testReasoning(t *testing.T, h Harness) {
	s := Scenario{
		Reasoning: []string{"The user ", "wants a greeting."},
		Text:      []string{"Hi", "!"},
		Usage:     providers.Usage{InputTokens: 3, OutputTokens: 9},
	}
	m := h.MakeModel(t, s)
	r := stream(t, m.Provider, simpleRequest())
	checkFinishedCleanly(t, r, s.Usage, providers.FinishStop)
	if got := r.text(providers.ReasoningDelta); got != "The user wants a greeting." {
		t.Errorf("reasoning = %q", got)
	}
	if got := r.text(providers.TextDelta); got != "Hi!" {
		t.Errorf("text = %q", got)
	}
	firstText := -1
	for i, e := range r.events {
		if e.Kind == providers.TextDelta && firstText < 0 {
			firstText = i
		}
		if e.Kind == providers.ReasoningDelta && firstText >= 0 {
			t.Errorf("reasoning delta %q after the text started", e.Text)
		}
	}
}

func testParallelToolCalls(t *testing.T, h Harness) {
	s := Scenario{
		Text: []string{"Checking both."},
		ToolCalls: []ToolCall{
			{ID: "call_weather_1", Name: "get_weather", Args: []string{`{"ci`, `ty": "Par`, `is", "unit"`, `: "c"}`}},
			{ID: "call_weather_2", Name: "get_weather", Args: []string{`{"city"`, `: "Oslo"}`}},
			{ID: "call_time_3", Name: "get_time", Args: []string{`{}`}},
		},
		Usage: providers.Usage{InputTokens: 40, OutputTokens: 30},
	}
	m := h.MakeModel(t, s)
	r := stream(t, m.Provider, simpleRequest())
	checkFinishedCleanly(t, r, s.Usage, providers.FinishToolCalls)
	calls := r.kinds(providers.ToolCallEvent)
	if len(calls) != len(s.ToolCalls) {
		t.Fatalf("got %d tool calls, want %d: %+v", len(calls), len(s.ToolCalls), calls)
	}
	for i, want := range s.ToolCalls {
		got := calls[i].ToolCall
		if got.ID != want.ID || got.Name != want.Name {
			t.Errorf("call %d = %s %s, want %s %s", i, got.ID, got.Name, want.ID, want.Name)
		}
		if !jsonEqual(got.Args, []byte(strings.Join(want.Args, ""))) {
			t.Errorf("call %d args = %s, want %s", i, got.Args, strings.Join(want.Args, ""))
		}
	}
	if got := r.text(providers.TextDelta); got != "Checking both." {
		t.Errorf("text = %q", got)
	}
}

func testRequestRoundTrip(t *testing.T, h Harness) {
	m := h.MakeModel(t, Scenario{Text: []string{"It is sunny."}, Usage: providers.Usage{InputTokens: 80, OutputTokens: 4}})
	if m.Received == nil {
		t.Skip("harness cannot observe the requests the model receives")
	}
	temp := 0.25
	req := &providers.Request{
		Model:  "round-trip-model",
		System: "You are a terse assistant.\nAnswer in one sentence.",
		Messages: []providers.Message{
			{Role: providers.User, Content: "What's the weather in Paris?"},
			{Role: providers.Assistant, ToolCalls: []providers.ToolCall{
				{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "call_2", Name: "get_time", Args: json.RawMessage(`{"tz":"Europe/Paris"}`)},
			}},
			{Role: providers.Tool, ToolCallID: "call_1", Content: `{"ok":true,"sky":"clear"}`},
			{Role: providers.Tool, ToolCallID: "call_2", Content: `{"ok":true,"time":"12:00"}`},
			{Role: providers.Assistant, Content: "Clear skies at noon."},
			{Role: providers.User, Content: "Thanks — and «tomorrow»?"},
		},
		Tools: []providers.ToolDef{
			{Name: "get_weather", Description: "Current weather for a city.", Parameters: json.RawMessage(
				`{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string","enum":["c","f"]}},"required":["city"]}`)},
			{Name: "get_time", Description: "Local time.", Parameters: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
		},
		MaxTokens:   256,
		Temperature: &temp,
	}
	before, _ := json.Marshal(req)
	r := stream(t, m.Provider, req)
	if r.err != nil {
		t.Fatalf("stream failed: %v", r.err)
	}
	if after, _ := json.Marshal(req); !bytes.Equal(before, after) {
		t.Errorf("Stream modified the request:\nbefore %s\nafter  %s", before, after)
	}
	got := m.Received()
	if len(got) != 1 {
		t.Fatalf("model received %d requests, want 1", len(got))
	}
	if diff := diffRequest(&got[0], req); diff != "" {
		t.Errorf("model received a different request:\n%s", diff)
	}
}

func diffRequest(got, want *providers.Request) string {
	var d []string
	add := func(format string, args ...any) { d = append(d, fmt.Sprintf(format, args...)) }
	if got.Model != want.Model {
		add("model %q, want %q", got.Model, want.Model)
	}
	if got.System != want.System {
		add("system %q, want %q", got.System, want.System)
	}
	if got.MaxTokens != want.MaxTokens {
		add("max tokens %d, want %d", got.MaxTokens, want.MaxTokens)
	}
	if (got.Temperature == nil) != (want.Temperature == nil) || got.Temperature != nil && *got.Temperature != *want.Temperature {
		add("temperature %v, want %v", ptrString(got.Temperature), ptrString(want.Temperature))
	}
	if len(got.Messages) != len(want.Messages) {
		add("%d messages, want %d: %+v", len(got.Messages), len(want.Messages), got.Messages)
	} else {
		for i, w := range want.Messages {
			g := got.Messages[i]
			if g.Role != w.Role || g.Content != w.Content || g.ToolCallID != w.ToolCallID || len(g.ToolCalls) != len(w.ToolCalls) {
				add("message %d = %+v, want %+v", i, g, w)
				continue
			}
			for j, wc := range w.ToolCalls {
				gc := g.ToolCalls[j]
				if gc.ID != wc.ID || gc.Name != wc.Name || !jsonEqual(gc.Args, wc.Args) {
					add("message %d call %d = %s %s %s, want %s %s %s", i, j, gc.ID, gc.Name, gc.Args, wc.ID, wc.Name, wc.Args)
				}
			}
		}
	}
	if len(got.Tools) != len(want.Tools) {
		add("%d tools, want %d", len(got.Tools), len(want.Tools))
	} else {
		for i, w := range want.Tools {
			g := got.Tools[i]
			if g.Name != w.Name || g.Description != w.Description || !jsonEqual(g.Parameters, w.Parameters) {
				add("tool %d = %s %q %s, want %s %q %s", i, g.Name, g.Description, g.Parameters, w.Name, w.Description, w.Parameters)
			}
		}
	}
	return strings.Join(d, "\n")
}

func ptrString(f *float64) string {
	if f == nil {
		return "nil"
	}
	return fmt.Sprint(*f)
}

func statusTest(status int, retryAfter time.Duration, want error) func(*testing.T, Harness) {
	return func(t *testing.T, h Harness) {
		m := h.MakeModel(t, Scenario{Fault: FaultStatus, Status: status, RetryAfter: retryAfter})
		r := stream(t, m.Provider, simpleRequest())
		if !errors.Is(r.err, want) {
			t.Fatalf("err = %v, want errors.Is %v", r.err, want)
		}
		if len(r.events) != 0 {
			t.Errorf("events before the error: %+v", r.events)
		}
		e, ok := errors.AsType[*providers.Error](r.err)
		if !ok {
			t.Fatalf("err %v is not a *providers.Error", r.err)
		}
		if e.StatusCode != 0 && e.StatusCode != status {
			t.Errorf("StatusCode = %d, want %d", e.StatusCode, status)
		}
		if e.RetryAfter != retryAfter {
			t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, retryAfter)
		}
		if e.Err == nil {
			t.Errorf("the cause is nil")
		}
	}
}

func faultTest(f Fault) func(*testing.T, Harness) {
	return func(t *testing.T, h Harness) {
		s := Scenario{Text: []string{"one ", "two ", "three ", "four"}, FaultAfter: 2, Fault: f, Usage: providers.Usage{InputTokens: 1, OutputTokens: 4}}
		m := h.MakeModel(t, s)
		r := stream(t, m.Provider, simpleRequest())
		if !errors.Is(r.err, providers.ErrConnection) {
			t.Fatalf("err = %v, want errors.Is ErrConnection", r.err)
		}
		if got := r.text(providers.TextDelta); got != "one two " {
			t.Errorf("text before the fault = %q, want %q", got, "one two ")
		}
		if fs := r.kinds(providers.FinishEvent); len(fs) != 0 {
			t.Errorf("a failed stream reported Finish: %+v", fs)
		}
	}
}

// stallAfterOne returns a provider whose stream delivers one delta and then
// goes quiet forever.
func stallAfterOne(t *testing.T, h Harness) providers.Provider {
	return h.MakeModel(t, Scenario{Text: []string{"first ", "never"}, Fault: FaultStall, FaultAfter: 1}).Provider
}

func testCanceled(t *testing.T, h Harness) {
	p := stallAfterOne(t, h)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var canceledAt time.Time
	r := collect(t, func(yield func(providers.Event, error) bool) {
		for ev, err := range p.Stream(ctx, simpleRequest()) {
			if ev.Kind == providers.TextDelta && canceledAt.IsZero() {
				canceledAt = time.Now()
				cancel()
			}
			if !yield(ev, err) {
				return
			}
		}
	})
	if canceledAt.IsZero() {
		t.Fatalf("no text before the stall: %+v, %v", r.events, r.err)
	}
	if d := time.Since(canceledAt); d > promptly {
		t.Errorf("stream took %v to end after cancel", d)
	}
	if !errors.Is(r.err, providers.ErrCanceled) {
		t.Fatalf("err = %v, want errors.Is ErrCanceled", r.err)
	}
	if got := r.text(providers.TextDelta); got != "first " {
		t.Errorf("text = %q, want %q", got, "first ")
	}
}

func testDeadline(t *testing.T, h Harness) {
	p := stallAfterOne(t, h)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := collect(t, p.Stream(ctx, simpleRequest()))
	if d := time.Since(start); d > promptly {
		t.Errorf("stream took %v to end after a 300ms deadline", d)
	}
	if !errors.Is(r.err, providers.ErrTimeout) {
		t.Fatalf("err = %v, want errors.Is ErrTimeout", r.err)
	}
}

func testBreakEarly(t *testing.T, h Harness) {
	for _, tc := range []struct {
		name  string
		fault Fault
	}{{"WhileStreaming", NoFault}, {"WhileStalled", FaultStall}} {
		t.Run(tc.name, func(t *testing.T) {
			text := make([]string, 50)
			for i := range text {
				text[i] = fmt.Sprintf("w%d ", i)
			}
			p := h.MakeModel(t, Scenario{Text: text, Fault: tc.fault, FaultAfter: 1}).Provider
			baseline := runtime.NumGoroutine()
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()
			start := time.Now()
			got := 0
			for ev, err := range p.Stream(ctx, simpleRequest()) {
				if err != nil {
					t.Fatalf("stream failed: %v", err)
				}
				if ev.Kind == providers.TextDelta {
					got++
					break
				}
			}
			if d := time.Since(start); d > promptly {
				t.Errorf("breaking out took %v", d)
			}
			if got != 1 {
				t.Fatalf("got %d text deltas before breaking, want 1", got)
			}
			if n, ok := goroutinesSettle(baseline, promptly); !ok {
				t.Errorf("%d goroutines still running after breaking out, %d before the stream:\n%s", n, baseline, goroutineDump())
			}
		})
	}
}

// goroutinesSettle waits up to d for the goroutine count to fall back to
// baseline, as go.uber.org/goleak would, and reports the last count.
func goroutinesSettle(baseline int, d time.Duration) (int, bool) {
	deadline := time.Now().Add(d)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline {
			return n, true
		}
		if time.Now().After(deadline) {
			return n, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func goroutineDump() string {
	buf := make([]byte, 1<<16)
	return string(buf[:runtime.Stack(buf, true)])
}

func testConcurrent(t *testing.T, h Harness) {
	s := Scenario{Text: []string{"same ", "answer"}, Usage: providers.Usage{InputTokens: 2, OutputTokens: 2}}
	p := h.MakeModel(t, s).Provider
	const n = 8
	var wg sync.WaitGroup
	results := make([]result, n)
	for i := range n {
		wg.Go(func() { results[i] = stream(t, p, simpleRequest()) })
	}
	wg.Wait()
	for i, r := range results {
		checkFinishedCleanly(t, r, s.Usage, providers.FinishStop)
		if got := r.text(providers.TextDelta); got != "same answer" {
			t.Errorf("stream %d text = %q", i, got)
		}
	}
}

// jsonEqual reports whether a and b are the same JSON value, ignoring
// formatting.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}
