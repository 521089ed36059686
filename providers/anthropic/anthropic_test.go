package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/anthropic"
	"github.com/parleyhq/parley/providers/providertest"
)

// start serves responses from a fresh mock and returns a provider for it.
func start(t testing.TB, cfg anthropic.Config, responses ...mockResponse) (*anthropic.Provider, *mockServer) {
	t.Helper()
	mock := newMock(responses...)
	ts := mock.start(t)
	cfg.BaseURL = ts.URL
	cfg.HTTPClient = ts.Client()
	if cfg.Model == "" {
		cfg.Model = "default-model"
	}
	return anthropic.New(cfg), mock
}

type outcome struct {
	events []providers.Event
	err    error
}

func (o outcome) of(kind providers.EventKind) []providers.Event {
	var out []providers.Event
	for _, e := range o.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (o outcome) text(kind providers.EventKind) string {
	var b strings.Builder
	for _, e := range o.of(kind) {
		b.WriteString(e.Text)
	}
	return b.String()
}

// trace names the events in order, for order assertions.
func (o outcome) trace() string {
	var parts []string
	for _, e := range o.events {
		switch e.Kind {
		case providers.TextDelta:
			parts = append(parts, "text:"+e.Text)
		case providers.ReasoningDelta:
			parts = append(parts, "reasoning:"+e.Text)
		case providers.ToolCallEvent:
			parts = append(parts, "call:"+e.ToolCall.ID)
		case providers.UsageEvent:
			parts = append(parts, "usage")
		case providers.FinishEvent:
			parts = append(parts, "finish:"+string(e.Finish))
		}
	}
	return strings.Join(parts, " ")
}

func run(t testing.TB, p providers.Provider, req *providers.Request) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var o outcome
	for ev, err := range p.Stream(ctx, req) {
		if err != nil {
			o.err = err
			break
		}
		o.events = append(o.events, ev)
	}
	return o
}

func hello() *providers.Request {
	return &providers.Request{Messages: []providers.Message{{Role: providers.User, Content: "hello"}}}
}

// rawServer serves body as an SSE stream, for shapes the mock does not make.
func rawServer(t *testing.T, body string) *anthropic.Provider {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(ts.Close)
	return anthropic.New(anthropic.Config{BaseURL: ts.URL, Model: "m", HTTPClient: ts.Client()})
}

// sse renders one event as Anthropic sends it.
func sse(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

const (
	startEvent = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":3,"output_tokens":1}}}`
	stopEvent  = `{"type":"message_stop"}`
)

func textBlock(index int, text string) string {
	return sse("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index)) +
		sse("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, index, text)) +
		sse("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

func toolBlock(index int, id, name string, pieces ...string) string {
	s := sse("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, index, id, name))
	for _, p := range pieces {
		s += sse("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, index, p))
	}
	return s + sse("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
}

func messageDelta(stop string, output int) string {
	return sse("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, output))
}

// --- Events ---

func TestToolArgumentsInFivePiecesAreAssembled(t *testing.T) {
	pieces := []string{`{"que`, `ry": "ope`, `n inci`, `dents", "li`, `mit": 5}`}
	p, _ := start(t, anthropic.Config{}, mockResponse{ToolCalls: []mockCall{{ID: "toolu_abc", Name: "search", Args: pieces}}})
	o := run(t, p, hello())
	if o.err != nil {
		t.Fatal(o.err)
	}
	calls := o.of(providers.ToolCallEvent)
	if len(calls) != 1 {
		t.Fatalf("got %d calls", len(calls))
	}
	c := calls[0].ToolCall
	if c.ID != "toolu_abc" || c.Name != "search" || string(c.Args) != strings.Join(pieces, "") || !json.Valid(c.Args) {
		t.Errorf("call = %s %s %s", c.ID, c.Name, c.Args)
	}
	if got := o.trace(); got != "call:toolu_abc usage finish:tool_calls" {
		t.Errorf("events = %s", got)
	}
}

func TestToolUseWithoutInputDeltasHasEmptyObjectArgs(t *testing.T) {
	p, _ := start(t, anthropic.Config{}, mockResponse{ToolCalls: []mockCall{{ID: "toolu_1", Name: "now"}}})
	o := run(t, p, hello())
	if calls := o.of(providers.ToolCallEvent); o.err != nil || len(calls) != 1 || string(calls[0].ToolCall.Args) != "{}" {
		t.Fatalf("calls = %+v, err = %v", calls, o.err)
	}
}

// Anthropic may write text after a tool_use block; the Provider contract
// still puts every tool call after every delta.
func TestToolCallsComeAfterTextThatFollowsAToolUseBlock(t *testing.T) {
	p := rawServer(t, sse("message_start", startEvent)+
		textBlock(0, "Let me look. ")+
		toolBlock(1, "toolu_a", "first", `{"n"`, `:1}`)+
		textBlock(2, "And also:")+
		toolBlock(3, "toolu_b", "second", `{"n":2}`)+
		messageDelta("tool_use", 9)+sse("message_stop", stopEvent))
	o := run(t, p, hello())
	if o.err != nil {
		t.Fatal(o.err)
	}
	want := "text:Let me look.  text:And also: call:toolu_a call:toolu_b usage finish:tool_calls"
	if got := o.trace(); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
	// The finish names the model message_start said answered.
	if f := o.of(providers.FinishEvent); len(f) != 1 || f[0].Model != "m" {
		t.Errorf("finish = %+v, want the answering model %q", f, "m")
	}
	if calls := o.of(providers.ToolCallEvent); string(calls[0].ToolCall.Args) != `{"n":1}` || string(calls[1].ToolCall.Args) != `{"n":2}` {
		t.Errorf("calls = %+v", calls)
	}
}

func TestThinkingStreamsAsReasoningAndRedactedThinkingIsSkipped(t *testing.T) {
	p, _ := start(t, anthropic.Config{ThinkingBudget: 2048}, mockResponse{
		Redacted:  true,
		Reasoning: []string{"The user ", "greets me."},
		Text:      []string{"Hi", "!"},
	})
	o := run(t, p, hello())
	if o.err != nil {
		t.Fatal(o.err)
	}
	want := "reasoning:The user  reasoning:greets me. text:Hi text:! usage finish:stop"
	if got := o.trace(); got != want {
		t.Errorf("events = %s\nwant     %s", got, want)
	}
}

func TestStopReasonsMapOntoFinishReasons(t *testing.T) {
	for stop, want := range map[string]providers.FinishReason{
		"end_turn":                      providers.FinishStop,
		"stop_sequence":                 providers.FinishStop,
		"max_tokens":                    providers.FinishLength,
		"pause_turn":                    providers.FinishLength,
		"model_context_window_exceeded": providers.FinishLength,
		"tool_use":                      providers.FinishToolCalls,
		"refusal":                       providers.FinishContentFilter,
		"some_future_reason":            "some_future_reason",
	} {
		t.Run(stop, func(t *testing.T) {
			p, _ := start(t, anthropic.Config{}, mockResponse{Text: []string{"x"}, StopReason: stop})
			o := run(t, p, hello())
			if f := o.of(providers.FinishEvent); o.err != nil || len(f) != 1 || f[0].Finish != want {
				t.Errorf("finish = %+v, err = %v; want %q", f, o.err, want)
			}
		})
	}
}

func TestEndTurnAfterToolCallsIsReportedAsToolCalls(t *testing.T) {
	p, _ := start(t, anthropic.Config{}, mockResponse{StopReason: "end_turn", ToolCalls: []mockCall{{ID: "t", Name: "n", Args: []string{"{}"}}}})
	o := run(t, p, hello())
	if f := o.of(providers.FinishEvent); o.err != nil || len(f) != 1 || f[0].Finish != providers.FinishToolCalls {
		t.Errorf("finish = %+v, err = %v", f, o.err)
	}
}

func TestUsageCountsTheWholePromptWithCacheReadsAndWrites(t *testing.T) {
	p, _ := start(t, anthropic.Config{}, mockResponse{Text: []string{"ok"}, Usage: mockUsage{Input: 10, Output: 7, CacheRead: 100, CacheWrite: 50}})
	o := run(t, p, hello())
	want := providers.Usage{InputTokens: 160, OutputTokens: 7, CachedInputTokens: 100, CacheWriteInputTokens: 50}
	if u := o.of(providers.UsageEvent); o.err != nil || len(u) != 1 || u[0].Usage != want {
		t.Errorf("usage = %+v, err = %v; want %+v", u, o.err, want)
	}
}

// message_delta's counts are whole-message totals; newer servers repeat
// the input counts there, and those win.
func TestMessageDeltaUsageTotalsReplaceTheStartCounts(t *testing.T) {
	p := rawServer(t, sse("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"cache_read_input_tokens":20,"output_tokens":1}}}`)+
		textBlock(0, "ok")+
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":12,"input_tokens":6,"cache_creation_input_tokens":30}}`)+
		sse("message_stop", stopEvent))
	o := run(t, p, hello())
	want := providers.Usage{InputTokens: 56, OutputTokens: 12, CachedInputTokens: 20, CacheWriteInputTokens: 30}
	if u := o.of(providers.UsageEvent); o.err != nil || len(u) != 1 || u[0].Usage != want {
		t.Errorf("usage = %+v, err = %v; want %+v", u, o.err, want)
	}
}

func TestNothingAfterTheStopReasonIsEmitted(t *testing.T) {
	p := rawServer(t, sse("message_start", startEvent)+
		toolBlock(0, "toolu_1", "f", "{}")+
		messageDelta("tool_use", 3)+
		textBlock(1, "late")+
		toolBlock(2, "toolu_2", "g", "{}")+
		sse("message_stop", stopEvent))
	o := run(t, p, hello())
	if got, want := o.trace(), "call:toolu_1 usage finish:tool_calls"; o.err != nil || got != want {
		t.Errorf("events = %s (err %v), want %s: events after the stop reason are ignored", got, o.err, want)
	}
}

func TestStreamEndingWithoutStopReasonIsErrConnection(t *testing.T) {
	for name, body := range map[string]string{
		"EOF":             sse("message_start", startEvent) + textBlock(0, "half"),
		"MessageStopOnly": sse("message_start", startEvent) + textBlock(0, "half") + sse("message_stop", stopEvent),
	} {
		t.Run(name, func(t *testing.T) {
			o := run(t, rawServer(t, body), hello())
			if !errors.Is(o.err, providers.ErrConnection) {
				t.Fatalf("err = %v, want ErrConnection", o.err)
			}
			if o.text(providers.TextDelta) != "half" || len(o.of(providers.FinishEvent)) != 0 {
				t.Errorf("events = %s", o.trace())
			}
		})
	}
}

func TestPingEventsAreIgnored(t *testing.T) {
	ping := sse("ping", `{"type": "ping"}`)
	p := rawServer(t, ping+sse("message_start", startEvent)+ping+textBlock(0, "ok")+ping+messageDelta("end_turn", 1)+ping+sse("message_stop", stopEvent))
	if o := run(t, p, hello()); o.err != nil || o.trace() != "text:ok usage finish:stop" {
		t.Errorf("events = %s, err = %v", o.trace(), o.err)
	}
}

// A server that streams one tool call's arguments without end is cut off
// with ErrConnection once the buffered arguments pass a bound, instead of
// taking the process's memory.
func TestEndlessToolArgumentsAreCutOff(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, sse("message_start", startEvent)+
			sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`))
		more := sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"`+strings.Repeat("a", 8<<10)+`"}}`)
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, more); err != nil {
				return
			}
		}
	}))
	t.Cleanup(ts.Close)
	p := anthropic.New(anthropic.Config{BaseURL: ts.URL, Model: "m", HTTPClient: ts.Client()})
	o := run(t, p, hello())
	if !errors.Is(o.err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", o.err)
	}
	if len(o.of(providers.ToolCallEvent)) != 0 {
		t.Errorf("an incomplete call was emitted")
	}
}

// --- Errors ---

func TestHTTPStatusesMapToCategories(t *testing.T) {
	for _, tc := range []struct {
		status int
		want   error
	}{
		{400, providers.ErrBadRequest},
		{401, providers.ErrAuth},
		{403, providers.ErrAuth},
		{404, providers.ErrNotFound},
		{413, providers.ErrBadRequest},
		{429, providers.ErrRateLimit},
		{500, providers.ErrUnavailable},
		{502, providers.ErrUnavailable},
		{503, providers.ErrUnavailable},
		{529, providers.ErrUnavailable}, // overloaded: retried like any unavailable server
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			p, _ := start(t, anthropic.Config{}, mockResponse{Status: tc.status})
			o := run(t, p, hello())
			e, ok := errors.AsType[*providers.Error](o.err)
			if !ok || !errors.Is(o.err, tc.want) {
				t.Fatalf("err = %v, want errors.Is %v", o.err, tc.want)
			}
			if e.StatusCode != tc.status || len(o.events) != 0 {
				t.Errorf("StatusCode = %d, events = %s", e.StatusCode, o.trace())
			}
		})
	}
}

func TestRetryAfterHTTPDateBecomesDuration(t *testing.T) {
	resp := mockResponse{Status: 429, Header: http.Header{"Retry-After": {time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)}}}
	p, _ := start(t, anthropic.Config{}, resp)
	o := run(t, p, hello())
	e, ok := errors.AsType[*providers.Error](o.err)
	if !ok || !errors.Is(o.err, providers.ErrRateLimit) {
		t.Fatalf("err = %v, want a rate-limit *providers.Error", o.err)
	}
	// The date has whole-second precision and the clock moved on.
	if e.RetryAfter < 28*time.Second || e.RetryAfter > 30*time.Second {
		t.Errorf("RetryAfter = %v, want about 30s", e.RetryAfter)
	}
}

// An error event inside an accepted stream is classified by its type, as
// the same error would be by its HTTP status.
func TestErrorEventMidStreamIsClassifiedByType(t *testing.T) {
	for typ, want := range map[string]error{
		"overloaded_error":      providers.ErrUnavailable,
		"api_error":             providers.ErrUnavailable,
		"rate_limit_error":      providers.ErrRateLimit,
		"invalid_request_error": providers.ErrBadRequest,
		"brand_new_error":       providers.ErrUnavailable,
	} {
		t.Run(typ, func(t *testing.T) {
			p, _ := start(t, anthropic.Config{}, mockResponse{Text: []string{"one ", "two"}, Fault: faultError, ErrorType: typ, FaultAfter: 1})
			o := run(t, p, hello())
			e, ok := errors.AsType[*providers.Error](o.err)
			if !ok || !errors.Is(o.err, want) {
				t.Fatalf("err = %v, want errors.Is %v", o.err, want)
			}
			if e.StatusCode != 0 {
				t.Errorf("StatusCode = %d: the stream's 200 says nothing of the failure", e.StatusCode)
			}
			if o.text(providers.TextDelta) != "one " || len(o.of(providers.FinishEvent)) != 0 {
				t.Errorf("events = %s", o.trace())
			}
		})
	}
}

// The server's message is for logs: the category and its sentinel, which
// are all a user is shown, carry none of it.
func TestProviderErrorTextStaysInTheCause(t *testing.T) {
	for name, resp := range map[string]mockResponse{
		"Status":     {Status: 529},
		"ErrorEvent": {Text: []string{"a"}, Fault: faultError},
	} {
		t.Run(name, func(t *testing.T) {
			p, _ := start(t, anthropic.Config{}, resp)
			o := run(t, p, hello())
			e, ok := errors.AsType[*providers.Error](o.err)
			if !ok || e.Category != providers.CategoryUnavailable {
				t.Fatalf("err = %v", o.err)
			}
			if !strings.Contains(e.Err.Error(), "overloaded_error") || !strings.Contains(e.Err.Error(), "secret provider detail") {
				t.Errorf("cause %q lost the server's type and message", e.Err)
			}
			if strings.Contains(string(e.Category), "secret") || strings.Contains(providers.ErrUnavailable.Error(), "secret") {
				t.Error("user-facing category or sentinel carries provider text")
			}
		})
	}
}

func TestMaxRetriesRetriesOverloadedThenSucceeds(t *testing.T) {
	overloaded := mockResponse{Status: 529, Header: http.Header{"Retry-After": {"0"}}}
	p, mock := start(t, anthropic.Config{MaxRetries: 2}, overloaded, overloaded, mockResponse{Text: []string{"finally"}})
	o := run(t, p, hello())
	if o.err != nil || o.text(providers.TextDelta) != "finally" {
		t.Fatalf("events = %s, err = %v", o.trace(), o.err)
	}
	if n := len(mock.requests()); n != 3 {
		t.Errorf("server saw %d requests, want 3", n)
	}
}

func TestZeroMaxRetriesNeverRetries(t *testing.T) {
	p, mock := start(t, anthropic.Config{}, mockResponse{Status: 529}, mockResponse{Text: []string{"unreached"}})
	if o := run(t, p, hello()); !errors.Is(o.err, providers.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", o.err)
	}
	if n := len(mock.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestRetriesNeverRepeatAStreamThatDeliveredTokens(t *testing.T) {
	dropped := mockResponse{Text: []string{"partial ", "answer"}, Fault: faultDrop, FaultAfter: 1}
	p, mock := start(t, anthropic.Config{MaxRetries: 3}, dropped, mockResponse{Text: []string{"second"}})
	if o := run(t, p, hello()); !errors.Is(o.err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", o.err)
	}
	if n := len(mock.requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestUnreachableServerIsErrConnection(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	p := anthropic.New(anthropic.Config{BaseURL: url, Model: "m"})
	if o := run(t, p, hello()); !errors.Is(o.err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", o.err)
	}
}

func TestMissingModelIsBadRequestWithoutCallingTheServer(t *testing.T) {
	mock := newMock(mockResponse{Text: []string{"unreached"}})
	ts := mock.start(t)
	p := anthropic.New(anthropic.Config{BaseURL: ts.URL, HTTPClient: ts.Client()})
	if o := run(t, p, hello()); !errors.Is(o.err, providers.ErrBadRequest) {
		t.Fatalf("err = %v, want ErrBadRequest", o.err)
	}
	if n := len(mock.requests()); n != 0 {
		t.Errorf("server saw %d requests", n)
	}
}

func TestUnsendableRequestsAreBadRequest(t *testing.T) {
	for name, req := range map[string]*providers.Request{
		"SchemaNotAnObject":     {Messages: hello().Messages, Tools: []providers.ToolDef{{Name: "broken", Parameters: json.RawMessage(`[1,2]`)}}},
		"ToolMessageWithoutID":  {Messages: []providers.Message{{Role: providers.User, Content: "x"}, {Role: providers.Tool, Content: "r"}}},
		"UnknownRole":           {Messages: []providers.Message{{Role: "narrator", Content: "x"}}},
		"SchemaNotJSONAtAll":    {Messages: hello().Messages, Tools: []providers.ToolDef{{Name: "broken", Parameters: json.RawMessage(`{"type":`)}}},
		"SchemaIsJSONNullValue": {Messages: hello().Messages, Tools: []providers.ToolDef{{Name: "broken", Parameters: json.RawMessage(`null`)}}},
	} {
		t.Run(name, func(t *testing.T) {
			p, mock := start(t, anthropic.Config{}, mockResponse{Text: []string{"unreached"}})
			if o := run(t, p, req); !errors.Is(o.err, providers.ErrBadRequest) {
				t.Fatalf("err = %v, want ErrBadRequest", o.err)
			}
			if n := len(mock.requests()); n != 0 {
				t.Errorf("server saw %d requests", n)
			}
		})
	}
}

// --- Configuration ---

func TestConfigReachesTheWire(t *testing.T) {
	p, mock := start(t, anthropic.Config{
		APIKey:  "sk-ant-secret",
		Model:   "configured-model",
		Headers: map[string]string{"Anthropic-Beta": "some-beta-2025-01-01"},
	}, mockResponse{Text: []string{"ok"}})
	if o := run(t, p, hello()); o.err != nil {
		t.Fatal(o.err)
	}
	got := mock.requests()[0]
	for h, want := range map[string]string{
		"X-Api-Key":         "sk-ant-secret",
		"Anthropic-Version": "2023-06-01",
		"Anthropic-Beta":    "some-beta-2025-01-01",
		"Authorization":     "",
	} {
		if v := got.Header.Get(h); v != want {
			t.Errorf("%s = %q, want %q", h, v, want)
		}
	}
	if got.Path != "/v1/messages" || got.Body.Model != "configured-model" || !got.Body.Stream {
		t.Errorf("path %q, model %q, stream %v", got.Path, got.Body.Model, got.Body.Stream)
	}
	if got.Body.MaxTokens != anthropic.DefaultMaxTokens {
		t.Errorf("max_tokens = %d, want the default %d", got.Body.MaxTokens, anthropic.DefaultMaxTokens)
	}
}

func TestMaxTokensComesFromTheRequestThenTheConfig(t *testing.T) {
	p, mock := start(t, anthropic.Config{MaxTokens: 900}, mockResponse{Text: []string{"a"}}, mockResponse{Text: []string{"b"}})
	run(t, p, hello())
	req := hello()
	req.MaxTokens = 64
	run(t, p, req)
	rs := mock.requests()
	if rs[0].Body.MaxTokens != 900 || rs[1].Body.MaxTokens != 64 {
		t.Errorf("max_tokens = %d, %d; want 900, 64", rs[0].Body.MaxTokens, rs[1].Body.MaxTokens)
	}
}

func TestNoAPIKeySendsNoCredentials(t *testing.T) {
	p, mock := start(t, anthropic.Config{}, mockResponse{Text: []string{"ok"}})
	if o := run(t, p, hello()); o.err != nil {
		t.Fatal(o.err)
	}
	h := mock.requests()[0].Header
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("credentials sent: %v", h)
	}
}

// The SDK reads ANTHROPIC_* variables only through anthropic.NewClient;
// the Provider must not pick up a key or base URL from the environment.
func TestEnvironmentIsIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	p, mock := start(t, anthropic.Config{}, mockResponse{Text: []string{"ok"}})
	if o := run(t, p, hello()); o.err != nil {
		t.Fatal(o.err)
	}
	h := mock.requests()[0].Header
	if h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Errorf("credentials from the environment were sent: %v", h)
	}
}

func BenchmarkStream200TextDeltas(b *testing.B) {
	text := make([]string, 200)
	for i := range text {
		text[i] = fmt.Sprintf("tok%d ", i)
	}
	mock := newMock()
	mock.setFallback(mockResponse{Text: text, Usage: mockUsage{Input: 100, Output: 200}})
	ts := mock.start(b)
	p := anthropic.New(anthropic.Config{BaseURL: ts.URL, Model: "m", HTTPClient: ts.Client()})
	req := hello()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range p.Stream(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == providers.TextDelta {
				n++
			}
		}
		if n != 200 {
			b.Fatalf("got %d deltas", n)
		}
	}
}

// A character a server splits across two events, as raw bytes, joins again
// in the text and in a tool call's input.
func TestACharacterSplitAcrossEventsJoinsAgain(t *testing.T) {
	p := rawServer(t, sse("message_start", `{"type":"message_start","message":{"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}`)+
		sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)+
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"price: `+"\xe2\x82"+`"}}`)+
		sse("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+"\xac"+`5"}}`)+
		sse("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}`)+
		sse("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"p\":\"`+"\xc3"+`"}}`)+
		sse("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"`+"\xa9"+`\"}"}}`)+
		sse("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`)+
		sse("message_stop", `{"type":"message_stop"}`))
	o := run(t, p, hello())
	if o.err != nil {
		t.Fatal(o.err)
	}
	providertest.WantSplitCharactersJoined(t, o.events)
}

// A stream parked on a quiet model holds none of its request: neither
// the body anthropic-sdk-go keeps for a retry nor the one http.Transport
// sent.
func TestAParkedStreamHoldsNoneOfItsRequest(t *testing.T) {
	ts := providertest.StallServer(t, "text/event-stream",
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n")
	providertest.ParkedStreamsHoldNoRequest(t, anthropic.New(anthropic.Config{BaseURL: ts.URL, Model: "m", APIKey: "k"}))
}
