package assistant_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/quota/memquota"
	"github.com/parleyhq/parley/tools"
)

// isSummaryCall tells the summary call from a turn's model calls.
func isSummaryCall(req *providers.Request) bool {
	return req.System == assistant.SummaryInstructions
}

// requestTokens estimates a request as the Engine does: four bytes a token.
func requestTokens(req providers.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content) + 16
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Args) + 16
		}
	}
	for _, d := range req.Tools {
		n += len(d.Name) + len(d.Description) + len(d.Parameters) + 16
	}
	return n / 4
}

// rememberingModel answers every turn with a line of filler, and writes
// summaries that keep every "remember:" line it is shown, as a model
// asked to keep facts would.
type rememberingModel struct {
	mu        sync.Mutex
	failNext  int // summary calls to fail
	summaries int
}

func (m *rememberingModel) turn() fake.Turn {
	return fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn { return m.answer(req) })}
}

func (m *rememberingModel) answer(req *providers.Request) fake.Turn {
	{
		if !isSummaryCall(req) {
			return fake.Turn{fake.Text("Noted. " + strings.Repeat("filler ", 40)), fake.Usage(int64(requestTokens(*req)), 60)}
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.failNext > 0 {
			m.failNext--
			return fake.Turn{fake.Fail(errors.New("summary backend down"))}
		}
		m.summaries++
		var kept []string
		for _, line := range strings.Split(req.Messages[0].Content, "\n") {
			if i := strings.Index(line, "remember:"); i >= 0 {
				kept = append(kept, "- "+strings.TrimSpace(line[i:]))
			}
		}
		return fake.Turn{fake.Text(strings.Join(kept, "\n")), fake.Usage(500, 77)}
	}
}

func TestLongThreadStaysInsideTheWindowAndKeepsTurnOneFacts(t *testing.T) {
	const window = 4096
	model := &rememberingModel{}
	p := fake.New()
	p.SetDefault(model.turn())
	h := newHarness(t, p, func(c *assistant.Config) { c.ContextWindow = window })
	ctx := context.Background()

	var threadID string
	for i := range 40 {
		msg := fmt.Sprintf("Turn %d. %s", i, strings.Repeat("Some context about my project. ", 20))
		if i == 0 {
			msg = "remember: the launch code is TEAL-42. " + msg
		}
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: msg})
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		threadID = reply.ThreadID
	}
	for i, req := range p.Requests() {
		if n := requestTokens(req); n > window {
			t.Errorf("request %d: about %d tokens, over the %d-token window", i, n, window)
		}
	}
	th, err := h.store.GetThread(ctx, threadID)
	if err != nil {
		t.Fatal(err)
	}
	if th.SummaryThrough == 0 || !strings.Contains(th.Summary, "TEAL-42") {
		t.Fatalf("stored summary through %d = %q, want one that keeps turn 1's fact", th.SummaryThrough, th.Summary)
	}
	reqs := p.Requests()
	last := reqs[len(reqs)-1]
	if isSummaryCall(&last) || !strings.Contains(last.System, "TEAL-42") || !strings.Contains(last.System, "<conversation_summary>") {
		t.Errorf("the last turn's system prompt does not carry the summary:\n%s", last.System)
	}
	if len(last.Messages) > 30 {
		t.Errorf("the last turn replayed %d messages; compaction left too much", len(last.Messages))
	}
	if model.summaries == 0 || model.summaries > 15 {
		t.Errorf("%d summary calls over 40 turns; want a few, not one per turn", model.summaries)
	}
}

func TestSummaryCallIsChargedToTheTurn(t *testing.T) {
	model := &rememberingModel{}
	p := fake.New()
	p.SetDefault(model.turn())
	ledger, err := memquota.New(quota.Policy{Defaults: quota.Limits{Daily: quota.Limit(1 << 30)}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, p, func(c *assistant.Config) { c.ContextWindow = 2048; c.Ledger = ledger })
	var threadID string
	var summarized bool
	var charged int64
	for i := range 30 {
		before := model.summaries
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: strings.Repeat("words ", 150)})
		if err != nil {
			t.Fatal(err)
		}
		threadID = reply.ThreadID
		if model.summaries > before {
			summarized = true
			// The fake reports 500 in / 77 out for a summary, and the
			// turn's own call far less output: the turn carries both.
			if reply.Usage.OutputTokens < 77+60 {
				t.Errorf("turn %d summarized but reports %d output tokens; the summary's 77 are missing", i, reply.Usage.OutputTokens)
			}
		}
		charged += reply.Usage.Total()
	}
	if !summarized {
		t.Fatal("no turn summarized")
	}
	u, err := ledger.Usage(context.Background(), "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if u.Daily.Used != charged {
		t.Errorf("ledger charged %d tokens, turns reported %d", u.Daily.Used, charged)
	}
}

func TestFailedSummaryFallsBackToTheHistoryThatFits(t *testing.T) {
	const window = 2048
	model := &rememberingModel{failNext: 1 << 30}
	p := fake.New()
	p.SetDefault(model.turn())
	h := newHarness(t, p, func(c *assistant.Config) { c.ContextWindow = window })
	var threadID string
	for i := range 25 {
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: fmt.Sprintf("turn %d %s", i, strings.Repeat("words ", 120))})
		if err != nil {
			t.Fatalf("turn %d failed with the summarizer down: %v", i, err)
		}
		if !strings.HasPrefix(reply.Text, "Noted.") {
			t.Fatalf("turn %d: %q", i, reply.Text)
		}
		threadID = reply.ThreadID
	}
	for i, req := range p.Requests() {
		if n := requestTokens(req); !isSummaryCall(&req) && n > window {
			t.Errorf("request %d: about %d tokens, over the window", i, n)
		}
	}
	th, _ := h.store.GetThread(context.Background(), threadID)
	if th.SummaryThrough != 0 || th.Summary != "" {
		t.Errorf("a failed summary was stored: through %d %q", th.SummaryThrough, th.Summary)
	}
	reqs := p.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) < 2 || !strings.Contains(last.Messages[len(last.Messages)-1].Content, "turn 24") {
		t.Errorf("the last request lost the user's message: %+v", last.Messages)
	}
}

// Compaction cuts only between turns: every tool result the model reads
// answers a call of the assistant message right before it.
func TestCompactionNeverOrphansAToolCall(t *testing.T) {
	model := &rememberingModel{}
	p := fake.New()
	calls := 0
	p.SetDefault(fake.Turn{fake.Func(func(ctx context.Context, req *providers.Request) fake.Turn {
		if isSummaryCall(req) {
			return model.answer(req)
		}
		if last := req.Messages[len(req.Messages)-1]; last.Role == providers.User {
			calls++
			return fake.Turn{fake.CallTool(fmt.Sprintf("c%d", calls), "get_weather", fmt.Sprintf(`{"city":"%s"}`, strings.Repeat("x", 200+calls)))}
		}
		return fake.Turn{fake.Text("It is sunny. " + strings.Repeat("detail ", 30))}
	})})
	h := newHarness(t, p, func(c *assistant.Config) { c.ContextWindow = 3000 })
	var threadID string
	for i := range 30 {
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: fmt.Sprintf("weather %d? %s", i, strings.Repeat("please ", 40))})
		if err != nil {
			t.Fatal(err)
		}
		threadID = reply.ThreadID
	}
	for i, req := range p.Requests() {
		if isSummaryCall(&req) {
			continue
		}
		open := map[string]bool{}
		for j, m := range req.Messages {
			switch m.Role {
			case providers.Assistant:
				open = map[string]bool{}
				for _, c := range m.ToolCalls {
					open[c.ID] = true
				}
			case providers.Tool:
				if !open[m.ToolCallID] {
					t.Fatalf("request %d message %d: result for %q has no call before it", i, j, m.ToolCallID)
				}
				delete(open, m.ToolCallID)
			default:
				if len(open) > 0 && j > 0 {
					t.Fatalf("request %d message %d: calls %v left without results", i, j, open)
				}
			}
		}
		if len(req.Messages) > 0 && req.Messages[0].Role != providers.User {
			t.Fatalf("request %d starts with a %s message", i, req.Messages[0].Role)
		}
	}
}

// Another instance compacting the same thread first is harmless: the
// turn answers with its own summary, and the stored one is not overwritten.
func TestSummaryRaceLostToAnotherInstanceIsHarmless(t *testing.T) {
	model := &rememberingModel{}
	p := fake.New()
	h := newHarness(t, p, func(c *assistant.Config) { c.ContextWindow = 3000 })
	p.SetDefault(model.turn())
	var threadID string
	for i := range 6 {
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: "remember: item " + fmt.Sprint(i) + " " + strings.Repeat("words ", 120)})
		if err != nil {
			t.Fatal(err)
		}
		threadID = reply.ThreadID
	}
	// The next summary call finds another instance's summary stored meanwhile.
	ctx := context.Background()
	p.SetDefault(fake.Turn{fake.Func(func(c context.Context, req *providers.Request) fake.Turn {
		if isSummaryCall(req) {
			th, _ := h.store.GetThread(ctx, threadID)
			if err := h.store.SetSummary(ctx, threadID, "theirs", th.LastSeq, th.SummaryThrough); err != nil {
				t.Errorf("SetSummary: %v", err)
			}
		}
		return model.answer(req)
	})})
	raced := func() int { model.mu.Lock(); defer model.mu.Unlock(); return model.summaries }
	before := raced()
	for i := 0; raced() == before; i++ {
		if i == 10 {
			t.Fatal("no turn summarized")
		}
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: strings.Repeat("more ", 150)})
		if err != nil || !strings.HasPrefix(reply.Text, "Noted.") {
			t.Fatalf("turn that lost the summary race: %q, %v", reply.Text, err)
		}
	}
	th, _ := h.store.GetThread(ctx, threadID)
	if th.Summary != "theirs" {
		t.Errorf("stored summary %q: the turn that lost the race overwrote the winner's", th.Summary)
	}
}

// At a window so small that one earlier turn does not fit next to the
// summary, the summary wins: it holds more of the thread than any one turn.
func TestTinyWindowKeepsTheSummaryOverTheLastTurn(t *testing.T) {
	const window = 2048
	model := &rememberingModel{}
	p := fake.New()
	p.SetDefault(model.turn())
	h := newHarness(t, p, func(c *assistant.Config) { c.ContextWindow = window })
	var threadID string
	for i := range 20 {
		msg := fmt.Sprintf("Turn %d. %s", i, strings.Repeat("Some context about my project. ", 45))
		if i == 0 {
			msg = "remember: the launch code is TEAL-42."
		}
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		threadID = reply.ThreadID
	}
	reqs := p.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.System, "TEAL-42") {
		t.Errorf("the last turn lost the summary:\n%s", last.System)
	}
	for i, req := range reqs {
		if n := requestTokens(req); n > window {
			t.Errorf("request %d: about %d tokens, over the window", i, n)
		}
	}
}

func TestKeepEndCutsAtALineAndKeepsTheNewest(t *testing.T) {
	s := "- old fact one\n- old fact two\n- newest fact é"
	if got := assistant.KeepEnd(s, 25); got != "- newest fact é" {
		t.Errorf("KeepEnd = %q", got)
	}
}

// Compaction's first step: the large tool results of older turns give way
// to their facts, and when that is enough no summary is made.
func TestOldLargeToolResultsAreShortenedFirst(t *testing.T) {
	p := fake.New()
	calls := 0
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if isSummaryCall(req) {
			return fake.Turn{fake.Text("a summary")}
		}
		if req.Messages[len(req.Messages)-1].Role == providers.User {
			calls++
			return fake.Turn{fake.CallTool(fmt.Sprint("r", calls), "big_report", fmt.Sprintf(`{"n":%d}`, calls))}
		}
		return fake.Turn{fake.Text("Done.")}
	})})
	report := tools.Must(tools.New(tools.Spec{Name: "big_report", Description: "A long report.", Category: "weather"},
		func(_ context.Context, _ tools.Call, in struct {
			N int `json:"n"`
		}) (tools.Result, error) {
			return tools.OK("report", map[string]any{"rows": strings.Repeat("row of data ", 120), "n": in.N, "total": 42}), nil
		}))
	h := newHarness(t, p, func(c *assistant.Config) {
		c.ContextWindow = 4096
		set, err := tools.NewSet(report)
		if err != nil {
			t.Fatal(err)
		}
		c.Tools = set
	})
	var threadID string
	const turns = 8
	for i := range turns {
		r, _, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: fmt.Sprint("report ", i)})
		if err != nil {
			t.Fatal(err)
		}
		threadID = r.ThreadID
	}
	reqs := p.Requests()
	var compacted, whole int
	for _, m := range reqs[len(reqs)-2].Messages { // the last turn's first call
		if m.Role != providers.Tool {
			continue
		}
		switch {
		case strings.Contains(m.Content, `"compacted":true`) && strings.Contains(m.Content, "total=42"):
			compacted++
		case strings.Contains(m.Content, "row of data row of data"):
			whole++
		}
	}
	if compacted != turns-3 || whole != 2 {
		t.Errorf("%d results shortened to their facts and %d whole; want the older %d shortened and the newest 2 whole", compacted, whole, turns-3)
	}
	for _, req := range reqs {
		if isSummaryCall(&req) {
			t.Error("a summary was made though shortening the old results was enough")
		}
	}
}
