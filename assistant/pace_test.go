package assistant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/tools"
)

// The turn's pace (A7): wrap-up nudges, a budget check before each model
// call, and a summary with no tools after a change.

// The notes the model is given, as the Engine words them.
const (
	wrapUpSays  = "Wrap up"
	answerSays  = "Do not call tools. Answer the user now"
	changedSays = "The change was carried out"
)

// eagerModel calls get_weather for a new city whenever it is offered tools,
// and answers otherwise; calls counts the calls it made, offered or not
// (alwaysCall: it calls even when offered none).
func eagerModel(calls *atomic.Int64, alwaysCall bool) *fake.Provider {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
		if len(req.Tools) == 0 && !alwaysCall {
			return fake.Turn{fake.Text("Here is what I found.")}
		}
		i := calls.Add(1)
		return fake.Turn{fake.Text("Checking."), fake.CallTool(fmt.Sprint("c", i), "get_weather", fmt.Sprintf(`{"city":"town %d"}`, i))}
	})})
	return p
}

func TestModelIsToldToWrapUpThenToAnswer(t *testing.T) {
	var calls atomic.Int64
	p := eagerModel(&calls, false)
	h := newHarness(t, p, func(c *assistant.Config) {
		c.MaxToolRounds, c.WrapUpAfterToolCalls, c.MaxTurnToolCalls = 10, 2, 4
	})
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "weather everywhere"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 5 || h.runs["get_weather"].Load() != 4 || !strings.Contains(reply.Text, "Here is what I found.") {
		t.Fatalf("%d requests, %d runs, answer %q: want 4 calls, then an answer", len(reqs), h.runs["get_weather"].Load(), reply.Text)
	}
	for i, req := range reqs {
		nudged, forced := strings.Contains(req.System, wrapUpSays), strings.Contains(req.System, answerSays)
		wantNudge, wantForced := i == 2 || i == 3, i == 4
		if nudged != wantNudge || forced != wantForced || (len(req.Tools) == 0) != wantForced {
			t.Errorf("request %d (after %d calls): nudged %v, forced %v, %d tools", i+1, i, nudged, forced, len(req.Tools))
		}
	}
}

func TestTokenAndTimeBudgetsForceAnAnswer(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*assistant.Config)
		step fake.Step // in the first call, before its tool call
	}{
		{"tokens", func(c *assistant.Config) { c.AnswerAfterTokens = 500 }, fake.Usage(400, 150)},
		{"time", func(c *assistant.Config) { c.AnswerAfter = 200 * time.Millisecond }, fake.Delay(300 * time.Millisecond)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			p := fake.New(fake.Turn{tc.step, fake.CallTool("c1", "get_weather", `{"city":"Oslo"}`)})
			p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
				i := calls.Add(1) // it keeps calling tools, offered or not
				return fake.Turn{fake.Text("Enough."), fake.CallTool(fmt.Sprint("x", i), "get_weather", `{"city":"Bergen"}`)}
			})})
			h := newHarness(t, p, tc.mod)
			reply, _, err := h.collect(t, alice, assistant.Request{Message: "weather"})
			if err != nil {
				t.Fatal(err)
			}
			reqs := p.Requests()
			if len(reqs) != 2 || len(reqs[1].Tools) != 0 || !strings.Contains(reqs[1].System, "used the time and tokens it may") {
				t.Fatalf("%d requests; the second offers %d tools: want the budget to force an answer", len(reqs), len(reqs[len(reqs)-1].Tools))
			}
			if n := h.runs["get_weather"].Load(); n != 1 {
				t.Errorf("get_weather ran %d times: a call made past the budget ran", n)
			}
			if reply.Text != "Enough." {
				t.Errorf("answer %q", reply.Text)
			}
		})
	}
}

// After a change succeeds, the model reports it: its next call offers no
// tools, whether the change ran in the turn (AutoApprove) or was a card
// the user applied.
func TestAfterAChangeTheModelReportsItWithNoTools(t *testing.T) {
	t.Run("auto-approved", func(t *testing.T) {
		p := fake.New(fake.Turn{fake.CallTool("a1", "add_note", `{}`)}, fake.Turn{fake.Text("Added.")})
		h := newHarness(t, p, func(c *assistant.Config) {
			c.AutoApprove = func(context.Context, parley.User, tools.Spec) bool { return true }
		})
		if _, _, err := h.collect(t, alice, assistant.Request{Message: "add a note"}); err != nil {
			t.Fatal(err)
		}
		reqs := p.Requests()
		if h.runs["add_note"].Load() != 1 || len(reqs) != 2 || len(reqs[1].Tools) != 0 || !strings.Contains(reqs[1].System, changedSays) {
			t.Fatalf("runs %d, %d requests: want the change reported with no tools", h.runs["add_note"].Load(), len(reqs))
		}
	})
	t.Run("applied card", func(t *testing.T) {
		p := fake.New(fake.Turn{fake.CallTool("a1", "add_note", `{}`)})
		h := newHarness(t, p)
		reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "add a note"})
		if err != nil {
			t.Fatal(err)
		}
		cards := find(streamed, blocks.Confirm)
		if len(cards) != 1 {
			t.Fatalf("cards %d", len(cards))
		}
		p.Append(fake.Turn{fake.Text("Added.")})
		if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
			Decision: &assistant.Decision{Token: cards[0].ID, Apply: true}}); err != nil {
			t.Fatal(err)
		}
		last := p.Requests()[1]
		if h.runs["add_note"].Load() != 1 || len(last.Tools) != 0 || !strings.Contains(last.System, changedSays) {
			t.Errorf("runs %d, %d tools offered after the applied change", h.runs["add_note"].Load(), len(last.Tools))
		}
	})
	t.Run("declined card", func(t *testing.T) {
		p := fake.New(fake.Turn{fake.CallTool("a1", "add_note", `{}`)})
		h := newHarness(t, p)
		reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "add a note"})
		if err != nil {
			t.Fatal(err)
		}
		p.Append(fake.Turn{fake.Text("Fine.")})
		if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
			Decision: &assistant.Decision{Token: find(streamed, blocks.Confirm)[0].ID}}); err != nil {
			t.Fatal(err)
		}
		if last := p.Requests()[1]; len(last.Tools) == 0 || strings.Contains(last.System, changedSays) {
			t.Error("a declined card, which changed nothing, took the model's tools away")
		}
	})
}

// A change made in the round that left client calls waiting is reported
// when their results come back: that turn's first call has no tools.
func TestChangeBeforeAClientCallIsReportedWhenItsResultsComeBack(t *testing.T) {
	p := fake.New(fake.Turn{fake.CallTool("a1", "add_note", `{}`), fake.CallTool("loc1", "get_location", `{"precise": true}`)})
	h, _ := clientHarness(t, p, func(c *assistant.Config) {
		c.AutoApprove = func(context.Context, parley.User, tools.Spec) bool { return true }
		set, err := tools.NewSet(append(c.Tools.All(), h0AddNote(t))...)
		if err != nil {
			t.Fatal(err)
		}
		c.Tools = set
	})
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "add a note and find me"})
	if err != nil {
		t.Fatal(err)
	}
	p.Append(fake.Turn{fake.Text("Added, and you are in Oslo.")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
		ToolResults: []assistant.ToolResult{{ID: "loc1", Output: json.RawMessage(`{"city":"Oslo"}`)}}}); err != nil {
		t.Fatal(err)
	}
	last := p.Requests()[1]
	if len(last.Tools) != 0 || !strings.Contains(last.System, changedSays) {
		t.Errorf("after the client's results, %d tools were offered: the earlier change was not reported first", len(last.Tools))
	}
}

// h0AddNote is a Mutate tool for harnesses whose registry has none.
func h0AddNote(t *testing.T) tools.BaseTool {
	t.Helper()
	return tools.Must(tools.New(tools.Spec{Name: "add_note", Description: "Adds a note.", Category: "weather", Effect: tools.Mutate},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.OK("added", nil), nil }))
}
