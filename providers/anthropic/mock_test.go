package anthropic_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file is a Messages API server for the tests: it streams scripted
// Server-Sent Events as Anthropic does (message_start, content blocks with
// their deltas, message_delta with the stop reason and usage,
// message_stop, and ping events between), answers with error statuses
// and Anthropic's error bodies, breaks streams in the ways the
// conformance suite asks for, and records every request.

// mockResponse scripts the answer to one request.
type mockResponse struct {
	Reasoning []string   // thinking deltas, in a thinking block before the text
	Redacted  bool       // a redacted_thinking block ahead of everything
	Text      []string   // text deltas, in one text block
	ToolCalls []mockCall // tool_use blocks after the text, arguments in pieces
	// StopReason is message_delta's stop_reason; "" means tool_use with
	// ToolCalls, else end_turn.
	StopReason string
	Usage      mockUsage

	// Status, when non-zero, answers with this HTTP status and an
	// Anthropic error body of ErrorType ("" = the type for Status).
	Status    int
	ErrorType string
	Header    http.Header // extra response headers (Retry-After, ...)

	// Fault breaks the stream once FaultAfter deltas (thinking, text and
	// argument pieces together) have gone out.
	Fault      mockFault
	FaultAfter int
}

type mockCall struct {
	ID, Name string
	Args     []string // input_json_delta pieces
}

// mockUsage is Anthropic's usage: Input excludes the cached tokens.
type mockUsage struct {
	Input, Output, CacheRead, CacheWrite int64
}

type mockFault uint8

const (
	noFault    mockFault = iota
	faultDrop            // close the connection
	faultBad             // send an event that is not JSON, then carry on
	faultStall           // hold the connection until the client goes away
	faultError           // send an error event of ErrorType (default overloaded_error)
)

// mockError is the status's error type, as Anthropic documents them.
func mockErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func errorBody(typ, msg string) []byte {
	return mustJSON(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
}

// sseEvent is one rendered event; delta events count toward FaultAfter.
type sseEvent struct {
	data  []byte
	delta bool
}

func event(name string, v any) []byte {
	return fmt.Appendf(nil, "event: %s\ndata: %s\n\n", name, mustJSON(v))
}

// render turns r into its events.
func (r mockResponse) render() []sseEvent {
	var evs []sseEvent
	add := func(name string, v any, delta bool) { evs = append(evs, sseEvent{event(name, v), delta}) }
	add("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_mock", "type": "message", "role": "assistant", "model": "mock-model", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int64{
			"input_tokens": r.Usage.Input, "output_tokens": 1,
			"cache_read_input_tokens": r.Usage.CacheRead, "cache_creation_input_tokens": r.Usage.CacheWrite,
		},
	}}, false)
	index := 0
	block := func(start map[string]any, deltas []map[string]any) {
		add("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": start}, false)
		for _, d := range deltas {
			add("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d}, d["type"] != "signature_delta")
		}
		add("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}, false)
		index++
	}
	if r.Redacted {
		block(map[string]any{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"}, nil)
	}
	if len(r.Reasoning) > 0 {
		var ds []map[string]any
		for _, s := range r.Reasoning {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": s})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"})
		block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds)
	}
	evs = append(evs, sseEvent{data: []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n")})
	if len(r.Text) > 0 {
		var ds []map[string]any
		for _, s := range r.Text {
			ds = append(ds, map[string]any{"type": "text_delta", "text": s})
		}
		block(map[string]any{"type": "text", "text": ""}, ds)
	}
	for _, c := range r.ToolCalls {
		var ds []map[string]any
		for _, a := range c.Args {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": a})
		}
		block(map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": map[string]any{}}, ds)
	}
	stop := r.StopReason
	if stop == "" {
		stop = "end_turn"
		if len(r.ToolCalls) > 0 {
			stop = "tool_use"
		}
	}
	add("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int64{"output_tokens": r.Usage.Output}}, false)
	add("message_stop", map[string]any{"type": "message_stop"}, false)
	return evs
}

// body is the whole stream r sends without a fault.
func (r mockResponse) body() []byte {
	var b bytes.Buffer
	for _, e := range r.render() {
		b.Write(e.data)
	}
	return b.Bytes()
}

// mockRequest is one request the server received.
type mockRequest struct {
	Path   string
	Header http.Header
	Raw    []byte
	Body   wireRequest
	Err    error // decoding Raw
}

// The request body as the Messages API defines it, as far as the tests
// read it.
type wireRequest struct {
	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	Temperature *float64        `json:"temperature"`
	Stream      bool            `json:"stream"`
	System      []wireBlock     `json:"system"`
	Messages    []wireMessage   `json:"messages"`
	Tools       []wireTool      `json:"tools"`
	Thinking    json.RawMessage `json:"thinking"`
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

type wireBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      []wireBlock     `json:"content"`
	IsError      bool            `json:"is_error"`
	CacheControl *cacheControl   `json:"cache_control"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// mockServer answers requests with its script, then its fallback.
type mockServer struct {
	mu       sync.Mutex
	script   []mockResponse
	fallback *mockResponse
	received []mockRequest
}

func newMock(responses ...mockResponse) *mockServer { return &mockServer{script: responses} }

func (s *mockServer) setFallback(r mockResponse) {
	s.mu.Lock()
	s.fallback = &r
	s.mu.Unlock()
}

func (s *mockServer) start(tb testing.TB) *httptest.Server {
	ts := httptest.NewServer(s)
	tb.Cleanup(ts.Close)
	return ts
}

func (s *mockServer) requests() []mockRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mockRequest(nil), s.received...)
}

func (s *mockServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeError(w, http.StatusNotFound, "not_found_error", "mock: no route for "+r.Method+" "+r.URL.Path, nil)
		return
	}
	rec := mockRequest{Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	rec.Err = json.Unmarshal(raw, &rec.Body)
	s.mu.Lock()
	s.received = append(s.received, rec)
	var resp *mockResponse
	if len(s.script) > 0 {
		resp = &s.script[0]
		s.script = s.script[1:]
	} else {
		resp = s.fallback
	}
	s.mu.Unlock()

	switch {
	case resp == nil:
		writeError(w, 500, "api_error", "mock: script exhausted", http.Header{"X-Should-Retry": {"false"}})
		return
	case rec.Err != nil || !rec.Body.Stream:
		writeError(w, 400, "invalid_request_error", "mock: want a JSON body with stream: true", nil)
		return
	case resp.Status != 0:
		typ := resp.ErrorType
		if typ == "" {
			typ = mockErrorType(resp.Status)
		}
		writeError(w, resp.Status, typ, fmt.Sprintf("mock: scripted %s (secret provider detail)", typ), resp.Header)
		return
	}
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs
	}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if resp.Fault == noFault {
		w.Write(resp.body())
		return
	}
	serveFault(w, r, resp)
}

// serveFault streams event by event and breaks the stream before the
// delta after FaultAfter.
func serveFault(w http.ResponseWriter, r *http.Request, resp *mockResponse) {
	rc := http.NewResponseController(w)
	evs := resp.render()
	deltas, i := 0, 0
	for ; i < len(evs); i++ {
		if evs[i].delta {
			if deltas == resp.FaultAfter {
				break
			}
			deltas++
		}
		w.Write(evs[i].data)
	}
	rc.Flush()
	switch resp.Fault {
	case faultDrop:
		conn, _, err := rc.Hijack()
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		conn.Close()
		return
	case faultStall:
		t := time.NewTimer(30 * time.Second)
		defer t.Stop()
		select {
		case <-r.Context().Done():
		case <-t.C:
		}
		return
	case faultBad:
		w.Write([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"trunc\n\n"))
	case faultError:
		typ := resp.ErrorType
		if typ == "" {
			typ = "overloaded_error"
		}
		w.Write(fmt.Appendf(nil, "event: error\ndata: %s\n\n", errorBody(typ, "mock: Overloaded (secret provider detail)")))
		return
	}
	for _, e := range evs[i:] {
		w.Write(e.data)
	}
}

func writeError(w http.ResponseWriter, status int, typ, msg string, h http.Header) {
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_mock")
	w.WriteHeader(status)
	w.Write(errorBody(typ, msg))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// joinText joins the text of blocks.
func joinText(bs []wireBlock) string {
	var b strings.Builder
	for _, x := range bs {
		b.WriteString(x.Text)
	}
	return b.String()
}
