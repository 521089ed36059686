package openai_test

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

	"github.com/parleyhq/parley/internal/openaimock"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/openai"
	"github.com/parleyhq/parley/providers/providertest"
)

// start serves responses from a fresh mock and returns a provider for it.
func start(t testing.TB, cfg openai.Config, responses ...openaimock.Response) (*openai.Provider, *openaimock.Server) {
	t.Helper()
	mock := openaimock.New(responses...)
	ts := mock.Start(t)
	cfg.BaseURL = ts.URL + "/v1"
	cfg.HTTPClient = ts.Client()
	if cfg.Model == "" {
		cfg.Model = "default-model"
	}
	return openai.New(cfg), mock
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

func TestRetryAfterHTTPDateBecomesDuration(t *testing.T) {
	resp := openaimock.Error(429)
	resp.Header = http.Header{"Retry-After": {time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)}}
	p, _ := start(t, openai.Config{}, resp)
	o := run(t, p, hello())
	e, ok := errors.AsType[*providers.Error](o.err)
	if !ok || !errors.Is(o.err, providers.ErrRateLimit) {
		t.Fatalf("err = %v, want a rate-limit *providers.Error", o.err)
	}
	// The date has whole-second precision and the clock moved on.
	if e.RetryAfter < 28*time.Second || e.RetryAfter > 30*time.Second {
		t.Errorf("RetryAfter = %v, want about 30s", e.RetryAfter)
	}
	if e.StatusCode != 429 {
		t.Errorf("StatusCode = %d", e.StatusCode)
	}
}

func TestMaxRetriesRetriesRateLimitThenSucceeds(t *testing.T) {
	limited := openaimock.Error(429)
	limited.Header = http.Header{"Retry-After": {"0"}}
	p, mock := start(t, openai.Config{MaxRetries: 2}, limited, limited, openaimock.Text("finally"))
	o := run(t, p, hello())
	if o.err != nil {
		t.Fatalf("stream failed: %v", o.err)
	}
	if got := o.of(providers.TextDelta); len(got) != 1 || got[0].Text != "finally" {
		t.Errorf("text events = %+v", got)
	}
	if n := len(mock.Requests()); n != 3 {
		t.Errorf("server saw %d requests, want 3", n)
	}
}

func TestZeroMaxRetriesNeverRetries(t *testing.T) {
	limited := openaimock.Error(503)
	p, mock := start(t, openai.Config{}, limited, openaimock.Text("unreached"))
	o := run(t, p, hello())
	if !errors.Is(o.err, providers.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", o.err)
	}
	if n := len(mock.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestRetriesNeverRepeatAStreamThatDeliveredTokens(t *testing.T) {
	dropped := openaimock.Response{Text: []string{"partial ", "answer"}, Fault: openaimock.Drop, FaultAfter: 1}
	p, mock := start(t, openai.Config{MaxRetries: 3}, dropped, openaimock.Text("second"))
	o := run(t, p, hello())
	if !errors.Is(o.err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", o.err)
	}
	if n := len(mock.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func TestToolCallArgumentsInFivePiecesAreAssembled(t *testing.T) {
	pieces := []string{`{"que`, `ry": "ope`, `n inci`, `dents", "li`, `mit": 5}`}
	p, _ := start(t, openai.Config{}, openaimock.Response{
		ToolCalls: []openaimock.ToolCall{{ID: "call_abc", Name: "search", Args: pieces}},
	})
	o := run(t, p, hello())
	if o.err != nil {
		t.Fatal(o.err)
	}
	calls := o.of(providers.ToolCallEvent)
	if len(calls) != 1 {
		t.Fatalf("got %d calls", len(calls))
	}
	c := calls[0].ToolCall
	if c.ID != "call_abc" || c.Name != "search" || string(c.Args) != strings.Join(pieces, "") {
		t.Errorf("call = %s %s %s", c.ID, c.Name, c.Args)
	}
	if !json.Valid(c.Args) {
		t.Errorf("assembled args are not JSON: %s", c.Args)
	}
}

func TestInterleavedParallelCallsAreAssembledByIndex(t *testing.T) {
	p, _ := start(t, openai.Config{}, openaimock.Response{
		InterleaveToolCalls: true,
		ToolCalls: []openaimock.ToolCall{
			{ID: "call_a", Name: "first", Args: []string{`{"n"`, `:1}`}},
			{ID: "call_b", Name: "second", Args: []string{`{"n"`, `:2`, `}`}},
		},
	})
	o := run(t, p, hello())
	calls := o.of(providers.ToolCallEvent)
	if o.err != nil || len(calls) != 2 {
		t.Fatalf("calls = %+v, err = %v", calls, o.err)
	}
	if calls[0].ToolCall.ID != "call_a" || string(calls[0].ToolCall.Args) != `{"n":1}` ||
		calls[1].ToolCall.ID != "call_b" || string(calls[1].ToolCall.Args) != `{"n":2}` {
		t.Errorf("calls = %+v", calls)
	}
}

func TestReasoningFieldIsReadUnderEitherName(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			p, _ := start(t, openai.Config{}, openaimock.Response{ReasoningField: field, Reasoning: []string{"hm", "m"}, Text: []string{"ok"}})
			o := run(t, p, hello())
			if rs := o.of(providers.ReasoningDelta); o.err != nil || len(rs) != 2 || rs[0].Text+rs[1].Text != "hmm" {
				t.Errorf("reasoning = %+v, err = %v", rs, o.err)
			}
		})
	}
}

func TestStopAfterToolCallsIsReportedAsToolCalls(t *testing.T) {
	p, _ := start(t, openai.Config{}, openaimock.Response{
		FinishReason: "stop",
		ToolCalls:    []openaimock.ToolCall{{ID: "c", Name: "n", Args: []string{"{}"}}},
	})
	o := run(t, p, hello())
	if f := o.of(providers.FinishEvent); o.err != nil || len(f) != 1 || f[0].Finish != providers.FinishToolCalls {
		t.Errorf("finish = %+v, err = %v", f, o.err)
	}
}

func TestLengthFinishIsReported(t *testing.T) {
	p, _ := start(t, openai.Config{}, openaimock.Response{Text: []string{"trunc"}, FinishReason: "length"})
	o := run(t, p, hello())
	if f := o.of(providers.FinishEvent); o.err != nil || len(f) != 1 || f[0].Finish != providers.FinishLength {
		t.Errorf("finish = %+v, err = %v", f, o.err)
	}
}

func TestConfigReachesTheWire(t *testing.T) {
	p, mock := start(t, openai.Config{
		APIKey:          "sk-secret",
		Model:           "configured-model",
		Headers:         map[string]string{"X-Title": "Parley"},
		ExtraBody:       map[string]any{"top_k": 20, "chat_template_kwargs": map[string]any{"enable_thinking": false}},
		LegacyMaxTokens: true,
	}, openaimock.Text("ok"))
	req := hello()
	req.MaxTokens = 64
	if o := run(t, p, req); o.err != nil {
		t.Fatal(o.err)
	}
	got := mock.Requests()[0]
	if h := got.Header.Get("Authorization"); h != "Bearer sk-secret" {
		t.Errorf("Authorization = %q", h)
	}
	if h := got.Header.Get("X-Title"); h != "Parley" {
		t.Errorf("X-Title = %q", h)
	}
	if got.Body.Model != "configured-model" {
		t.Errorf("model = %q, want the configured default", got.Body.Model)
	}
	if got.Body.MaxTokens == nil || *got.Body.MaxTokens != 64 || got.Body.MaxCompletionTokens != nil {
		t.Errorf("max_tokens = %v, max_completion_tokens = %v", got.Body.MaxTokens, got.Body.MaxCompletionTokens)
	}
	if string(got.Fields["top_k"]) != "20" || string(got.Fields["chat_template_kwargs"]) != `{"enable_thinking":false}` {
		t.Errorf("extra body fields missing: %s", got.Raw)
	}
	if got.Path != "/v1/chat/completions" {
		t.Errorf("path = %q", got.Path)
	}
}

func TestSamplingAndReasoningEffortReachTheWireOnlyWhenSet(t *testing.T) {
	p, mock := start(t, openai.Config{Model: "m"}, openaimock.Text("ok"), openaimock.Text("ok"))
	req := hello()
	temp, topP := 0.3, 0.9
	req.Temperature, req.TopP, req.ReasoningEffort = &temp, &topP, "low"
	if o := run(t, p, req); o.err != nil {
		t.Fatal(o.err)
	}
	if o := run(t, p, hello()); o.err != nil {
		t.Fatal(o.err)
	}
	set, unset := mock.Requests()[0], mock.Requests()[1]
	if string(set.Fields["temperature"]) != "0.3" || string(set.Fields["top_p"]) != "0.9" || string(set.Fields["reasoning_effort"]) != `"low"` {
		t.Errorf("set: %s", set.Raw)
	}
	for _, k := range []string{"temperature", "top_p", "reasoning_effort"} {
		if _, ok := unset.Fields[k]; ok {
			t.Errorf("unset request sent %s: %s", k, unset.Raw)
		}
	}
}

func TestNoAPIKeySendsNoAuthorization(t *testing.T) {
	p, mock := start(t, openai.Config{}, openaimock.Text("ok"))
	if o := run(t, p, hello()); o.err != nil {
		t.Fatal(o.err)
	}
	if h := mock.Requests()[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization = %q, want none", h)
	}
}

func TestMissingModelIsBadRequestWithoutCallingTheServer(t *testing.T) {
	mock := openaimock.New(openaimock.Text("unreached"))
	ts := mock.Start(t)
	p := openai.New(openai.Config{BaseURL: ts.URL, HTTPClient: ts.Client()})
	o := run(t, p, hello())
	if !errors.Is(o.err, providers.ErrBadRequest) {
		t.Fatalf("err = %v, want ErrBadRequest", o.err)
	}
	if n := len(mock.Requests()); n != 0 {
		t.Errorf("server saw %d requests", n)
	}
}

func TestInvalidToolSchemaIsBadRequest(t *testing.T) {
	p, _ := start(t, openai.Config{}, openaimock.Text("unreached"))
	req := hello()
	req.Tools = []providers.ToolDef{{Name: "broken", Parameters: json.RawMessage(`[1,2]`)}}
	if o := run(t, p, req); !errors.Is(o.err, providers.ErrBadRequest) {
		t.Fatalf("err = %v, want ErrBadRequest", o.err)
	}
}

func TestUnreachableServerIsErrConnection(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	p := openai.New(openai.Config{BaseURL: url, Model: "m"})
	if o := run(t, p, hello()); !errors.Is(o.err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", o.err)
	}
}

// rawServer serves body as an SSE stream, for shapes the mock does not make.
func rawServer(t *testing.T, body string) *openai.Provider {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(ts.Close)
	return openai.New(openai.Config{BaseURL: ts.URL, Model: "m", HTTPClient: ts.Client()})
}

const textChunk = `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"half"},"finish_reason":null}]}` + "\n\n"

func TestStreamEndingWithoutFinishReasonIsErrConnection(t *testing.T) {
	p := rawServer(t, textChunk+"data: [DONE]\n\n")
	o := run(t, p, hello())
	if !errors.Is(o.err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", o.err)
	}
	if len(o.events) != 1 || o.events[0].Text != "half" {
		t.Errorf("events = %+v", o.events)
	}
}

func TestErrorEventMidStreamIsErrUnavailable(t *testing.T) {
	p := rawServer(t, textChunk+`data: {"error":{"message":"overloaded","type":"server_error"}}`+"\n\n")
	o := run(t, p, hello())
	if !errors.Is(o.err, providers.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", o.err)
	}
	if strings.Contains(providers.ErrUnavailable.Error(), "overloaded") {
		t.Fatal("sentinel text must not carry provider text")
	}
}

func TestProviderErrorTextStaysInTheCause(t *testing.T) {
	p, _ := start(t, openai.Config{}, openaimock.Error(404))
	o := run(t, p, hello())
	e, ok := errors.AsType[*providers.Error](o.err)
	if !ok || e.Category != providers.CategoryNotFound {
		t.Fatalf("err = %v", o.err)
	}
	if !strings.Contains(e.Err.Error(), "model_not_found") {
		t.Errorf("cause %q lost the server's code", e.Err)
	}
}

func TestAzureBaseURLIsTheV1Endpoint(t *testing.T) {
	if got := openai.AzureBaseURL("contoso"); got != "https://contoso.openai.azure.com/openai/v1" {
		t.Errorf("AzureBaseURL = %q", got)
	}
}

func BenchmarkStream200TextDeltas(b *testing.B) {
	text := make([]string, 200)
	for i := range text {
		text[i] = fmt.Sprintf("tok%d ", i)
	}
	mock := openaimock.New()
	mock.SetFallback(openaimock.Response{Text: text, Usage: openaimock.Usage{PromptTokens: 100, CompletionTokens: 200}})
	ts := mock.Start(b)
	p := openai.New(openai.Config{BaseURL: ts.URL, Model: "m", HTTPClient: ts.Client()})
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

// A server that streams one tool call's arguments without end is cut off
// with ErrConnection once the buffered arguments pass a bound, instead of
// taking the process's memory.
func TestEndlessToolArgumentsAreCutOff(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		piece := strings.Repeat("a", 8<<10)
		first := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":\""}}]},"finish_reason":null}]}` + "\n\n"
		more := `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + piece + `"}}]},"finish_reason":null}]}` + "\n\n"
		fmt.Fprint(w, first)
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, more); err != nil {
				return
			}
		}
	}))
	t.Cleanup(ts.Close)
	p := openai.New(openai.Config{BaseURL: ts.URL, Model: "m", HTTPClient: ts.Client()})
	o := run(t, p, hello())
	if !errors.Is(o.err, providers.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", o.err)
	}
	for _, ev := range o.events {
		if ev.Kind == providers.ToolCallEvent {
			t.Errorf("an incomplete call was emitted")
		}
	}
}

// A character a server splits across two chunks, as raw bytes, joins again
// in the text and in a tool call's arguments.
func TestACharacterSplitAcrossChunksJoinsAgain(t *testing.T) {
	chunk := func(delta string) string {
		return `data: {"choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n"
	}
	p := rawServer(t, chunk(`{"content":"price: `+"\xe2\x82"+`"}`)+chunk(`{"content":"`+"\xac"+`5"}`)+
		chunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{\"p\":\"`+"\xc3"+`"}}]}`)+
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"`+"\xa9"+`\"}"}}]}`)+
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
	o := run(t, p, hello())
	if o.err != nil {
		t.Fatal(o.err)
	}
	providertest.WantSplitCharactersJoined(t, o.events)
}

// A stream parked on a quiet model holds none of its request: neither
// the body openai-go keeps for a retry nor the one http.Transport sent.
func TestAParkedStreamHoldsNoneOfItsRequest(t *testing.T) {
	ts := providertest.StallServer(t, "text/event-stream",
		`data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}`+"\n\n")
	providertest.ParkedStreamsHoldNoRequest(t, openai.New(openai.Config{BaseURL: ts.URL, Model: "m"}))
}
