package assistant_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// callsOnce scripts a turn that makes one tool call and then answers.
func callsOnce(id, name, args string) []fake.Turn {
	return []fake.Turn{{fake.CallTool(id, name, args)}, {fake.Text("done")}}
}

// clock is a settable Config.Now that moves a millisecond at each reading,
// as a real one would between events.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Millisecond)
	return c.now
}
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestRepeatedReadCallIsAnsweredFromKnowledge(t *testing.T) {
	p := fake.New()
	clk := &clock{now: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)}
	h := newHarness(t, p, func(c *assistant.Config) {
		c.Now = clk.Now
		c.AutoApprove = func(context.Context, parley.User, tools.Spec) bool { return true }
	})
	turn := func(threadID, id, name, args string) (assistant.Reply, []blocks.Block) {
		t.Helper()
		p.Append(callsOnce(id, name, args)...)
		reply, streamed, err := h.collect(t, alice, assistant.Request{ThreadID: threadID, Message: "go"})
		if err != nil {
			t.Fatal(err)
		}
		return reply, streamed
	}
	r1, _ := turn("", "c1", "get_weather", `{"city":"Paris"}`)
	th := r1.ThreadID
	if n := h.runs["get_weather"].Load(); n != 1 {
		t.Fatalf("runs = %d", n)
	}
	// The same call, keys in another order of spacing: answered from what
	// the thread knows, without running the tool.
	_, streamed := turn(th, "c2", "get_weather", `{ "city" : "Paris" }`)
	if n := h.runs["get_weather"].Load(); n != 1 {
		t.Fatalf("an identical Read call ran the tool again (runs = %d)", n)
	}
	res := find(streamed, blocks.ToolResult)
	if len(res) != 1 || !res[0].OK || !strings.Contains(res[0].Content, "Reused from the same call") {
		t.Fatalf("result block: %+v", res)
	}
	reqs := p.Requests()
	last := reqs[len(reqs)-1].Messages
	if tm := last[len(last)-1]; tm.Role != providers.Tool || !strings.Contains(tm.Content, `"sky":"sunny"`) {
		t.Errorf("the model did not get the earlier data: %+v", tm)
	}
	audit, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: "tool.call", ThreadID: th})
	if len(audit) != 2 || !strings.Contains(string(audit[0].Data), `"transport":"knowledge"`) {
		t.Errorf("the gate's answer is not audited as such: %d rows, newest %s", len(audit), audit[0].Data)
	}

	// Other arguments run the tool.
	turn(th, "c3", "get_weather", `{"city":"Oslo"}`)
	if n := h.runs["get_weather"].Load(); n != 2 {
		t.Fatalf("a call with other arguments was not run (runs = %d)", n)
	}
	// A change in between makes what was known stale.
	turn(th, "c4", "add_note", `{}`)
	turn(th, "c5", "get_weather", `{"city":"Paris"}`)
	if n := h.runs["get_weather"].Load(); n != 3 {
		t.Fatalf("a Read call after a change was answered from stale knowledge (runs = %d)", n)
	}
	// And so does age.
	turn(th, "c6", "get_weather", `{"city":"Paris"}`)
	if n := h.runs["get_weather"].Load(); n != 3 {
		t.Fatalf("runs = %d, want the fresh result reused", n)
	}
	clk.add(6 * time.Minute)
	turn(th, "c7", "get_weather", `{"city":"Paris"}`)
	if n := h.runs["get_weather"].Load(); n != 4 {
		t.Fatalf("a result older than KnowledgeMaxAge answered a call (runs = %d)", n)
	}
}

func TestKnowledgeGateCanBeTurnedOff(t *testing.T) {
	p := fake.New()
	h := newHarness(t, p, func(c *assistant.Config) { c.KnowledgeMaxAge = -1 })
	var th string
	for i := range 2 {
		p.Append(callsOnce("c"+string(rune('1'+i)), "get_weather", `{"city":"Paris"}`)...)
		reply, _, err := h.collect(t, alice, assistant.Request{ThreadID: th, Message: "go"})
		if err != nil {
			t.Fatal(err)
		}
		th = reply.ThreadID
	}
	if n := h.runs["get_weather"].Load(); n != 2 {
		t.Fatalf("runs = %d with the gate off", n)
	}
}

// Freshness is the tool's to declare (B16): a tool that says nothing is
// never reused, a reused result says its age, and the model gets a fresh
// result by calling again in the same turn.
func TestReuseIsTheToolsToDeclare(t *testing.T) {
	var clockRuns, weatherRuns atomic.Int64
	clockTool := tools.Must(tools.New(tools.Spec{Name: "get_time", Description: "The time.", Category: "weather"},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			clockRuns.Add(1)
			return tools.OK("10:00", nil), nil
		}))
	weather := tools.Must(tools.New(tools.Spec{Name: "forecast", Description: "A forecast.", Category: "weather", Reuse: 2 * time.Minute},
		func(context.Context, tools.Call, cityArgs) (tools.Result, error) {
			weatherRuns.Add(1)
			return tools.OK("rain", nil), nil
		}))
	p := fake.New()
	clk := &clock{now: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}
	h := newHarness(t, p, func(c *assistant.Config) {
		c.Now = clk.Now
		c.Tools, _ = tools.NewSet(clockTool, weather)
	})
	var th string
	ask := func(turn ...fake.Turn) []blocks.Block {
		t.Helper()
		p.Append(turn...)
		reply, streamed, err := h.collect(t, alice, assistant.Request{ThreadID: th, Message: "go"})
		if err != nil {
			t.Fatal(err)
		}
		th = reply.ThreadID
		return streamed
	}
	ask(callsOnce("t1", "get_time", `{}`)...)
	clk.add(65 * time.Second)
	ask(callsOnce("t2", "get_time", `{}`)...)
	if n := clockRuns.Load(); n != 2 {
		t.Errorf("a tool that declares no reuse ran %d times for two calls", n)
	}

	ask(callsOnce("w1", "forecast", `{"city":"Oslo"}`)...)
	clk.add(90 * time.Second)
	streamed := ask(callsOnce("w2", "forecast", `{"city":"Oslo"}`)...)
	res := find(streamed, blocks.ToolResult)
	if weatherRuns.Load() != 1 || len(res) != 1 || !strings.Contains(res[0].Content, "Reused from the same call 1 min ago (10:01)") {
		t.Fatalf("runs %d, result %+v: want the result reused, with its age", weatherRuns.Load(), res)
	}
	// The model asks again in the same turn: the tool runs.
	ask(fake.Turn{fake.CallTool("w3", "forecast", `{"city":"Oslo"}`)}, fake.Turn{fake.CallTool("w4", "forecast", `{"city":"Oslo"}`)},
		fake.Turn{fake.Text("fresh")})
	if n := weatherRuns.Load(); n != 2 {
		t.Errorf("forecast ran %d times: a second call in the same turn must run it", n)
	}
	// Past the tool's own Reuse (2 minutes, under KnowledgeMaxAge) it runs.
	clk.add(3 * time.Minute)
	ask(callsOnce("w5", "forecast", `{"city":"Oslo"}`)...)
	if n := weatherRuns.Load(); n != 3 {
		t.Errorf("forecast ran %d times: a result older than the tool's Reuse was reused", n)
	}
}

func TestReuseMustSuitTheTool(t *testing.T) {
	for _, s := range []tools.Spec{
		{Name: "a", Description: "d", Reuse: -time.Second},
		{Name: "b", Description: "d", Effect: tools.Mutate, Reuse: time.Minute},
		{Name: "c", Description: "d", ClientSide: true, Reuse: time.Minute},
	} {
		if err := s.Validate(); !errors.Is(err, tools.ErrInvalidSpec) {
			t.Errorf("%s: Validate = %v, want ErrInvalidSpec", s.Name, err)
		}
	}
}

// A change the user makes while a turn runs (another tab, the host's own
// button) makes what was known stale from then on, within the same turn.
func TestAChangeDuringATurnStopsReuseInIt(t *testing.T) {
	p := fake.New()
	h := newHarness(t, p, func(c *assistant.Config) {
		c.AutoApprove = func(context.Context, parley.User, tools.Spec) bool { return true }
	})
	var th string
	for _, city := range []string{"Paris", "Oslo"} {
		p.Append(callsOnce("c-"+city, "get_weather", `{"city":"`+city+`"}`)...)
		r, _, err := h.collect(t, alice, assistant.Request{ThreadID: th, Message: city})
		if err != nil {
			t.Fatal(err)
		}
		th = r.ThreadID
	}
	// One turn: Paris (reused), then, while the model works on the next
	// step, a change elsewhere, then Oslo.
	p.Append(fake.Turn{fake.CallTool("p2", "get_weather", `{"city":"Paris"}`)},
		fake.Turn{fake.Func(func(ctx context.Context, _ *providers.Request) fake.Turn {
			if _, err := h.eng.ExecuteTool(context.Background(), alice, assistant.ExecuteRequest{Tool: "add_note"}); err != nil {
				t.Error(err)
			}
			return fake.Turn{fake.CallTool("o2", "get_weather", `{"city":"Oslo"}`)}
		})},
		fake.Turn{fake.Text("done")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: th, Message: "both again"}); err != nil {
		t.Fatal(err)
	}
	if n := h.runs["get_weather"].Load(); n != 3 {
		t.Errorf("get_weather ran %d times, want 3: Paris reused, Oslo run again after the change", n)
	}
}
