package anthropic_test

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

	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/anthropic"
)

// fuzzStatuses are the HTTP statuses the fuzzer picks from by index. 103 is
// an informational response the client skips; the stream then goes out as a
// 200.
var fuzzStatuses = [...]int{200, 201, 204, 103, 301, 400, 401, 403, 404, 408, 413, 429, 500, 502, 503, 504, 529}

// fuzzContentTypes are the Content-Type headers the fuzzer picks from by
// index; "" sends none at all.
var fuzzContentTypes = [...]string{
	"text/event-stream",
	"text/event-stream; charset=utf-8",
	"application/json",
	"",
	"text/plain",
}

// Delivery modes, bits of the fuzzer's mode byte.
const (
	modeFlushLines = 1 << iota // flush after every line, so the client reads the body in pieces
	modeAbort                  // cut the connection after the body instead of ending it cleanly
)

type fuzzResponse struct {
	status      int
	contentType string
	mode        uint8
	body        []byte
}

func (r *fuzzResponse) serve(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	if r.contentType == "" {
		w.Header()["Content-Type"] = nil
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
		_ = rc.Flush()
		panic(http.ErrAbortHandler)
	}
}

// FuzzStream serves arbitrary bytes as the response to a Messages request
// and checks that the Provider's sequence honours the providers.Provider
// contract whatever the server sends: no panic, events in order, one
// Finish last or one classified error last, and a consumer that stops
// early sees a prefix of the same events.
func FuzzStream(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s.status, s.ctype, s.mode, s.stop, s.body)
	}
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
	p := anthropic.New(anthropic.Config{BaseURL: ts.URL, Model: "fuzz-model", HTTPClient: ts.Client()})

	f.Fuzz(func(t *testing.T, statusIdx, ctypeIdx, mode, stop uint8, body []byte) {
		resp := &fuzzResponse{
			status:      fuzzStatuses[int(statusIdx)%len(fuzzStatuses)],
			contentType: fuzzContentTypes[int(ctypeIdx)%len(fuzzContentTypes)],
			mode:        mode & (modeFlushLines | modeAbort),
			body:        body,
		}
		if resp.status == http.StatusNoContent {
			// No body to cut: an abort would only break the next request.
			resp.mode &^= modeAbort
		}
		current.Store(resp)
		defer current.Store(nil)

		full := fuzzCollect(t, p, 0)
		checkContract(t, resp, full)
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

type fuzzOutcome struct {
	events  []providers.Event
	err     error
	errAt   int
	elems   int
	ctxDone bool
}

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
			continue // an error must be last, so the loop has to end by itself
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

// rank orders event kinds as the contract does.
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
	last, usages, finishes := 0, 0, 0
	for i, ev := range o.events {
		r := rank(ev.Kind)
		if r < 0 {
			t.Fatalf("event %d has unknown kind %d", i, ev.Kind)
		}
		if r < last {
			t.Fatalf("event %d (kind %d) comes after a later kind:\n%s", i, ev.Kind, describe(o.events))
		}
		last = r
		switch ev.Kind {
		case providers.TextDelta, providers.ReasoningDelta:
			if ev.Text == "" {
				t.Errorf("empty delta at %d", i)
			}
		case providers.ToolCallEvent:
			if len(ev.ToolCall.Args) == 0 {
				t.Errorf("tool call %+v without arguments", ev.ToolCall)
			}
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
	if s, ok := categorySentinels[perr.Category]; !ok || !errors.Is(o.err, s) {
		t.Fatalf("error %v has category %q without its sentinel", o.err, perr.Category)
	}
	status := resp.status
	if status < 200 {
		status = http.StatusOK // the client skipped the informational response
	}
	switch {
	case status >= 400 && resp.mode&modeAbort == 0:
		if len(o.events) != 0 {
			t.Errorf("HTTP %d produced events: %+v", status, o.events)
		}
		if want := providers.CategoryForStatus(status); perr.Category != want || perr.StatusCode != status {
			t.Fatalf("HTTP %d gave category %q, status %d (%v); want %q, %d", status, perr.Category, perr.StatusCode, o.err, want, status)
		}
		if perr.RetryAfter < 0 {
			t.Errorf("negative RetryAfter %v", perr.RetryAfter)
		}
	case status >= 400:
		if want := providers.CategoryForStatus(status); perr.Category != want && perr.Category != providers.CategoryConnection {
			t.Fatalf("HTTP %d cut short gave category %q (%v)", status, perr.Category, o.err)
		}
	default:
		// An accepted stream fails as a dropped, malformed or truncated
		// stream, or by an error event, classified by its type.
		if perr.StatusCode != 0 {
			t.Errorf("HTTP %d stream failure carries StatusCode %d", status, perr.StatusCode)
		}
		if perr.Category != providers.CategoryConnection && !bytes.Contains(resp.body, []byte("error")) {
			t.Fatalf("HTTP %d stream without an error event failed with category %q: %v", status, perr.Category, o.err)
		}
		if perr.Category == providers.CategoryCanceled || perr.Category == providers.CategoryTimeout {
			t.Fatalf("HTTP %d stream failed with category %q: %v", status, perr.Category, o.err)
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
		fmt.Fprintf(&b, "  %d %q %s %+v %q\n", ev.Kind, ev.Text, ev.ToolCall.ID, ev.Usage, ev.Finish)
	}
	return b.String()
}

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

// faultBody is what the mock sends for r up to its fault.
func faultBody(tb testing.TB, r mockResponse) (body []byte) {
	tb.Helper()
	rec := httptest.NewRecorder()
	defer func() {
		if v := recover(); v != nil && v != http.ErrAbortHandler { //nolint:errorlint // the sentinel is panicked as is
			panic(v)
		}
		body = bytes.Clone(rec.Body.Bytes())
	}()
	newMock(r).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages",
		strings.NewReader(`{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)))
	return nil
}

// fuzzSeeds renders realistic streams with the mock, and variations of
// them a real server or proxy produces, as the seed corpus.
func fuzzSeeds(tb testing.TB) []fuzzSeed {
	ok := statusIndex(tb, 200)
	usage := mockUsage{Input: 10, Output: 5, CacheRead: 100, CacheWrite: 20}
	text := mockResponse{Text: []string{"Hel", "lo, ", "world"}, Usage: usage}
	tools := mockResponse{
		Reasoning: []string{"Two ", "lookups."},
		Text:      []string{"Checking both."},
		ToolCalls: []mockCall{
			{ID: "toolu_1", Name: "get_weather", Args: []string{`{"ci`, `ty": "Par`, `is"}`}},
			{ID: "toolu_2", Name: "get_time", Args: []string{`{"tz"`, `: "UTC"}`}},
		},
		Usage: usage,
	}
	textBody, toolsBody := text.body(), tools.body()

	var seeds []fuzzSeed
	add := func(body []byte, mode, stop uint8) {
		seeds = append(seeds, fuzzSeed{status: ok, mode: mode, stop: stop, body: body})
	}
	add(textBody, 0, 2)
	add(textBody, modeFlushLines, 0)
	add(toolsBody, modeFlushLines, 4)
	add(mockResponse{Redacted: true, Text: []string{"ok"}, StopReason: "refusal"}.body(), 0, 0)
	for _, stop := range []string{"max_tokens", "stop_sequence", "pause_turn", "model_context_window_exceeded", "eos"} {
		add(mockResponse{Text: []string{"x"}, StopReason: stop}.body(), 0, 0)
	}

	// Faults: a dropped connection, a malformed event, an error event, a
	// stream cut before its stop reason.
	dropped := faultBody(tb, mockResponse{Text: []string{"partial ", "answer"}, Fault: faultDrop, FaultAfter: 1})
	add(dropped, 0, 0)
	add(dropped, modeAbort, 1)
	add(toolsBody, modeAbort|modeFlushLines, 0)
	add(faultBody(tb, mockResponse{Text: []string{"a", "b"}, Fault: faultBad, FaultAfter: 1}), 0, 0)
	add(faultBody(tb, mockResponse{Text: []string{"a", "b"}, Fault: faultError, FaultAfter: 1}), 0, 0)
	add(faultBody(tb, mockResponse{Text: []string{"a", "b"}, Fault: faultError, ErrorType: "rate_limit_error", FaultAfter: 2}), 0, 0)
	add(textBody[:len(textBody)/2], 0, 0)
	if i := bytes.Index(toolsBody, []byte("event: message_delta")); i > 0 {
		add(toolsBody[:i], 0, 0)
		// An error event after the stop reason.
		add(slices.Concat(toolsBody, []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"x\"}}\n\n")), 0, 0)
	}
	add(nil, 0, 0)

	// Framing: CRLF line ends, comments, data split over lines, events
	// without a name, an unterminated last event.
	add(bytes.ReplaceAll(toolsBody, []byte("\n"), []byte("\r\n")), modeFlushLines, 0)
	add(append([]byte(": keep-alive\n\nretry: 1000\n\n"), textBody...), 0, 0)
	add(bytes.ReplaceAll(textBody, []byte(`"delta":`), []byte("\ndata: \"delta\":")), 0, 0)
	add(bytes.ReplaceAll(textBody, []byte("event: content_block_delta\n"), nil), 0, 0)
	add(bytes.TrimSuffix(textBody, []byte("\n")), 0, 0)
	add([]byte("event: error\ndata: not json\n\n"), 0, 0)

	// HTTP errors with Anthropic's bodies, and a gateway's HTML.
	for _, code := range []int{400, 401, 429, 500, 529} {
		seeds = append(seeds, fuzzSeed{status: statusIndex(tb, code), ctype: 2, body: errorBody(mockErrorType(code), "boom")})
	}
	seeds = append(seeds, fuzzSeed{status: statusIndex(tb, 502), ctype: 4, body: []byte("<html>Bad Gateway</html>")})
	// A non-streamed message.
	seeds = append(seeds, fuzzSeed{status: ok, ctype: 2, body: []byte(`{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)})
	return seeds
}
