package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/assistant/httpapi"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/tools"
)

// ---------------------------------------------------------------------------
// Harness

// users is the test's user directory, selected by the X-User header.
var users = map[string]parley.User{
	"alice": {ID: "alice", Name: "Alice", Roles: []string{"user"}},
	"bob":   {ID: "bob", Name: "Bob", Roles: []string{"user"}},
	"sam":   {ID: "sam", Name: "Sam", Roles: []string{"user", "staff"}},
	"eve":   {ID: "eve", Name: "Eve", Roles: []string{"guest"}},
	"ghost": {ID: "", Name: "No ID"}, // Authenticate "succeeds" without an ID
}

const authSecret = "AUTH-INTERNAL-DETAIL"

func authenticate(r *http.Request) (parley.User, error) {
	name := r.Header.Get("X-User")
	u, ok := users[name]
	if !ok {
		return parley.User{}, errors.New(authSecret + ": unknown user " + name)
	}
	return u, nil
}

type weatherArgs struct {
	City string `json:"city"`
}

// testTools: weather (general), staff_report (admin), billing_lookup (only
// on the "billing" page) and add_item (general, mutates: needs approval).
func testTools(t *testing.T) *tools.Set {
	t.Helper()
	set, err := tools.NewSet(
		tools.Must(tools.New(tools.Spec{Name: "weather", Category: "general", Description: "The weather in a city."},
			func(_ context.Context, _ tools.Call, a weatherArgs) (tools.Result, error) {
				return tools.OK("sunny in "+a.City, map[string]string{"city": a.City, "sky": "clear"}), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "staff_report", Category: "admin", Description: "A report for staff."},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) {
				return tools.OK("report", nil), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "billing_lookup", Category: "general", Description: "Look up an invoice.", Pages: []string{"billing"}},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) {
				return tools.OK("invoice", nil), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "add_item", Category: "general", Effect: tools.Mutate, Description: "Add an item."},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) {
				return tools.OK("added", nil), nil
			})),
	)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

type setup struct {
	eng  assistant.Config
	api  httpapi.Config
	wrap func(http.Handler) http.Handler
}

type option func(*setup)

func withEngine(f func(*assistant.Config)) option { return func(s *setup) { f(&s.eng) } }
func withAPI(f func(*httpapi.Config)) option      { return func(s *setup) { f(&s.api) } }
func withMiddleware(m func(http.Handler) http.Handler) option {
	return func(s *setup) { s.wrap = m }
}

type harness struct {
	t     *testing.T
	srv   *httptest.Server
	store *memstore.Store
	model *fake.Provider
}

func newHarness(t *testing.T, model *fake.Provider, opts ...option) *harness {
	t.Helper()
	st := memstore.New()
	s := setup{
		eng: assistant.Config{
			Provider: model,
			Store:    st,
			Tools:    testTools(t),
			Authorizer: assistant.RoleAuthorizer{
				Tools: map[string][]string{"user": {"category:general"}, "staff": {"*"}},
				Staff: []string{"staff"},
			},
		},
		api: httpapi.Config{Authenticate: authenticate},
	}
	for _, o := range opts {
		o(&s)
	}
	eng, err := assistant.New(s.eng)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = httpapi.New(eng, s.api)
	if s.wrap != nil {
		h = s.wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &harness{t: t, srv: srv, store: st, model: model}
}

func (h *harness) request(ctx context.Context, method, path, user, body string) *http.Response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if user != "" {
		req.Header.Set("X-User", user)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

func (h *harness) do(method, path, user, body string) *http.Response {
	h.t.Helper()
	return h.request(context.Background(), method, path, user, body)
}

// send makes a request with exactly the headers given (besides the
// client's own), so a test controls Content-Type, Origin and
// Sec-Fetch-Site.
func (h *harness) send(method, path, body string, hdr map[string]string) *http.Response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

func discard(resp *http.Response) int {
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func streamBody(t *testing.T, r httpapi.StreamRequest) string {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// stream posts one turn, checks it is a 200 NDJSON stream and returns every
// block and the raw body.
func (h *harness) stream(user string, r httpapi.StreamRequest) ([]blocks.Block, string) {
	h.t.Helper()
	resp := h.do("POST", "/api/chat/stream", user, streamBody(h.t, r))
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("stream: status %d, body %s", resp.StatusCode, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		h.t.Fatalf("stream: Content-Type %q, want application/x-ndjson", ct)
	}
	return parseLines(h.t, raw), string(raw)
}

// parseLines parses every line of an NDJSON body; each must be a block.
func parseLines(t *testing.T, raw []byte) []blocks.Block {
	t.Helper()
	if len(raw) == 0 {
		t.Fatal("empty stream")
	}
	if raw[len(raw)-1] != '\n' {
		t.Fatalf("stream does not end with a newline: %q", raw)
	}
	var out []blocks.Block
	for i, line := range bytes.Split(raw[:len(raw)-1], []byte("\n")) {
		b, err := blocks.ParseNDJSON(line)
		if err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		out = append(out, b)
	}
	return out
}

// specificMessages are the codes whose message is worded for the case (the
// field at fault, the limit, the tool, what was not found); every other
// code carries the Engine's safe message.
var specificMessages = map[assistant.ErrorCode]bool{
	assistant.CodeInvalidRequest: true, assistant.CodeTooLarge: true, assistant.CodeForbidden: true,
	assistant.CodeNotFound: true, assistant.CodeConflict: true, "unsupported_media_type": true,
}

// wantError checks resp is a JSON error with status and code and returns
// its message, for the caller to check when the code's message is specific.
func wantError(t *testing.T, resp *http.Response, status int, code assistant.ErrorCode) string {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d; body %s", resp.StatusCode, status, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("error body %q: %v", raw, err)
	}
	if body.Error.Code != string(code) {
		t.Fatalf("error code %q, want %q; body %s", body.Error.Code, code, raw)
	}
	if body.Error.Message == "" {
		t.Errorf("error with no message: %s", raw)
	}
	if !specificMessages[code] && body.Error.Message != assistant.SafeMessage(code) {
		t.Errorf("error message %q, want the safe message %q", body.Error.Message, assistant.SafeMessage(code))
	}
	return body.Error.Message
}

// wantInvalid checks resp is a 400 invalid_request whose message says
// what is wrong: it contains want.
func wantInvalid(t *testing.T, resp *http.Response, want string) {
	t.Helper()
	msg := wantError(t, resp, http.StatusBadRequest, assistant.CodeInvalidRequest)
	if !strings.HasPrefix(msg, "The request is not valid: ") || !strings.Contains(msg, want) {
		t.Errorf("message %q, want it to name what is wrong: %q", msg, want)
	}
}

func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

type threadOut struct {
	ID         string     `json:"id"`
	Title      string     `json:"title"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	ArchivedAt *time.Time `json:"archived_at"`
}

type messageOut struct {
	ID           string         `json:"id"`
	Seq          int            `json:"seq"`
	Role         string         `json:"role"`
	Status       string         `json:"status"`
	Content      string         `json:"content"`
	Blocks       []blocks.Block `json:"blocks"`
	InputTokens  int64          `json:"input_tokens"`
	OutputTokens int64          `json:"output_tokens"`
}

type threadResp struct {
	Thread    threadOut    `json:"thread"`
	Messages  []messageOut `json:"messages"`
	Proposals []struct {
		Token  string `json:"token"`
		Tool   string `json:"tool"`
		Status string `json:"status"`
	} `json:"proposals"`
	Waiting struct {
		Form      string   `json:"form"`
		ToolCalls []string `json:"tool_calls"`
	} `json:"waiting"`
}

func (h *harness) listThreads(user, query string) []threadOut {
	h.t.Helper()
	var out struct {
		Threads []threadOut `json:"threads"`
	}
	decodeJSON(h.t, h.do("GET", "/api/chat/threads"+query, user, ""), &out)
	return out.Threads
}

func (h *harness) getThread(user, id string) threadResp {
	h.t.Helper()
	var out threadResp
	decodeJSON(h.t, h.do("GET", "/api/chat/threads/"+url.PathEscape(id), user, ""), &out)
	return out
}

func threadIDOf(t *testing.T, bs []blocks.Block) string {
	t.Helper()
	if len(bs) == 0 || bs[0].Kind != blocks.Meta || bs[0].Meta == nil || bs[0].Meta.ThreadID == "" {
		t.Fatalf("first block is not a meta block with a thread id: %+v", bs)
	}
	return bs[0].Meta.ThreadID
}

func markdownOf(bs []blocks.Block) string {
	var sb strings.Builder
	for _, b := range bs {
		if b.Kind == blocks.Markdown {
			sb.WriteString(b.Content)
		}
	}
	return sb.String()
}

func absorbAll(bs []blocks.Block) []blocks.Block {
	var out []blocks.Block
	for _, b := range bs {
		out = blocks.Absorb(out, b)
	}
	return out
}

func ofKind(bs []blocks.Block, k blocks.Kind) []blocks.Block {
	var out []blocks.Block
	for _, b := range bs {
		if b.Kind == k {
			out = append(out, b)
		}
	}
	return out
}

// assertNothingPersisted checks no thread exists for any test user and the
// model was never called.
func (h *harness) assertNothingPersisted() {
	h.t.Helper()
	for name, u := range users {
		if u.ID == "" {
			continue
		}
		ts, err := h.store.ListThreads(context.Background(), u.ID, store.ListOptions{IncludeArchived: true})
		if err != nil {
			h.t.Fatal(err)
		}
		if len(ts) != 0 {
			h.t.Errorf("%s has %d threads after a refused request, want 0", name, len(ts))
		}
	}
	if n := h.model.Calls(); n != 0 {
		h.t.Errorf("model called %d times for a refused request, want 0", n)
	}
	if ps, err := h.store.ListSystemPrompts(context.Background()); err != nil || len(ps) != 0 {
		h.t.Errorf("%d system prompts after a refused request (%v), want 0", len(ps), err)
	}
}

// gate is a provider step that blocks the model until the test opens it.
func gate(open <-chan struct{}) fake.Step {
	return fake.Func(func(ctx context.Context, _ *providers.Request) fake.Turn {
		select {
		case <-open:
		case <-ctx.Done():
		}
		return nil
	})
}

// startStream posts a turn without waiting for it to end and returns the
// response once its headers arrive, or nil if they do not arrive within
// wait: a handler that never flushes sends no headers until it returns.
// cancel ends the request; it also ends at the end of the test.
func (h *harness) startStream(user, body string, wait time.Duration) (resp *http.Response, cancel func()) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "POST", h.srv.URL+"/api/chat/stream", strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("X-User", user)
	req.Header.Set("Content-Type", "application/json")
	respc := make(chan *http.Response, 1)
	go func() {
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			close(respc)
			return
		}
		respc <- resp
	}()
	select {
	case resp := <-respc:
		if resp != nil {
			h.t.Cleanup(func() { resp.Body.Close() })
		}
		return resp, cancel
	case <-time.After(wait):
		return nil, cancel
	}
}

// lineReader delivers the lines of a body on a channel as they arrive.
func lineReader(body io.Reader) <-chan []byte {
	ch := make(chan []byte, 64)
	go func() {
		defer close(ch)
		br := bufio.NewReader(body)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				ch <- line
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

func nextLine(t *testing.T, lines <-chan []byte, within time.Duration) (blocks.Block, bool) {
	t.Helper()
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatal("stream ended early")
		}
		b, err := blocks.ParseNDJSON(line)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		return b, true
	case <-time.After(within):
		return blocks.Block{}, false
	}
}

// ---------------------------------------------------------------------------
// Streaming

func TestStreamIsNDJSONFramedByMetaBlocks(t *testing.T) {
	model := fake.New(fake.Turn{
		fake.Text("Hello ", "there. ", "This answer is long enough to be cut into ", "more than one markdown chunk by the parser."),
		fake.Usage(42, 17),
	})
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "hi"})

	threadIDOf(t, bs)
	if bs[0].Meta.MessageID == "" || bs[0].Meta.UserMessageID == "" {
		t.Errorf("first meta block lacks message ids: %+v", bs[0].Meta)
	}
	want := "Hello there. This answer is long enough to be cut into more than one markdown chunk by the parser."
	if got := markdownOf(bs); got != want {
		t.Errorf("markdown = %q, want %q", got, want)
	}
	if n := len(ofKind(bs, blocks.Markdown)); n < 2 {
		t.Errorf("%d markdown blocks, want the text streamed in several", n)
	}
	last := bs[len(bs)-1]
	if last.Kind != blocks.Meta || last.Meta == nil {
		t.Fatalf("last block %+v, want a meta block", last)
	}
	if last.Meta.InputTokens != 42 || last.Meta.OutputTokens != 17 || last.Meta.Finish != "stop" {
		t.Errorf("final meta %+v, want usage 42/17 and finish stop", last.Meta)
	}
	if last.Meta.ThreadID != bs[0].Meta.ThreadID {
		t.Errorf("final meta thread %q, first %q", last.Meta.ThreadID, bs[0].Meta.ThreadID)
	}
}

func TestStreamHeaders(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("ok")}))
	resp := h.do("POST", "/api/chat/stream", "alice", `{"message":"hi"}`)
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	for k, v := range map[string]string{
		"Content-Type": "application/x-ndjson", "Cache-Control": "no-cache",
		"X-Content-Type-Options": "nosniff", "X-Accel-Buffering": "no",
	} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// unwrapWriter is a typical middleware ResponseWriter: it embeds the
// interface (so it has no Flush method of its own) and implements Unwrap.
type unwrapWriter struct {
	http.ResponseWriter
	bytes int
}

func (w *unwrapWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.bytes += n
	return n, err
}

func (w *unwrapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// opaqueWriter hides the underlying writer entirely: nothing can flush it.
type opaqueWriter struct{ w http.ResponseWriter }

func (o opaqueWriter) Header() http.Header         { return o.w.Header() }
func (o opaqueWriter) Write(p []byte) (int, error) { return o.w.Write(p) }
func (o opaqueWriter) WriteHeader(code int)        { o.w.WriteHeader(code) }

func TestStreamFlushesEachBlockAsItForms(t *testing.T) {
	middlewares := map[string]func(http.Handler) http.Handler{
		"direct": nil,
		"unwrapping middleware": func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				next.ServeHTTP(&unwrapWriter{ResponseWriter: w}, r)
			})
		},
	}
	for name, mw := range middlewares {
		t.Run(name, func(t *testing.T) {
			open := make(chan struct{})
			release := sync.OnceFunc(func() { close(open) })
			model := fake.New(fake.Turn{
				fake.Text("First words. "),
				gate(open),
				fake.Delay(10 * time.Millisecond),
				fake.Text("The rest ", "of the answer."),
				fake.Usage(3, 4),
			})
			var opts []option
			if mw != nil {
				opts = append(opts, withMiddleware(mw))
			}
			h := newHarness(t, model, opts...)
			t.Cleanup(release) // before the server closes: it waits for the handler
			resp, _ := h.startStream("alice", `{"message":"hi"}`, 5*time.Second)
			if resp == nil {
				t.Fatal("no response headers while the model is still answering: the stream is buffered")
			}
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			lines := lineReader(resp.Body)

			// The model is blocked: these blocks can only arrive if each was
			// flushed as it was written.
			first, ok := nextLine(t, lines, 5*time.Second)
			if !ok {
				t.Fatal("no first line while the model is still answering: the stream is buffered")
			}
			if first.Kind != blocks.Meta || first.Meta == nil || first.Meta.ThreadID == "" {
				t.Fatalf("first line %+v, want a meta block with a thread id", first)
			}
			second, ok := nextLine(t, lines, 5*time.Second)
			if !ok {
				t.Fatal("the first words did not arrive while the model is still answering")
			}
			if second.Kind != blocks.Markdown || second.Content != "First words. " {
				t.Fatalf("second line %+v, want the first words", second)
			}
			if _, ok := nextLine(t, lines, 50*time.Millisecond); ok {
				t.Fatal("a third block arrived before the model went on")
			}
			release()
			var rest []blocks.Block
			for line := range lines {
				b, err := blocks.ParseNDJSON(line)
				if err != nil {
					t.Fatal(err)
				}
				rest = append(rest, b)
			}
			all := append([]blocks.Block{first, second}, rest...)
			if got := markdownOf(all); got != "First words. The rest of the answer." {
				t.Errorf("markdown %q", got)
			}
			if last := all[len(all)-1]; last.Kind != blocks.Meta || last.Meta.Finish != "stop" {
				t.Errorf("last block %+v, want the final meta", last)
			}
		})
	}

	// Control: the same check does detect a stream nobody can flush, so the
	// subtests above would fail if the handler did not flush.
	t.Run("control: opaque writer buffers", func(t *testing.T) {
		open := make(chan struct{})
		model := fake.New(fake.Turn{fake.Text("First words. "), gate(open), fake.Text("rest")})
		h := newHarness(t, model, withMiddleware(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				next.ServeHTTP(opaqueWriter{w}, r)
			})
		}))
		t.Cleanup(func() { close(open) })
		if resp, _ := h.startStream("alice", `{"message":"hi"}`, 300*time.Millisecond); resp != nil {
			// Headers may arrive by other means; the first line must not.
			if _, ok := nextLine(t, lineReader(resp.Body), 300*time.Millisecond); ok {
				t.Fatal("a line arrived through a writer that cannot flush; the flush test proves nothing")
			}
		}
	})
}

func TestReloadShowsWhatStreamed(t *testing.T) {
	model := fake.New(
		fake.Turn{fake.Text("Let me check. "), fake.CallTool("call_1", "weather", `{"city":"Paris"}`), fake.Usage(10, 2)},
		fake.Turn{fake.Text("It is **sunny** in Paris.\n\n```go\nfmt.Println(1)\n```\nAnything else?"), fake.Usage(20, 8)},
	)
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "Weather in Paris?"})
	id := threadIDOf(t, bs)

	got := h.getThread("alice", id)
	if got.Thread.ID != id {
		t.Fatalf("thread id %q, want %q", got.Thread.ID, id)
	}
	if len(got.Messages) != 2 {
		t.Fatalf("%d messages, want 2: %+v", len(got.Messages), got.Messages)
	}
	user, asst := got.Messages[0], got.Messages[1]
	if user.Role != "user" || user.Content != "Weather in Paris?" || user.Seq != 1 {
		t.Errorf("user message %+v", user)
	}
	if asst.Role != "assistant" || asst.Status != "complete" || asst.Seq != 2 {
		t.Errorf("assistant message role %q status %q seq %d", asst.Role, asst.Status, asst.Seq)
	}
	if asst.ID != bs[0].Meta.MessageID || user.ID != bs[0].Meta.UserMessageID {
		t.Errorf("message ids %q/%q, meta said %q/%q", user.ID, asst.ID, bs[0].Meta.UserMessageID, bs[0].Meta.MessageID)
	}
	if asst.InputTokens != 30 || asst.OutputTokens != 10 {
		t.Errorf("stored usage %d/%d, want 30/10", asst.InputTokens, asst.OutputTokens)
	}
	want := absorbAll(bs)
	if !reflect.DeepEqual(asst.Blocks, want) {
		gj, _ := json.Marshal(asst.Blocks)
		wj, _ := json.Marshal(want)
		t.Errorf("stored blocks differ from the stream:\n got %s\nwant %s", gj, wj)
	}
	// Sanity: the transcript has each kind the stream had.
	for _, k := range []blocks.Kind{blocks.Markdown, blocks.ToolCall, blocks.ToolResult, blocks.Code} {
		if len(ofKind(asst.Blocks, k)) == 0 {
			t.Errorf("stored transcript has no %s block", k)
		}
	}
	// The stored form uses the verbose keys.
	resp := h.do("GET", "/api/chat/threads/"+id, "alice", "")
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(raw, []byte(`"kind":"tool_call"`)) || bytes.Contains(raw, []byte(`"k":`)) {
		t.Errorf("transcript is not in the stored (verbose) form: %s", raw)
	}
}

func TestContinuingAThreadAppendsAndReplaysHistory(t *testing.T) {
	model := fake.New(fake.Turn{fake.Text("First answer.")}, fake.Turn{fake.Text("Second answer.")})
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "first question"})
	id := threadIDOf(t, bs)
	bs2, _ := h.stream("alice", httpapi.StreamRequest{ThreadID: id, Message: "second question"})
	if threadIDOf(t, bs2) != id {
		t.Fatalf("continued stream is on thread %q, want %q", bs2[0].Meta.ThreadID, id)
	}
	if got := h.getThread("alice", id); len(got.Messages) != 4 {
		t.Fatalf("%d messages after two turns, want 4", len(got.Messages))
	}
	reqs := model.Requests()
	msgs := reqs[1].Messages
	if len(msgs) != 3 || msgs[0].Content != "first question" || msgs[1].Content != "First answer." || msgs[2].Content != "second question" {
		t.Errorf("second model call messages %+v, want the replayed first turn and the new question", msgs)
	}
	if ts := h.listThreads("alice", ""); len(ts) != 1 {
		t.Errorf("%d threads, want 1", len(ts))
	}
}

// ---------------------------------------------------------------------------
// Refusals

func TestStreamRejectsBadInput(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		status int
		code   assistant.ErrorCode
		msg    string // what the message must say; "" for the code's safe message
	}{
		{"malformed JSON", `{"message":`, 400, assistant.CodeInvalidRequest, "the JSON body ends early"},
		{"not JSON", `hello`, 400, assistant.CodeInvalidRequest, "malformed JSON at byte 1"},
		{"empty body", ``, 400, assistant.CodeInvalidRequest, "the body is empty"},
		{"wrong type", `{"message":5}`, 400, assistant.CodeInvalidRequest, "message must be a string, not a number"},
		{"trailing garbage", `{"message":"hi"} x`, 400, assistant.CodeInvalidRequest, "malformed JSON at byte 17"},
		{"second value", `{"message":"hi"}{"message":"again"}`, 400, assistant.CodeInvalidRequest, "trailing data after the JSON body"},
		{"trailing closing brace", `{"message":"hi"}}`, 400, assistant.CodeInvalidRequest, "malformed JSON at byte 16"},
		{"trailing closing bracket", `{"message":"hi"}]`, 400, assistant.CodeInvalidRequest, "malformed JSON at byte 16"},
		{"empty message", `{"message":""}`, 400, assistant.CodeInvalidRequest, "message is empty"},
		{"missing message", `{}`, 400, assistant.CodeInvalidRequest, "message is empty"},
		{"whitespace-only message", `{"message":" \n\t "}`, 400, assistant.CodeInvalidRequest, "message is empty"},
		{"message over MaxMessageBytes", `{"message":"` + strings.Repeat("x", 65) + `"}`, 413, assistant.CodeTooLarge, assistant.SafeMessage(assistant.CodeTooLarge)},
		{"body over MaxBodyBytes", `{"message":"` + strings.Repeat("y", 3000) + `"}`, 413, assistant.CodeTooLarge, "larger than 1024 bytes"},
		{"body over MaxBodyBytes after the JSON value", `{"message":"hi"}` + strings.Repeat(" ", 3000), 413, assistant.CodeTooLarge, "larger than 1024 bytes"},
		{"unknown thread", `{"thread_id":"no-such-thread","message":"hi"}`, 404, assistant.CodeNotFound, ""},
		{"overlong thread id", `{"thread_id":"` + strings.Repeat("t", 300) + `","message":"hi"}`, 404, assistant.CodeNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, fake.New(),
				withEngine(func(cfg *assistant.Config) { cfg.MaxMessageBytes = 64 }),
				withAPI(func(cfg *httpapi.Config) { cfg.MaxBodyBytes = 1024 }))
			msg := wantError(t, h.do("POST", "/api/chat/stream", "alice", c.body), c.status, c.code)
			if c.msg == "" && c.code == assistant.CodeInvalidRequest {
				c.msg = assistant.SafeMessage(c.code)
			}
			if c.msg != "" && !strings.Contains(msg, c.msg) {
				t.Errorf("message %q, want it to contain %q", msg, c.msg)
			}
			h.assertNothingPersisted()
			if ts := h.listThreads("alice", ""); len(ts) != 0 {
				t.Errorf("list threads after a refused stream: %+v", ts)
			}
		})
	}
}

// A message exactly at the limit is accepted: the limit is inclusive.
func TestStreamAcceptsMessageAtTheLimit(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("ok")}),
		withEngine(func(cfg *assistant.Config) { cfg.MaxMessageBytes = 64 }))
	h.stream("alice", httpapi.StreamRequest{Message: strings.Repeat("x", 64)})
}

func TestAnotherUsersThreadIsNotFound(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("answer")})
	h := newHarness(t, model)
	bs, _ := h.stream("bob", httpapi.StreamRequest{Message: "bob's secret plans"})
	id := threadIDOf(t, bs)
	calls := model.Calls()

	t.Run("stream", func(t *testing.T) {
		wantError(t, h.do("POST", "/api/chat/stream", "alice", streamBody(t, httpapi.StreamRequest{ThreadID: id, Message: "let me in"})),
			404, assistant.CodeNotFound)
	})
	t.Run("get", func(t *testing.T) {
		wantError(t, h.do("GET", "/api/chat/threads/"+id, "alice", ""), 404, assistant.CodeNotFound)
	})
	t.Run("delete", func(t *testing.T) {
		wantError(t, h.do("DELETE", "/api/chat/threads/"+id, "alice", ""), 404, assistant.CodeNotFound)
	})
	t.Run("staff may read but not write", func(t *testing.T) {
		if got := h.getThread("sam", id); got.Thread.ID != id {
			t.Errorf("staff read thread %q", got.Thread.ID)
		}
		wantError(t, h.do("DELETE", "/api/chat/threads/"+id, "sam", ""), 404, assistant.CodeNotFound)
		wantError(t, h.do("POST", "/api/chat/stream", "sam", streamBody(t, httpapi.StreamRequest{ThreadID: id, Message: "hi"})),
			404, assistant.CodeNotFound)
	})

	// Bob's thread is untouched and nobody else gained a thread.
	got := h.getThread("bob", id)
	if len(got.Messages) != 2 || got.Thread.ArchivedAt != nil {
		t.Errorf("bob's thread changed: %d messages, archived %v", len(got.Messages), got.Thread.ArchivedAt)
	}
	if ts := h.listThreads("alice", ""); len(ts) != 0 {
		t.Errorf("alice has threads: %+v", ts)
	}
	if model.Calls() != calls {
		t.Errorf("the model was called for a refused stream")
	}
	if ts := h.listThreads("bob", ""); len(ts) != 1 {
		t.Errorf("bob has %d threads, want 1", len(ts))
	}
}

func TestUnauthenticatedIs401OnEveryRoute(t *testing.T) {
	h := newHarness(t, fake.New())
	routes := []struct{ method, path, body string }{
		{"POST", "/api/chat/stream", `{"message":"hi"}`},
		{"GET", "/api/chat/threads", ""},
		{"GET", "/api/chat/threads/some-id", ""},
		{"DELETE", "/api/chat/threads/some-id", ""},
		{"GET", "/api/chat/tools", ""},
		{"POST", "/api/chat/threads", ""},
		{"GET", "/api/chat/prompts", ""},
		{"POST", "/api/chat/prompts", `{"name":"n","text":"t"}`},
		{"POST", "/api/chat/prompts/p1/activate", ""},
		{"POST", "/api/chat/prompts/deactivate", ""},
		{"DELETE", "/api/chat/prompts/p1", ""},
	}
	for _, user := range []string{"", "mallory", "ghost"} { // no header, failed authentication, user without an ID
		for _, r := range routes {
			t.Run(r.method+" "+r.path+" as "+user, func(t *testing.T) {
				resp := h.do(r.method, r.path, user, r.body)
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if bytes.Contains(raw, []byte(authSecret)) {
					t.Errorf("authentication error leaked: %s", raw)
				}
				resp.Body = io.NopCloser(bytes.NewReader(raw))
				wantError(t, resp, 401, assistant.CodeUnauthenticated)
			})
		}
	}
	h.assertNothingPersisted()
}

func TestForbiddenUserIs403(t *testing.T) {
	h := newHarness(t, fake.New(), withEngine(func(cfg *assistant.Config) {
		cfg.Authorizer = assistant.RoleAuthorizer{Enabled: []string{"user"}}
	}))
	routes := []struct{ method, path, body string }{
		{"POST", "/api/chat/stream", `{"message":"hi"}`},
		{"GET", "/api/chat/threads", ""},
		{"POST", "/api/chat/threads", ""},
		{"GET", "/api/chat/tools", ""},
	}
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			wantError(t, h.do(r.method, r.path, "eve", r.body), 403, assistant.CodeForbidden)
		})
	}
	h.assertNothingPersisted()
}

func TestDisabledAssistantIs403(t *testing.T) {
	h := newHarness(t, fake.New(), withEngine(func(cfg *assistant.Config) {
		cfg.Authorizer = assistant.RoleAuthorizer{Disabled: true}
	}))
	wantError(t, h.do("POST", "/api/chat/stream", "alice", `{"message":"hi"}`), 403, assistant.CodeForbidden)
	h.assertNothingPersisted()
}

func TestUnknownRoutesAndMethodsAnswerInTheJSONErrorShape(t *testing.T) {
	h := newHarness(t, fake.New())
	for _, tc := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"GET", "/api/chat/stream", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		{"PUT", "/api/chat/threads/x", http.StatusMethodNotAllowed, "method_not_allowed", "GET, PATCH, DELETE"},
		{"POST", "/api/chat/tools", http.StatusMethodNotAllowed, "method_not_allowed", "GET"},
		{"GET", "/api/chat/threads/x/cancel", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		{"PUT", "/api/chat/threads", http.StatusMethodNotAllowed, "method_not_allowed", "GET, POST"},
		{"GET", "/api/chat/threads/x/messages/y/feedback", http.StatusMethodNotAllowed, "method_not_allowed", "PUT, DELETE"},
		{"DELETE", "/api/chat/prompts", http.StatusMethodNotAllowed, "method_not_allowed", "GET, POST"},
		{"GET", "/api/chat/prompts/p1", http.StatusMethodNotAllowed, "method_not_allowed", "DELETE"},
		{"GET", "/api/chat/prompts/p1/activate", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		// A literal segment beside a wildcard one: both routes' methods.
		{"GET", "/api/chat/prompts/deactivate", http.StatusMethodNotAllowed, "method_not_allowed", "POST, DELETE"},
		{"OPTIONS", "/api/chat/stream", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		{"GET", "/api/chat/nope", http.StatusNotFound, "not_found", ""},
		{"POST", "/api/chat/prompts/p1/nope", http.StatusNotFound, "not_found", ""},
		{"GET", "/api/chat/threads/", http.StatusNotFound, "not_found", ""},
	} {
		resp := h.do(tc.method, tc.path, "alice", "")
		var body struct {
			Error struct{ Code, Message string }
		}
		err := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || err != nil || body.Error.Code != tc.code || body.Error.Message == "" ||
			resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d %q Allow=%q body=%+v (%v), want %d %s Allow=%q in the JSON error shape",
				tc.method, tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Allow"), body, err, tc.status, tc.code, tc.allow)
		}
	}
}

// ---------------------------------------------------------------------------
// Failures during a turn

func TestProviderFailureMidStreamEndsWithSafeErrorBlock(t *testing.T) {
	model := fake.New(fake.Turn{
		fake.Text("Partial answer ", "that breaks off"),
		fake.Fail(&providers.Error{Category: providers.CategoryUnavailable, Err: errors.New("SECRET upstream detail")}),
	})
	h := newHarness(t, model)
	bs, raw := h.stream("alice", httpapi.StreamRequest{Message: "hi"})
	id := threadIDOf(t, bs)
	if strings.Contains(raw, "SECRET") {
		t.Errorf("the provider's error text reached the client: %s", raw)
	}
	last := bs[len(bs)-1]
	if last.Kind != blocks.Error || last.ErrorCode != string(assistant.CodeModelUnavailable) {
		t.Fatalf("last block %+v, want an error block model_unavailable", last)
	}
	if last.Content != assistant.SafeMessage(assistant.CodeModelUnavailable) {
		t.Errorf("error block content %q, want the safe message", last.Content)
	}
	if n := len(ofKind(bs, blocks.Error)); n != 1 {
		t.Errorf("%d error blocks, want exactly 1", n)
	}
	if got := markdownOf(bs); got != "Partial answer that breaks off" {
		t.Errorf("streamed markdown %q", got)
	}

	resp := h.do("GET", "/api/chat/threads/"+id, "alice", "")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "SECRET") {
		t.Errorf("the provider's error text was stored and served: %s", body)
	}
	got := h.getThread("alice", id)
	asst := got.Messages[len(got.Messages)-1]
	if asst.Status != "failed" {
		t.Errorf("assistant status %q, want failed", asst.Status)
	}
	if md := markdownOf(asst.Blocks); md != "Partial answer that breaks off" {
		t.Errorf("stored markdown %q, want the partial answer", md)
	}
	if errs := ofKind(asst.Blocks, blocks.Error); len(errs) != 1 || errs[0].ErrorCode != string(assistant.CodeModelUnavailable) {
		t.Errorf("stored error blocks %+v", errs)
	}
}

func TestProviderFailureBeforeTextStillStreams200(t *testing.T) {
	model := fake.New(fake.Turn{fake.Fail(&providers.Error{Category: providers.CategoryRateLimit, Err: errors.New("SECRET 429 body")})})
	h := newHarness(t, model, withEngine(func(c *assistant.Config) { c.ModelRetries = -1 }))
	bs, raw := h.stream("alice", httpapi.StreamRequest{Message: "hi"})
	threadIDOf(t, bs)
	if strings.Contains(raw, "SECRET") {
		t.Errorf("provider text leaked: %s", raw)
	}
	if last := bs[len(bs)-1]; last.Kind != blocks.Error || last.ErrorCode != string(assistant.CodeModelBusy) {
		t.Errorf("last block %+v, want error model_busy", last)
	}
}

func TestToolErrorsAreReportedAndFedBackToTheModel(t *testing.T) {
	model := fake.New(
		fake.Turn{
			fake.CallTool("c1", "no_such_tool", `{}`),
			fake.CallTool("c2", "weather", `{"city":`),
		},
		fake.Turn{fake.Text("Sorry, I could not look that up."), fake.Usage(5, 5)},
	)
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "weather?"})
	id := threadIDOf(t, bs)

	if last := bs[len(bs)-1]; last.Kind != blocks.Meta || last.Meta.Finish != "stop" {
		t.Fatalf("last block %+v, want a final meta: the turn completes", last)
	}
	calls := ofKind(bs, blocks.ToolCall)
	if len(calls) != 2 || calls[0].Name != "no_such_tool" || calls[1].Name != "weather" {
		t.Fatalf("tool_call blocks %+v", calls)
	}
	results := ofKind(bs, blocks.ToolResult)
	if len(results) != 2 {
		t.Fatalf("tool_result blocks %+v, want 2", results)
	}
	wantCodes := []tools.ErrorCode{tools.CodeUnknownTool, tools.CodeInvalidArgs}
	for i, r := range results {
		if r.OK {
			t.Errorf("result %d ok=true, want false: %+v", i, r)
		}
		if r.ID != calls[i].ID {
			t.Errorf("result %d id %q, call id %q", i, r.ID, calls[i].ID)
		}
		if r.ErrorCode != string(wantCodes[i]) {
			t.Errorf("result %d code %q, want %q", i, r.ErrorCode, wantCodes[i])
		}
	}
	if got := markdownOf(bs); got != "Sorry, I could not look that up." {
		t.Errorf("markdown %q", got)
	}

	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	toolMsgs := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.Role == providers.Tool {
			toolMsgs[m.ToolCallID] = m.Content
		}
	}
	for id, want := range map[string]string{
		"c1": `There is no tool named \"no_such_tool\"`,
		"c2": "arguments are not valid JSON",
	} {
		if !strings.Contains(toolMsgs[id], want) {
			t.Errorf("tool message for %s = %q, want it to contain %q", id, toolMsgs[id], want)
		}
		var env struct {
			OK    bool             `json:"ok"`
			Error *tools.ToolError `json:"error"`
		}
		if err := json.Unmarshal([]byte(toolMsgs[id]), &env); err != nil || env.OK || env.Error == nil {
			t.Errorf("tool message for %s is not a failed result envelope: %q (%v)", id, toolMsgs[id], err)
		}
	}

	got := h.getThread("alice", id)
	if asst := got.Messages[1]; asst.Status != "complete" || len(ofKind(asst.Blocks, blocks.ToolResult)) != 2 {
		t.Errorf("stored reply status %q with %d tool results", asst.Status, len(ofKind(asst.Blocks, blocks.ToolResult)))
	}
}

// The model messages of a turn are stored so the next turn replays them,
// but a call the model botched (unparsable arguments, answered with
// INVALID_ARGS) is not: later turns must not replay, and learn from, it.
func TestTurnWithBrokenToolArgumentsReplaysOnlyItsAnswer(t *testing.T) {
	model := fake.New(
		fake.Turn{fake.CallTool("c2", "weather", `{"city":`)},
		fake.Turn{fake.Text("Sorry, that failed.")},
		fake.Turn{fake.Text("Second answer.")},
	)
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "weather?"})
	id := threadIDOf(t, bs)
	if r := ofKind(bs, blocks.ToolResult); len(r) != 1 || r[0].ErrorCode != string(tools.CodeInvalidArgs) {
		t.Fatalf("tool results %+v, want one INVALID_ARGS", r)
	}
	h.stream("alice", httpapi.StreamRequest{ThreadID: id, Message: "and now?"})

	reqs := model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	if m := reqs[1].Messages; m[len(m)-1].Role != providers.Tool || m[len(m)-1].ToolCallID != "c2" {
		t.Errorf("within the turn the model did not see the error: %+v", m)
	}
	var sawCall, sawAnswer bool
	for _, m := range reqs[2].Messages {
		if m.Role == providers.Tool && m.ToolCallID == "c2" || len(m.ToolCalls) > 0 {
			sawCall = true
		}
		if m.Role == providers.Assistant && m.Content == "Sorry, that failed." {
			sawAnswer = true
		}
	}
	if sawCall || !sawAnswer {
		t.Errorf("next turn's history: invalid call replayed %v, answer replayed %v: %+v", sawCall, sawAnswer, reqs[2].Messages)
	}
}

func TestToolNotAllowedForUserIsRefused(t *testing.T) {
	model := fake.New(
		fake.Turn{fake.CallTool("c1", "staff_report", `{}`), fake.CallTool("c2", "add_item", `{}`)},
		fake.Turn{fake.Text("I cannot.")},
	)
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "report please"})
	results := ofKind(bs, blocks.ToolResult)
	if len(results) != 1 || results[0].OK || results[0].ErrorCode != string(tools.CodeUnknownTool) {
		t.Errorf("results %+v, want UNKNOWN_TOOL (hidden tools look absent)", results)
	}
	if c := ofKind(bs, blocks.Confirm); len(c) != 1 || c[0].Name != "add_item" {
		t.Errorf("confirm blocks %+v, want one for add_item (a Mutate tool waits for approval)", c)
	}
	for _, d := range model.Requests()[0].Tools {
		if d.Name == "staff_report" {
			t.Errorf("staff_report was offered to alice")
		}
	}
}

// ---------------------------------------------------------------------------
// Threads and tools

func TestDeleteArchivesTheThread(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("answer")})
	h := newHarness(t, model)
	bs, _ := h.stream("alice", httpapi.StreamRequest{Message: "keep me"})
	keep := threadIDOf(t, bs)
	bs, _ = h.stream("alice", httpapi.StreamRequest{Message: "archive me"})
	gone := threadIDOf(t, bs)

	resp := h.do("DELETE", "/api/chat/threads/"+gone, "alice", "")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("DELETE: %d %q, want 204 and no body", resp.StatusCode, body)
	}
	ts := h.listThreads("alice", "")
	if len(ts) != 1 || ts[0].ID != keep {
		t.Errorf("threads after archive %+v, want only %s", ts, keep)
	}
	got := h.getThread("alice", gone)
	if got.Thread.ArchivedAt == nil {
		t.Errorf("archived thread has no archived_at")
	}
	if len(got.Messages) != 2 || got.Messages[0].Content != "archive me" {
		t.Errorf("archived thread lost its transcript: %+v", got.Messages)
	}
	// An archived thread takes no new turns and cannot be archived again.
	wantError(t, h.do("POST", "/api/chat/stream", "alice", streamBody(t, httpapi.StreamRequest{ThreadID: gone, Message: "more"})),
		404, assistant.CodeNotFound)
	wantError(t, h.do("DELETE", "/api/chat/threads/"+gone, "alice", ""), 404, assistant.CodeNotFound)
	wantError(t, h.do("DELETE", "/api/chat/threads/no-such-thread", "alice", ""), 404, assistant.CodeNotFound)
	wantError(t, h.do("GET", "/api/chat/threads/no-such-thread", "alice", ""), 404, assistant.CodeNotFound)
}

func TestListThreadsNewestFirstWithLimitAndBefore(t *testing.T) {
	model := fake.New()
	model.SetDefault(fake.Turn{fake.Text("answer")})
	h := newHarness(t, model)
	var ids []string
	for _, m := range []string{"one", "two", "three"} {
		bs, _ := h.stream("alice", httpapi.StreamRequest{Message: m})
		ids = append(ids, threadIDOf(t, bs))
		time.Sleep(2 * time.Millisecond) // distinct UpdatedAt
	}
	all := h.listThreads("alice", "")
	if len(all) != 3 || all[0].ID != ids[2] || all[2].ID != ids[0] {
		t.Fatalf("threads %+v, want newest first %v", all, ids)
	}
	if all[0].Title != "three" {
		t.Errorf("title %q, want the first message", all[0].Title)
	}
	if got := h.listThreads("alice", "?limit=2"); len(got) != 2 || got[0].ID != ids[2] {
		t.Errorf("limit=2: %+v", got)
	}
	before := url.QueryEscape(all[0].UpdatedAt.Format(time.RFC3339Nano))
	got := h.listThreads("alice", "?before="+before)
	if len(got) != 2 || got[0].ID != ids[1] || got[1].ID != ids[0] {
		t.Errorf("before=%s: %+v, want the two older threads", before, got)
	}
	if got := h.listThreads("bob", ""); len(got) != 0 {
		t.Errorf("bob sees %d threads of alice's", len(got))
	}
	if got := h.listThreads("alice", "?limit=200"); len(got) != 3 {
		t.Errorf("limit=200: %d threads", len(got))
	}
}

func TestListThreadsRejectsBadQuery(t *testing.T) {
	h := newHarness(t, fake.New())
	for _, q := range []string{
		"?limit=0", "?limit=-1", "?limit=201", "?limit=abc", "?limit=1.5", "?limit=99999999999999999999",
		"?before=yesterday", "?before=2024-01-01", "?before=1700000000",
	} {
		t.Run(q, func(t *testing.T) {
			param, _, _ := strings.Cut(q[1:], "=")
			wantInvalid(t, h.do("GET", "/api/chat/threads"+q, "alice", ""), param+" must be")
		})
	}
}

type toolOut struct {
	Name          string `json:"name"`
	Description   string `json:"description"`
	Category      string `json:"category"`
	Effect        string `json:"effect"`
	NeedsApproval bool   `json:"needs_approval"`
	ClientSide    bool   `json:"client_side"`
}

func (h *harness) listTools(user, query string) map[string]toolOut {
	h.t.Helper()
	var out struct {
		Tools []toolOut `json:"tools"`
	}
	decodeJSON(h.t, h.do("GET", "/api/chat/tools"+query, user, ""), &out)
	m := map[string]toolOut{}
	for _, tl := range out.Tools {
		m[tl.Name] = tl
	}
	return m
}

func TestToolsListsWhatTheUserMayUse(t *testing.T) {
	h := newHarness(t, fake.New())
	names := func(m map[string]toolOut) []string {
		var out []string
		for _, n := range []string{"weather", "staff_report", "billing_lookup", "add_item"} {
			if _, ok := m[n]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	cases := []struct {
		user, query string
		want        []string
	}{
		{"alice", "", []string{"weather", "add_item"}},
		{"alice", "?page=billing", []string{"weather", "billing_lookup", "add_item"}},
		{"alice", "?page=other", []string{"weather", "add_item"}},
		{"sam", "", []string{"weather", "staff_report", "add_item"}},
		{"sam", "?page=billing", []string{"weather", "staff_report", "billing_lookup", "add_item"}},
	}
	for _, c := range cases {
		got := h.listTools(c.user, c.query)
		if g := names(got); !reflect.DeepEqual(g, c.want) || len(got) != len(c.want) {
			t.Errorf("%s%s: tools %v, want %v", c.user, c.query, g, c.want)
		}
	}
	all := h.listTools("sam", "")
	if w := all["weather"]; w.Effect != "read" || w.NeedsApproval || w.Category != "general" || w.Description == "" {
		t.Errorf("weather %+v", w)
	}
	if a := all["add_item"]; a.Effect != "mutate" || !a.NeedsApproval {
		t.Errorf("add_item %+v", a)
	}
}

// Each listed tool carries its arguments' JSON Schema, so a host UI can
// build the args of POST /execute.
func TestToolsListCarriesEachInputSchema(t *testing.T) {
	h := newHarness(t, fake.New())
	type toolSchema struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	var out struct {
		Tools []toolSchema `json:"tools"`
	}
	decodeJSON(t, h.do("GET", "/api/chat/tools", "alice", ""), &out)
	set := testTools(t)
	if len(out.Tools) == 0 {
		t.Fatal("no tools listed")
	}
	for _, tl := range out.Tools {
		tool, _ := set.Lookup(tl.Name)
		var got, want any
		if err := json.Unmarshal(tl.InputSchema, &got); err != nil {
			t.Fatalf("%s: input_schema %s: %v", tl.Name, tl.InputSchema, err)
		}
		if err := json.Unmarshal(tool.Spec().Schema(), &want); err != nil {
			t.Fatal(err)
		}
		if _, isObject := got.(map[string]any); !isObject || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: input_schema %s, want the object %s", tl.Name, tl.InputSchema, tool.Spec().Schema())
		}
	}
	i := slices.IndexFunc(out.Tools, func(tl toolSchema) bool { return tl.Name == "weather" })
	if i < 0 || !bytes.Contains(out.Tools[i].InputSchema, []byte(`"city"`)) {
		t.Errorf("tools %+v: want weather's schema to describe its city argument", out.Tools)
	}
}

// ---------------------------------------------------------------------------
// Disconnects

func TestClientDisconnectDoesNotStopTheTurn(t *testing.T) {
	open := make(chan struct{})
	release := sync.OnceFunc(func() { close(open) })
	model := fake.New(fake.Turn{
		fake.Text("Working on it. "),
		gate(open),
		fake.Text("Finished after the client left."),
		fake.Usage(7, 9),
	})
	serverCtx := make(chan context.Context, 1)
	h := newHarness(t, model, withMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/chat/stream" {
				serverCtx <- r.Context()
			}
			next.ServeHTTP(w, r)
		})
	}))
	t.Cleanup(release)
	resp, cancel := h.startStream("alice", `{"message":"hi"}`, 5*time.Second)
	if resp == nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("no 200 stream: %v", resp)
	}
	lines := lineReader(resp.Body)
	first, ok := nextLine(t, lines, 5*time.Second)
	if !ok {
		t.Fatal("no first line")
	}
	id := first.Meta.ThreadID
	cancel()
	resp.Body.Close()

	// Wait until the server has seen the client go, then let the model finish.
	select {
	case sctx := <-serverCtx:
		select {
		case <-sctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the server never noticed the disconnect")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no server request")
	}
	release()

	deadline := time.Now().Add(5 * time.Second)
	for {
		got := h.getThread("alice", id)
		asst := got.Messages[len(got.Messages)-1]
		if asst.Status == "complete" {
			if md := markdownOf(asst.Blocks); md != "Working on it. Finished after the client left." {
				t.Errorf("stored markdown %q", md)
			}
			if asst.InputTokens != 7 || asst.OutputTokens != 9 {
				t.Errorf("stored usage %d/%d", asst.InputTokens, asst.OutputTokens)
			}
			return
		}
		if asst.Status != "streaming" {
			t.Fatalf("assistant status %q after a disconnect, want complete", asst.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not complete within 5s of the disconnect (status %q)", asst.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
