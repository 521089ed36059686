package openai_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/internal/openaimock"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/openai"
)

// fuzzStatuses are the HTTP statuses the fuzzer picks from by index. 103 is
// an informational response the client skips; the stream then goes out as a
// 200.
var fuzzStatuses = [...]int{200, 201, 204, 206, 103, 301, 304, 400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 599}

// fuzzContentTypes are the Content-Type headers the fuzzer picks from by
// index; "" sends none at all (no sniffing either).
var fuzzContentTypes = [...]string{
	"text/event-stream",
	"text/event-stream; charset=utf-8",
	"TEXT/EVENT-STREAM;Charset=UTF-8",
	"application/json",
	"",
	"text/plain",
	`text/event-stream; charset="`,
	"application/x-ndjson",
}

// Delivery modes, bits of the fuzzer's mode byte.
const (
	modeFlushLines = 1 << iota // flush after every line, so the client reads the body in pieces
	modeAbort                  // cut the connection after the body instead of ending it cleanly
)

// fuzzResponse is what the fuzz server answers the next request with.
type fuzzResponse struct {
	status      int
	contentType string
	mode        uint8
	body        []byte
}

// serve writes r; it runs in the server's handler goroutine.
func (r *fuzzResponse) serve(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	if r.contentType == "" {
		w.Header()["Content-Type"] = nil // no Content-Type, and no sniffing
	} else {
		w.Header().Set("Content-Type", r.contentType)
	}
	w.WriteHeader(r.status)
	rc := http.NewResponseController(w)
	if r.mode&modeFlushLines != 0 {
		for line := range bytes.Lines(r.body) {
			if _, err := w.Write(line); err != nil {
				break
			}
			_ = rc.Flush()
		}
	} else {
		_, _ = w.Write(r.body)
	}
	if r.mode&modeAbort != 0 {
		// Flush what was written, then drop the connection without the
		// terminating chunk.
		_ = rc.Flush()
		panic(http.ErrAbortHandler)
	}
}

// FuzzStream serves arbitrary bytes as the response body of a
// chat-completions request and checks that the Provider's sequence honours
// the providers.Provider contract whatever the server sends.
func FuzzStream(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.status, s.ctype, s.mode, s.stop, s.body)
	}

	// One server and one provider per fuzz worker; the handler answers with
	// the input under test.
	var current atomic.Pointer[fuzzResponse]
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp := current.Load()
		if resp == nil {
			http.Error(w, "no input", http.StatusTeapot)
			return
		}
		resp.serve(w, r)
	}))
	f.Cleanup(ts.Close)
	p := openai.New(openai.Config{BaseURL: ts.URL + "/v1", Model: "fuzz-model", HTTPClient: ts.Client()})

	f.Fuzz(func(t *testing.T, statusIdx, ctypeIdx, mode, stop uint8, body []byte) {
		resp := &fuzzResponse{
			status:      fuzzStatuses[int(statusIdx)%len(fuzzStatuses)],
			contentType: fuzzContentTypes[int(ctypeIdx)%len(fuzzContentTypes)],
			mode:        mode & (modeFlushLines | modeAbort),
			body:        body,
		}
		if resp.status == http.StatusNoContent || resp.status == http.StatusNotModified {
			// There is no body to cut: the client has the whole response
			// and pools the connection, so an abort would only break the
			// next input's request.
			resp.mode &^= modeAbort
		}
		current.Store(resp)
		defer current.Store(nil)

		full := fuzzCollect(t, p, 0)
		checkContract(t, resp, full)

		// A consumer that stops early gets a prefix of the same events and
		// no further yield (the runtime panics on a yield after false).
		if n := int(stop); n > 0 && n < len(full.events) {
			part := fuzzCollect(t, p, n)
			if part.err != nil {
				t.Fatalf("stopping after %d events: got error %v", n, part.err)
			}
			if !slices.EqualFunc(part.events, full.events[:n], eventEqual) {
				t.Fatalf("stopping after %d events got %+v, want the prefix %+v", n, part.events, full.events[:n])
			}
		}
	})
}

// fuzzOutcome is one drained (or abandoned) sequence.
type fuzzOutcome struct {
	events  []providers.Event
	err     error
	errAt   int // index of the error in the sequence
	elems   int // events and errors yielded
	ctxDone bool
}

// fuzzCollect streams one request and records what the sequence yields,
// breaking after stopAfter events when stopAfter > 0.
func fuzzCollect(t *testing.T, p providers.Provider, stopAfter int) fuzzOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req := &providers.Request{Messages: []providers.Message{{Role: providers.User, Content: "fuzz"}}}
	var o fuzzOutcome
	for ev, err := range p.Stream(ctx, req) {
		o.elems++
		if err != nil {
			if o.err != nil {
				t.Fatalf("second error %v after %v", err, o.err)
			}
			o.err, o.errAt = err, o.elems-1
			if !eventEqual(ev, providers.Event{}) {
				t.Errorf("error %v came with a non-zero event %+v", err, ev)
			}
			// Keep ranging: an error must be the last element, so the
			// loop has to end by itself.
			continue
		}
		if o.err != nil {
			t.Fatalf("event %+v after the error %v", ev, o.err)
		}
		o.events = append(o.events, ev)
		if stopAfter > 0 && len(o.events) == stopAfter {
			break
		}
	}
	o.ctxDone = ctx.Err() != nil
	return o
}

var categorySentinels = map[providers.Category]error{
	providers.CategoryAuth:        providers.ErrAuth,
	providers.CategoryRateLimit:   providers.ErrRateLimit,
	providers.CategoryNotFound:    providers.ErrNotFound,
	providers.CategoryBadRequest:  providers.ErrBadRequest,
	providers.CategoryTimeout:     providers.ErrTimeout,
	providers.CategoryConnection:  providers.ErrConnection,
	providers.CategoryUnavailable: providers.ErrUnavailable,
	providers.CategoryCanceled:    providers.ErrCanceled,
}

// rank orders event kinds as the contract does: deltas, tool calls, usage,
// finish.
func rank(k providers.EventKind) int {
	switch k {
	case providers.TextDelta, providers.ReasoningDelta:
		return 0
	case providers.ToolCallEvent:
		return 1
	case providers.UsageEvent:
		return 2
	case providers.FinishEvent:
		return 3
	}
	return -1
}

func checkContract(t *testing.T, resp *fuzzResponse, o fuzzOutcome) {
	t.Helper()
	if o.ctxDone {
		t.Fatalf("stream did not end within 2s (err %v, %d events)", o.err, len(o.events))
	}

	// Event order: deltas, then tool calls, then at most one Usage, then one
	// Finish, last.
	last, usages, finishes := 0, 0, 0
	for i, ev := range o.events {
		r := rank(ev.Kind)
		if r < 0 {
			t.Fatalf("event %d has unknown kind %d: %+v", i, ev.Kind, ev)
		}
		if r < last {
			t.Fatalf("event %d (kind %d) comes after a later kind; order broken:\n%s", i, ev.Kind, describe(o.events))
		}
		last = r
		switch ev.Kind {
		case providers.UsageEvent:
			usages++
		case providers.FinishEvent:
			finishes++
			if ev.Finish == "" {
				t.Errorf("Finish event without a reason")
			}
			if i != len(o.events)-1 {
				t.Fatalf("Finish is not the last event:\n%s", describe(o.events))
			}
		}
	}
	if usages > 1 {
		t.Fatalf("%d Usage events:\n%s", usages, describe(o.events))
	}

	if o.err == nil {
		if finishes != 1 {
			t.Fatalf("sequence ended without error and with %d Finish events:\n%s", finishes, describe(o.events))
		}
		return
	}

	// Failure: one error, last (fuzzCollect checked that), classified.
	if finishes != 0 {
		t.Fatalf("error %v after a Finish event", o.err)
	}
	if o.errAt != o.elems-1 {
		t.Fatalf("error at %d of %d elements", o.errAt, o.elems)
	}
	perr, ok := errors.AsType[*providers.Error](o.err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *providers.Error", o.err, o.err)
	}
	if perr.Category == "" {
		t.Fatalf("error %v has no Category", o.err)
	}
	if s, ok := categorySentinels[perr.Category]; !ok || !errors.Is(o.err, s) {
		t.Fatalf("error %v has category %q without its sentinel", o.err, perr.Category)
	}
	status := resp.status
	if status < 200 {
		status = http.StatusOK // the client skipped the informational response
	}
	if status >= 400 && resp.mode&modeAbort == 0 {
		// An HTTP error status maps through providers.CategoryForStatus.
		if len(o.events) != 0 {
			t.Errorf("HTTP %d produced events: %+v", status, o.events)
		}
		if want := providers.CategoryForStatus(status); perr.Category != want || perr.StatusCode != status {
			t.Fatalf("HTTP %d gave category %q, status %d (%v); want %q, %d", status, perr.Category, perr.StatusCode, o.err, want, status)
		}
		if perr.RetryAfter < 0 {
			t.Errorf("negative RetryAfter %v", perr.RetryAfter)
		}
		return
	}
	if status >= 400 {
		// The connection broke while the client read the error body.
		if want := providers.CategoryForStatus(status); perr.Category != want && perr.Category != providers.CategoryConnection {
			t.Fatalf("HTTP %d cut short gave category %q (%v); want %q or %q", status, perr.Category, o.err, want, providers.CategoryConnection)
		}
	} else {
		// An accepted stream fails as a dropped, malformed or truncated
		// stream (CategoryConnection) or an error event (CategoryUnavailable).
		if perr.Category != providers.CategoryConnection && perr.Category != providers.CategoryUnavailable {
			t.Fatalf("HTTP %d stream failed with category %q: %v", status, perr.Category, o.err)
		}
		if perr.StatusCode != 0 {
			t.Errorf("HTTP %d stream failure carries StatusCode %d", status, perr.StatusCode)
		}
	}
}

func eventEqual(a, b providers.Event) bool {
	return a.Kind == b.Kind && a.Text == b.Text && a.Usage == b.Usage && a.Finish == b.Finish &&
		a.ToolCall.ID == b.ToolCall.ID && a.ToolCall.Name == b.ToolCall.Name && bytes.Equal(a.ToolCall.Args, b.ToolCall.Args)
}

func describe(evs []providers.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case providers.TextDelta:
			fmt.Fprintf(&b, "  text %q\n", ev.Text)
		case providers.ReasoningDelta:
			fmt.Fprintf(&b, "  reasoning %q\n", ev.Text)
		case providers.ToolCallEvent:
			fmt.Fprintf(&b, "  tool_call id=%q name=%q args=%q\n", ev.ToolCall.ID, ev.ToolCall.Name, ev.ToolCall.Args)
		case providers.UsageEvent:
			fmt.Fprintf(&b, "  usage %+v\n", ev.Usage)
		case providers.FinishEvent:
			fmt.Fprintf(&b, "  finish %q\n", ev.Finish)
		default:
			fmt.Fprintf(&b, "  kind %d %+v\n", ev.Kind, ev)
		}
	}
	return b.String()
}

// fuzzSeed is one entry of the seed corpus, in FuzzStream's argument order.
type fuzzSeed struct {
	status, ctype, mode, stop uint8
	body                      []byte
}

func statusIndex(tb testing.TB, code int) uint8 {
	i := slices.Index(fuzzStatuses[:], code)
	if i < 0 {
		tb.Fatalf("status %d is not in fuzzStatuses", code)
	}
	return uint8(i)
}

// mockBody returns the body openaimock sends for r, as far as it gets
// before a Drop fault cuts the connection.
func mockBody(tb testing.TB, r openaimock.Response, includeUsage bool) (body []byte) {
	tb.Helper()
	rec := httptest.NewRecorder()
	defer func() {
		if v := recover(); v != nil && v != http.ErrAbortHandler { //nolint:errorlint // the sentinel is panicked as is
			panic(v)
		}
		body = bytes.Clone(rec.Body.Bytes())
	}()
	reqBody := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	if includeUsage {
		reqBody = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	}
	openaimock.New(r).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(reqBody)))
	return nil // set by the deferred function
}

// fuzzSeeds renders realistic streams with openaimock, and variations of
// them a real server or proxy produces, as the seed corpus.
func fuzzSeeds(tb testing.TB) []fuzzSeed {
	ok := statusIndex(tb, 200)
	usage := openaimock.Usage{PromptTokens: 12, CompletionTokens: 5, CachedTokens: 4, ReasoningTokens: 2}
	text := openaimock.Response{Text: []string{"Hel", "lo, ", "world"}, Usage: usage}
	tools := openaimock.Response{
		Text:                []string{"Checking both."},
		InterleaveToolCalls: true,
		ToolCalls: []openaimock.ToolCall{
			{ID: "call_1", Name: "get_weather", Args: []string{`{"ci`, `ty": "Par`, `is"}`}},
			{ID: "call_2", Name: "get_time", Args: []string{`{"tz"`, `: "UTC"}`}},
		},
		Usage: usage,
	}
	textBody := mockBody(tb, text, true)
	toolsBody := mockBody(tb, tools, true)

	var seeds []fuzzSeed
	add := func(body []byte, mode, stop uint8) {
		seeds = append(seeds, fuzzSeed{status: ok, mode: mode, stop: stop, body: body})
	}

	// Well-formed streams.
	add(textBody, 0, 2)
	add(mockBody(tb, text, false), modeFlushLines, 0)
	add(toolsBody, modeFlushLines, 4)
	add(mockBody(tb, openaimock.Response{ToolCalls: tools.ToolCalls, FinishReason: "stop"}, true), 0, 0)
	add(mockBody(tb, openaimock.Response{Reasoning: []string{"hm", "m"}, Text: []string{"ok"}, Usage: usage}, true), 0, 1)
	add(mockBody(tb, openaimock.Response{ReasoningField: "reasoning", Reasoning: []string{"think"}, Text: []string{"ok"}}, true), 0, 0)
	add(mockBody(tb, openaimock.Response{Text: []string{"trunc"}, FinishReason: "length"}, true), 0, 0)
	add(mockBody(tb, openaimock.Response{Text: []string{"no"}, FinishReason: "content_filter"}, false), 0, 0)
	add(mockBody(tb, openaimock.Response{Text: []string{"odd"}, FinishReason: "eos_token"}, true), 0, 0)

	// Faults: a dropped connection (the body so far, ended cleanly or cut),
	// a malformed chunk, a stream cut before its finish chunk.
	dropped := mockBody(tb, openaimock.Response{Text: []string{"partial ", "answer"}, Fault: openaimock.Drop, FaultAfter: 1}, true)
	add(dropped, 0, 0)
	add(dropped, modeAbort, 1)
	add(toolsBody, modeAbort|modeFlushLines, 0)
	add(mockBody(tb, openaimock.Response{Text: []string{"a", "b"}, Fault: openaimock.Malformed, FaultAfter: 1}, true), 0, 0)
	add(textBody[:len(textBody)/2], 0, 0)
	if i := bytes.Index(toolsBody, []byte(`"finish_reason":"tool_calls"`)); i > 0 {
		add(toolsBody[:bytes.LastIndex(toolsBody[:i], []byte("data: "))], 0, 0)
	}
	add(nil, 0, 0)

	// Framing a proxy or another server may use: CRLF line ends, comments
	// and event/id/retry fields, a JSON value split over two data lines,
	// an event without the blank line that would dispatch it.
	add(bytes.ReplaceAll(toolsBody, []byte("\n"), []byte("\r\n")), modeFlushLines, 0)
	framed := append([]byte(": keep-alive\n\nretry: 1000\n\n"), bytes.ReplaceAll(textBody, []byte("data: "), []byte("event: message\nid: 7\ndata:"))...)
	add(framed, 0, 0)
	add(bytes.ReplaceAll(textBody, []byte(`"choices":`), []byte("\ndata: \"choices\":")), 0, 0)
	add(append([]byte("event: thread.run.created\n"), textBody...), 0, 0)
	add(bytes.TrimSuffix(bytes.TrimSuffix(textBody, []byte("data: [DONE]\n\n")), []byte("\n")), 0, 0)

	// [DONE] before the finish chunk, and an error event mid-stream.
	if i := bytes.Index(textBody, []byte(`"finish_reason":"stop"`)); i > 0 {
		cut := bytes.LastIndex(textBody[:i], []byte("data: "))
		add(slices.Concat(textBody[:cut], []byte("data: [DONE]\n\n"), textBody[cut:]), 0, 0)
		add(slices.Concat(textBody[:cut], []byte(`data: {"error":{"message":"overloaded","type":"server_error"}}`+"\n\n")), 0, 0)
	}

	// A chunk after the finish chunk, as Azure sends with content-filter
	// results.
	if i := bytes.Index(toolsBody, []byte(`"finish_reason":"tool_calls"`)); i > 0 {
		end := i + bytes.Index(toolsBody[i:], []byte("\n\n")) + 2
		late := []byte(`data: {"id":"chatcmpl-late","object":"chat.completion.chunk","created":1700000000,"model":"mock-model","choices":[{"index":0,"delta":{"content":""},"finish_reason":null,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}` + "\n\n")
		add(slices.Concat(toolsBody[:end], late, toolsBody[end:]), 0, 0)
	}

	// Usage repeated on every chunk, as some servers send it.
	add(bytes.ReplaceAll(textBody, []byte(`"usage":null`), []byte(`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`)), 0, 0)

	// A non-streamed completion, and HTTP errors with OpenAI's bodies.
	seeds = append(seeds, fuzzSeed{status: ok, ctype: 3, body: []byte(`{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)})
	for _, code := range []int{400, 401, 404, 429, 500, 503} {
		seeds = append(seeds, fuzzSeed{status: statusIndex(tb, code), ctype: 3, body: mockBody(tb, openaimock.Error(code), true)})
	}
	seeds = append(seeds, fuzzSeed{status: statusIndex(tb, 502), ctype: 5, body: []byte("<html>Bad Gateway</html>")})
	return seeds
}
