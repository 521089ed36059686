package openaimock_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/openaimock"
)

const streamBody = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
const usageBody = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

func post(t *testing.T, ctx context.Context, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk-x")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// events reads the data payloads of an SSE body, and the read error that
// ended it, if any.
func events(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	return out, sc.Err()
}

type chunk struct {
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role             string `json:"role"`
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		TotalTokens         int64 `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func decode(t *testing.T, data []string) []chunk {
	t.Helper()
	var out []chunk
	for _, d := range data {
		if d == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %q: %v", d, err)
		}
		out = append(out, c)
	}
	return out
}

func TestTextStreamsRoleChunkDeltasFinishAndDone(t *testing.T) {
	s := openaimock.New(openaimock.Response{Reasoning: []string{"think"}, Text: []string{"Hel", "lo"}})
	ts := s.Start(t)
	res := post(t, t.Context(), ts.URL, streamBody)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q", ct)
	}
	data, err := events(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if data[len(data)-1] != "[DONE]" {
		t.Errorf("last event = %q, want [DONE]", data[len(data)-1])
	}
	cs := decode(t, data)
	if len(cs) != 5 {
		t.Fatalf("got %d chunks, want role, reasoning, 2 text, finish", len(cs))
	}
	if cs[0].Choices[0].Delta.Role != "assistant" || cs[1].Choices[0].Delta.ReasoningContent != "think" ||
		cs[2].Choices[0].Delta.Content != "Hel" || cs[3].Choices[0].Delta.Content != "lo" {
		t.Errorf("chunks = %+v", cs)
	}
	if f := cs[4].Choices[0].FinishReason; f == nil || *f != "stop" {
		t.Errorf("finish = %v", f)
	}
	for _, c := range cs {
		if c.Object != "chat.completion.chunk" || c.Usage != nil {
			t.Errorf("chunk %+v: wrong object or usage without include_usage", c)
		}
	}
}

func TestUsageChunkOnlyWhenRequested(t *testing.T) {
	s := openaimock.New(openaimock.Response{Text: []string{"a"}, Usage: openaimock.Usage{PromptTokens: 10, CompletionTokens: 1, CachedTokens: 6}})
	ts := s.Start(t)
	data, _ := events(post(t, t.Context(), ts.URL, usageBody).Body)
	cs := decode(t, data)
	last := cs[len(cs)-1]
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.PromptTokens != 10 || last.Usage.TotalTokens != 11 || last.Usage.PromptTokensDetails.CachedTokens != 6 {
		t.Errorf("usage chunk = %+v", last)
	}
	for _, d := range data[:len(data)-2] {
		if !strings.Contains(d, `"usage":null`) {
			t.Errorf("chunk before the usage chunk lacks usage:null: %s", d)
		}
	}
}

func TestToolCallsStreamHeaderDeltaThenArgumentPieces(t *testing.T) {
	s := openaimock.New(openaimock.Response{ToolCalls: []openaimock.ToolCall{
		{ID: "call_1", Name: "a", Args: []string{`{"x"`, `:1}`}},
		{ID: "call_2", Name: "b", Args: []string{`{}`}},
	}})
	ts := s.Start(t)
	data, _ := events(post(t, t.Context(), ts.URL, streamBody).Body)
	cs := decode(t, data)
	// role, call 1 head + 2 pieces, call 2 head + 1 piece, finish
	if len(cs) != 7 {
		t.Fatalf("got %d chunks", len(cs))
	}
	head := cs[1].Choices[0].Delta.ToolCalls[0]
	if head.Index != 0 || head.ID != "call_1" || head.Type != "function" || head.Function.Name != "a" || head.Function.Arguments != "" {
		t.Errorf("head delta = %+v", head)
	}
	piece := cs[2].Choices[0].Delta.ToolCalls[0]
	if piece.Index != 0 || piece.ID != "" || piece.Function.Name != "" || piece.Function.Arguments != `{"x"` {
		t.Errorf("piece delta = %+v", piece)
	}
	if second := cs[4].Choices[0].Delta.ToolCalls[0]; second.Index != 1 || second.ID != "call_2" {
		t.Errorf("second call head = %+v", second)
	}
	if f := cs[6].Choices[0].FinishReason; f == nil || *f != "tool_calls" {
		t.Errorf("finish = %v", f)
	}
}

func TestErrorStatusesCarryOpenAIBodies(t *testing.T) {
	for _, tc := range []struct {
		status int
		code   string
	}{{401, "invalid_api_key"}, {404, "model_not_found"}, {429, "rate_limit_exceeded"}, {500, ""}} {
		r := openaimock.Error(tc.status)
		r.Header = http.Header{"Retry-After": {"7"}}
		ts := openaimock.New(r).Start(t)
		res := post(t, t.Context(), ts.URL, streamBody)
		var body struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		code := ""
		if body.Error.Code != nil {
			code = *body.Error.Code
		}
		if res.StatusCode != tc.status || code != tc.code || body.Error.Message == "" || res.Header.Get("Retry-After") != "7" {
			t.Errorf("status %d: got %d %+v, Retry-After %q", tc.status, res.StatusCode, body, res.Header.Get("Retry-After"))
		}
	}
}

func TestDropClosesTheConnectionAfterFaultAfterDeltas(t *testing.T) {
	ts := openaimock.New(openaimock.Response{Text: []string{"a", "b", "c"}, Fault: openaimock.Drop, FaultAfter: 2}).Start(t)
	data, err := events(post(t, t.Context(), ts.URL, streamBody).Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error = %v, want io.ErrUnexpectedEOF", err)
	}
	if len(data) != 3 { // role + 2 deltas
		t.Errorf("got %d events before the drop: %q", len(data), data)
	}
}

func TestMalformedSendsAnUndecodableChunkThenCarriesOn(t *testing.T) {
	ts := openaimock.New(openaimock.Response{Text: []string{"a", "b"}, Fault: openaimock.Malformed, FaultAfter: 1}).Start(t)
	data, err := events(post(t, t.Context(), ts.URL, streamBody).Body)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, d := range data {
		if d != "[DONE]" && !json.Valid([]byte(d)) {
			bad++
			if d != data[2] {
				t.Errorf("malformed chunk at the wrong place: %q", data)
			}
		}
	}
	if bad != 1 || data[len(data)-1] != "[DONE]" {
		t.Errorf("events = %q", data)
	}
}

func TestStallHoldsUntilTheClientLeaves(t *testing.T) {
	ts := openaimock.New(openaimock.Response{Text: []string{"a", "b"}, Fault: openaimock.Stall, FaultAfter: 1}).Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	data, err := events(post(t, ctx, ts.URL, streamBody).Body)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("read error = %v, want the client's deadline", err)
	}
	if len(data) != 2 {
		t.Errorf("events = %q", data)
	}
}

func TestRequestsAreRecordedAndDecoded(t *testing.T) {
	s := openaimock.New(openaimock.Text("a"))
	ts := s.Start(t)
	body := `{"model":"m","stream":true,"top_k":3,"messages":[{"role":"system","content":[{"type":"text","text":"be "},{"type":"text","text":"brief"}]},` +
		`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}],` +
		`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`
	io.Copy(io.Discard, post(t, t.Context(), ts.URL, body).Body)
	rs := s.Requests()
	if len(rs) != 1 {
		t.Fatalf("recorded %d requests", len(rs))
	}
	r := rs[0]
	if r.DecodeErr != nil || r.Header.Get("Authorization") != "Bearer sk-x" || string(r.Fields["top_k"]) != "3" {
		t.Fatalf("request = %+v", r)
	}
	m := r.Body.Messages
	if m[0].Text() != "be brief" || m[1].ToolCalls[0].Function.Name != "f" || m[2].ToolCallID != "c1" || m[2].Text() != "ok" {
		t.Errorf("messages = %+v", m)
	}
	if r.Body.Tools[0].Function.Name != "f" || string(r.Body.Tools[0].Function.Parameters) != `{"type":"object"}` {
		t.Errorf("tools = %+v", r.Body.Tools)
	}
}

func TestExhaustedScriptAnswers500UnlessFallbackSet(t *testing.T) {
	s := openaimock.New()
	ts := s.Start(t)
	res := post(t, t.Context(), ts.URL, streamBody)
	if res.StatusCode != 500 || res.Header.Get("X-Should-Retry") != "false" {
		t.Errorf("status = %d, x-should-retry = %q", res.StatusCode, res.Header.Get("X-Should-Retry"))
	}
	s.SetFallback(openaimock.Text("again"))
	for range 2 {
		if res := post(t, t.Context(), ts.URL, streamBody); res.StatusCode != 200 {
			t.Errorf("status = %d with a fallback", res.StatusCode)
		}
	}
}

func TestRejectsUnknownRoutesAndNonStreamingRequests(t *testing.T) {
	s := openaimock.New(openaimock.Text("a"))
	ts := s.Start(t)
	res, err := http.Post(ts.URL+"/v1/embeddings", "application/json", strings.NewReader(streamBody))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("unknown route status = %d", res.StatusCode)
	}
	if res := post(t, t.Context(), ts.URL, `{"model":"m","messages":[]}`); res.StatusCode != 400 {
		t.Errorf("non-streaming status = %d", res.StatusCode)
	}
}

func BenchmarkServe200Deltas(b *testing.B) {
	text := make([]string, 200)
	for i := range text {
		text[i] = "tok "
	}
	s := openaimock.New()
	s.SetFallback(openaimock.Response{Text: text})
	ts := s.Start(b)
	for b.Loop() {
		res, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", strings.NewReader(usageBody))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}
