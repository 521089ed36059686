package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store/memstore"
)

func TestBadBodiesNameWhatIsWrong(t *testing.T) {
	long := strings.Repeat("k", 10_000)
	cases := []struct {
		name, method, path, body string
		want                     string
	}{
		{"misspelt field", "POST", "/api/chat/stream", `{"mesage":"hi"}`, `unknown field "mesage"`},
		{"unknown nested field", "POST", "/api/chat/stream", `{"thread_id":"t","decision":{"tokn":"x","apply":true}}`, `unknown field "tokn"`},
		{"wrong type", "POST", "/api/chat/stream", `{"message":["hi"]}`, "message must be a string, not an array"},
		{"wrong nested type", "POST", "/api/chat/stream", `{"thread_id":"t","decision":{"token":"x","apply":"yes"}}`, "decision.apply must be a boolean, not a string"},
		{"wrong type in a list", "POST", "/api/chat/stream", `{"thread_id":"t","tool_results":[{"id":3,"output":1}]}`, "tool_results.id must be a string, not a number"},
		{"not an object", "POST", "/api/chat/stream", `["hi"]`, "the body must be a JSON object, not an array"},
		{"syntax error", "POST", "/api/chat/stream", `{"message" "hi"}`, "malformed JSON at byte 12"},
		{"missing apply", "POST", "/api/chat/stream", `{"thread_id":"t","decision":{"token":"x"}}`, `decision needs "apply"`},
		{"execute: unknown field", "POST", "/api/chat/tools/weather/execute", `{"arguments":{"city":"Lima"}}`, `unknown field "arguments"`},
		{"execute: wrong type", "POST", "/api/chat/tools/weather/execute", `{"page":7}`, "page must be a string, not a number"},
		{"quota: unknown period", "PUT", "/api/chat/quota/alice", `{"daily":5,"hourly":5}`, `unknown field "hourly" (want daily, weekly or monthly)`},
		{"quota: not a number", "PUT", "/api/chat/quota/alice", `{"weekly":"a lot"}`, "weekly must be a whole number or null"},
		{"quota: a fraction", "PUT", "/api/chat/quota/alice", `{"monthly":1.5}`, "monthly must be a whole number or null"},
		{"long unknown field is clipped", "POST", "/api/chat/stream", `{"` + long + `":1}`, `unknown field "` + strings.Repeat("k", 64) + `…"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, fake.New())
			resp := h.do(c.method, c.path, "sam", c.body)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if len(raw) > 400 {
				t.Errorf("the error echoes input: %d bytes", len(raw))
			}
			resp.Body = io.NopCloser(bytes.NewReader(raw))
			wantInvalid(t, resp, c.want)
			h.assertNothingPersisted()
		})
	}
}

// syncBuffer is a log sink safe for the handler's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestMalformedBodiesAreLoggedAtDebugWithoutTheBody(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := newHarness(t, fake.New(), withAPI(func(c *httpapi.Config) { c.Logger = logger }))
	wantInvalid(t, h.do("POST", "/api/chat/stream", "alice", `{"message":"SECRET-BODY-TEXT",`), "the JSON body ends early")
	got := logs.String()
	if !strings.Contains(got, "level=DEBUG") || !strings.Contains(got, "path=/api/chat/stream") || !strings.Contains(got, "ends early") {
		t.Errorf("log %q, want a Debug record with the path and the error", got)
	}
	if strings.Contains(got, "SECRET-BODY-TEXT") {
		t.Errorf("the body reached the log: %q", got)
	}
}

func TestDefaultMaxBodyBytesFitsThePageContextCut(t *testing.T) {
	if httpapi.DefaultMaxBodyBytes != 512<<10 {
		t.Errorf("DefaultMaxBodyBytes = %d, want 512 KiB", httpapi.DefaultMaxBodyBytes)
	}
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	body := func(n int) string {
		return streamBody(t, httpapi.StreamRequest{Message: "hi", PageContext: strings.Repeat("p", n)})
	}
	msg := wantError(t, h.do("POST", "/api/chat/stream", "alice", body(1<<20)), http.StatusRequestEntityTooLarge, assistant.CodeTooLarge)
	if !strings.Contains(msg, "larger than 524288 bytes") {
		t.Errorf("message %q, want it to name the limit", msg)
	}
	if model.Calls() != 0 {
		t.Fatal("the model was called for a refused body")
	}
	h.stream("alice", httpapi.StreamRequest{Message: "hi", PageContext: strings.Repeat("p", 300<<10)})
}

// countingReader counts the bytes the handler reads from a body.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestOversizedBodiesAreRefusedBeforeTheyAreRead(t *testing.T) {
	model := fake.New()
	eng, err := assistant.New(assistant.Config{Provider: model, Store: memstore.New(), Authorizer: assistant.RoleAuthorizer{}})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 4 << 10
	h := httpapi.New(eng, httpapi.Config{Authenticate: authenticate, MaxBodyBytes: limit})
	big, _ := json.Marshal(httpapi.StreamRequest{Message: "hi", PageContext: strings.Repeat("p", 1<<20)})
	for _, tc := range []struct {
		name     string
		declared int64 // Content-Length; -1 for a chunked body
		maxRead  int
	}{
		{"declared length over the limit", int64(len(big)), 0},
		{"chunked body over the limit", -1, limit + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := &countingReader{r: bytes.NewReader(big)}
			req := httptest.NewRequest("POST", "/api/chat/stream", body)
			req.ContentLength = tc.declared
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-User", "alice")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413; body %s", rec.Code, rec.Body)
			}
			if body.n > tc.maxRead {
				t.Errorf("read %d bytes of a refused body, want at most %d", body.n, tc.maxRead)
			}
		})
	}
	if model.Calls() != 0 {
		t.Error("the model was called")
	}
}

// The AI SDK route reads a body up to 16 x MaxBodyBytes (the whole
// conversation), but holds one field or message at a time, each bounded
// as a whole body of the NDJSON route: an oversized page_context or
// message is refused with 413 once its bound is read, not decoded in full,
// while a long history of small messages passes.
func TestUIOversizedFieldsAreRefusedAsTheyAreRead(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	eng, err := assistant.New(assistant.Config{Provider: model, Store: memstore.New(), Authorizer: assistant.RoleAuthorizer{}})
	if err != nil {
		t.Fatal(err)
	}
	const limit = 4 << 10
	h := httpapi.New(eng, httpapi.Config{Authenticate: authenticate, MaxBodyBytes: limit})
	big := strings.Repeat("p", 60<<10) // under the route's 64 KiB, over a field's 4 KiB
	var history []string
	for range 200 {
		history = append(history, `{"role":"user","parts":[{"type":"text","text":"an earlier message, kept short"}]}`)
	}
	msg := func(text string) string {
		return `{"id":"u","role":"user","parts":[{"type":"text","text":"` + text + `"}]}`
	}
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"page_context", `{"id":"c1","trigger":"submit-message","page_context":"` + big + `","messages":[` + msg("hi") + `]}`, http.StatusRequestEntityTooLarge},
		{"the last message", `{"id":"c2","trigger":"submit-message","messages":[` + msg(big) + `]}`, http.StatusRequestEntityTooLarge},
		{"an earlier message", `{"id":"c3","trigger":"submit-message","messages":[` + msg(big) + `,` + msg("hi") + `]}`, http.StatusRequestEntityTooLarge},
		{"an unknown key", `{"id":"c4","trigger":"submit-message","extra":"` + big + `","messages":[` + msg("hi") + `]}`, http.StatusRequestEntityTooLarge},
		{"a long history of small messages", `{"id":"c5","trigger":"submit-message","messages":[` + strings.Join(history, ",") + `,` + msg("hi") + `]}`, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.status == http.StatusOK && len(tc.body) < 2*limit {
				t.Fatalf("the history is %d bytes: not over one field's bound", len(tc.body))
			}
			body := &countingReader{r: strings.NewReader(tc.body)}
			req := httptest.NewRequest("POST", "/api/chat/ui", body)
			req.ContentLength = -1 // chunked: nothing is refused before it is read
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-User", "alice")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d; body %.200s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != http.StatusRequestEntityTooLarge {
				return
			}
			if got, want := rec.Body.String(), "A field or message of the request is larger than 4096 bytes."; got != want {
				t.Errorf("413 says %q, want %q", got, want)
			}
			// What was read before the refusal: the keys before the field,
			// and the field's bound with what the decoder read ahead.
			if body.n > 3*limit {
				t.Errorf("read %d of %d bytes of a refused body, want at most %d", body.n, len(tc.body), 3*limit)
			}
		})
	}
}

// Both streaming routes bound a page_context alike, by MaxBodyBytes: over
// it, 413 before anything is asked of the Engine; under it, the Engine
// cuts it (assistant.Config.MaxPageContextBytes) and answers.
func TestStreamingRoutesBoundPageContextAlike(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, model)
	bodies := map[string]func(n int) string{
		"/api/chat/stream": func(n int) string {
			return streamBody(t, httpapi.StreamRequest{Message: "hi", PageContext: strings.Repeat("p", n)})
		},
		"/api/chat/ui": func(n int) string {
			return `{"id":"pc` + strconv.Itoa(n) + `","trigger":"submit-message","page_context":"` + strings.Repeat("p", n) +
				`","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"hi"}]}]}`
		},
	}
	for path, body := range bodies {
		for n, want := range map[int]int{httpapi.DefaultMaxBodyBytes + 1: http.StatusRequestEntityTooLarge, 300 << 10: http.StatusOK} {
			// Chunked, so a refusal comes from reading, not from a
			// declared length.
			req, err := http.NewRequest("POST", h.srv.URL+path, struct{ io.Reader }{strings.NewReader(body(n))})
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-User", "alice")
			req.Header.Set("Content-Type", "application/json")
			resp, err := h.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := discard(resp); got != want {
				t.Errorf("%s with a %d-byte page_context: %d, want %d", path, n, got, want)
			}
		}
	}
	if model.Calls() != 2 {
		t.Errorf("%d model calls, want 2: one per route, for the page_context under the bound", model.Calls())
	}
}

// A body of exactly MaxBodyBytes is within the bound; one byte more is
// not (a regression of the bounded reader: the exact size was refused).
func TestABodyOfExactlyMaxBodyBytesIsAccepted(t *testing.T) {
	const limit = 1024
	h := newHarness(t, fake.New(fake.Turn{fake.Text("ok")}, fake.Turn{fake.Text("ok")}), withAPI(func(c *httpapi.Config) { c.MaxBodyBytes = limit }))
	body := func(n int) string {
		b := `{"message":"` + strings.Repeat("a", n) + `"}`
		return b
	}
	exact := body(limit - len(body(0)))
	if len(exact) != limit {
		t.Fatalf("premise: body of %d bytes", len(exact))
	}
	if resp := h.do("POST", "/api/chat/stream", "alice", exact); resp.StatusCode != http.StatusOK {
		t.Errorf("a body of exactly %d bytes: %d, want 200", limit, discard(resp))
	} else {
		discard(resp)
	}
	if resp := h.do("POST", "/api/chat/stream", "alice", body(limit-len(body(0))+1)); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body of %d bytes: %d, want 413", limit+1, discard(resp))
	} else {
		discard(resp)
	}
}
