package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
)

// What the Engine sends the model in the example: requests inside the
// configured context window, the summary and title calls the demo model
// answers, and the settings that reach the system prompt.

// recordingModel passes every call to the demo model and records the
// request's size as the Engine estimates it.
type recordingModel struct {
	demo providers.Provider
	mu   sync.Mutex
	reqs []recordedRequest
}

type recordedRequest struct {
	kind   string // "turn", "summary" or "title"
	tokens int    // system, messages and tool definitions at about 4 bytes a token
	req    *providers.Request
}

func (r *recordingModel) Stream(ctx context.Context, req *providers.Request) iter.Seq2[providers.Event, error] {
	kind := "turn"
	switch {
	case req.System == assistant.SummaryInstructions:
		kind = "summary"
	case req.System == assistant.TitleInstructions:
		kind = "title"
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, recordedRequest{kind: kind, tokens: requestTokens(req), req: req})
	r.mu.Unlock()
	return r.demo.Stream(ctx, req)
}

func (r *recordingModel) requests() []recordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedRequest(nil), r.reqs...)
}

// requestTokens estimates a request as the Engine's compaction does: four
// bytes a token, rounded up, and four tokens more for each message, tool
// call and tool definition.
func requestTokens(req *providers.Request) int {
	tok := func(s string) int { return (len(s) + 3) / 4 }
	n := tok(req.System)
	for _, m := range req.Messages {
		n += 4 + tok(m.Content)
		for _, c := range m.ToolCalls {
			n += 4 + tok(c.Name) + tok(string(c.Args))
		}
	}
	for _, d := range req.Tools {
		n += 4 + tok(d.Name) + tok(d.Description) + tok(string(d.Parameters))
	}
	return n
}

// newTestAppWithModel serves the example with s on model.
func newTestAppWithModel(t *testing.T, s settings, model providers.Provider, logs *logBuffer) (*httptest.Server, *app) {
	t.Helper()
	h, err := newApp(s, models{provider: model}, testLogger(logs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.close() })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}

// threadTitle is the title GET /api/chat/threads lists for thread.
func threadTitle(t *testing.T, srv *httptest.Server, user, thread string) string {
	t.Helper()
	resp := doReq(t, srv, "GET", "/api/chat/threads", user, "")
	defer resp.Body.Close()
	var body struct {
		Threads []struct{ ID, Title string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/chat/threads: %d %v", resp.StatusCode, err)
	}
	for _, th := range body.Threads {
		if th.ID == thread {
			return th.Title
		}
	}
	t.Fatalf("thread %s not listed in %+v", thread, body.Threads)
	return ""
}

// filler is a long message that asks for no tool and states no fact.
func filler(i int) string {
	return fmt.Sprintf("Filler %02d, a long message about the garden. The roses along the fence grew tall this year, "+
		"the apple tree dropped its fruit early, the pond froze twice in the cold spell and the robins came back "+
		"to the hedge. The greenhouse glass needs cleaning, the soil wants compost, and the path by the shed is "+
		"muddy again after the rain. Nothing here needs an answer.", i)
}

// The demo's part in issue 11: in a 60-turn thread on a small context
// window, no request exceeds the window, the oldest turns are folded into a
// stored summary, and the fact stated in turn 1, long gone from the
// replayed history, is still answered in turn 60. The thread is named by
// the model's title call after its first answer. 2048 tokens is the
// default window of many local servers: there one earlier turn does not fit
// beside the summary, and the summary must win.
func TestDemoLongThreadStaysInTheWindowAndRemembers(t *testing.T) {
	t.Parallel()
	for _, window := range []int{4096, 2048} {
		t.Run(fmt.Sprint(window), func(t *testing.T) { demoLongThread(t, window) })
	}
}

func demoLongThread(t *testing.T, window int) {
	var logs logBuffer
	rec := &recordingModel{demo: demoModel{}}
	s := settings{DatabasePath: testDatabase(t), ContextWindow: window}
	srv, h := newTestAppWithModel(t, s, rec, &logs)
	ctx := context.Background()

	const first = "my launch code is TEAL-42"
	bs := chat(t, srv, "alice", first)
	thread := bs[0].Meta.ThreadID
	if md := markdown(bs); !strings.Contains(md, "TEAL-42") {
		t.Errorf("turn 1 answer %q does not acknowledge the fact", md)
	}
	if err := h.engine.Wait(ctx); err != nil { // the title call runs in the background
		t.Fatal(err)
	}
	if got, want := threadTitle(t, srv, "alice", thread), demoTitle("User: "+first); got != want || got == first {
		t.Errorf("title after the first answer %q, want the model's %q (not the first message)", got, want)
	}

	for i := 2; i <= 59; i++ {
		bs := stream(t, srv, "alice", map[string]any{"thread_id": thread, "message": filler(i), "page": "notes"})
		if calls := blocksOf(bs, blocks.ToolCall); len(calls) != 0 {
			t.Fatalf("turn %d called tools: %+v", i, calls)
		}
	}
	bs = stream(t, srv, "alice", map[string]any{"thread_id": thread, "message": "what is my launch code?", "page": "notes"})
	if md := markdown(bs); !strings.Contains(md, "TEAL-42") {
		t.Errorf("turn 60 answer %q, want the launch code TEAL-42", md)
	}

	reqs := rec.requests()
	maxTokens, summaries, turns := 0, 0, 0
	for _, r := range reqs {
		maxTokens = max(maxTokens, r.tokens)
		if r.tokens > window {
			t.Errorf("a %s request of about %d tokens, over the %d-token window", r.kind, r.tokens, window)
		}
		switch r.kind {
		case "summary":
			summaries++
		case "turn":
			turns++
		}
	}
	if turns != 60 || summaries == 0 {
		t.Errorf("%d turn calls and %d summary calls, want 60 and at least one", turns, summaries)
	}
	// Turn 60 saw the fact only through the summary: turn 1 had left the
	// replayed history.
	last := reqs[len(reqs)-1]
	for _, m := range last.req.Messages {
		if strings.Contains(m.Content, "TEAL-42") {
			t.Errorf("turn 60 replays a message with the fact, so the summary was not needed: %q", m.Content)
		}
	}
	if !strings.Contains(last.req.System, "<conversation_summary>") || !strings.Contains(last.req.System, first) {
		t.Errorf("turn 60's system prompt has no summary holding %q:\n%s", first, last.req.System)
	}
	th, err := h.store.GetThread(ctx, thread)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains("\n"+th.Summary+"\n", "\n- "+first+"\n") || th.SummaryThrough == 0 {
		t.Errorf("stored summary %q through %d, want the fact as a bullet", th.Summary, th.SummaryThrough)
	}
	if strings.Contains(logs.String(), "summarize history") {
		t.Errorf("a summary call failed:\n%s", logs.String())
	}
	t.Logf("%d requests, largest about %d tokens of a %d-token window; %d summary calls; summary of %d bytes through message %d: %q",
		len(reqs), maxTokens, window, summaries, len(th.Summary), th.SummaryThrough, th.Summary)
}

func TestDemoSettingsReachTheSystemPrompt(t *testing.T) {
	for family, note := range map[string]bool{"": false, "openai": true} {
		t.Run("family="+family, func(t *testing.T) {
			var logs logBuffer
			rec := &recordingModel{demo: demoModel{}}
			s := settings{OperatorAddendum: "Never discuss the weather.", ModelFamily: family}
			srv, _ := newTestAppWithModel(t, s, rec, &logs)
			chat(t, srv, "alice", "hello")
			sys := rec.requests()[0].req.System
			if !strings.Contains(sys, "\n## Site rules\nNever discuss the weather.") {
				t.Errorf("system prompt without the operator addendum:\n%s", sys)
			}
			if got := strings.Contains(sys, "## Reading these instructions"); got != note {
				t.Errorf("family %q: calibration note present %v, want %v", family, got, note)
			}
		})
	}
}
