package assistant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/tools"
)

// The quota's reservation sizes what a turn really sends: the admitted
// text (form answers, a regenerated message), the client's tool outputs
// and the entities, not only Request.Message. Each test checks the
// estimate of a turn against the first request the model got in it.

// reserveLog is a Ledger that records the estimates it is asked to hold.
type reserveLog struct {
	quota.Ledger
	mu        sync.Mutex
	estimates []int64
}

func (l *reserveLog) Reserve(ctx context.Context, userID string, estimate int64, now time.Time) (quota.Hold, error) {
	l.mu.Lock()
	l.estimates = append(l.estimates, estimate)
	l.mu.Unlock()
	return l.Ledger.Reserve(ctx, userID, estimate, now)
}

func (l *reserveLog) last(t *testing.T) int64 {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.estimates) == 0 {
		t.Fatal("nothing was reserved")
	}
	return l.estimates[len(l.estimates)-1]
}

// estimateOutput is the MaxOutputTokens of these tests: the reservation's
// output allowance.
const estimateOutput = 100

func estimateHarness(t *testing.T, p providers.Provider, mod ...func(*assistant.Config)) (*harness, *reserveLog) {
	t.Helper()
	l := &reserveLog{Ledger: newLedger(t, 1_000_000_000)}
	h := newHarness(t, p, append([]func(*assistant.Config){func(c *assistant.Config) {
		c.Ledger, c.MaxOutputTokens = l, estimateOutput
	}}, mod...)...)
	return h, l
}

// sentTokens is a request's size at four bytes a token: what the
// reservation must at least cover of the call.
func sentTokens(req providers.Request) int64 {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Args)
		}
	}
	for _, d := range req.Tools {
		n += len(d.Name) + len(d.Description) + len(d.Parameters)
	}
	return int64(n / 4)
}

// checkCovers fails unless the turn's reservation covers the first request
// the turn sent (the request at index first of p's), and the text that must
// be in it is.
func checkCovers(t *testing.T, l *reserveLog, p *fake.Provider, first int, want string) {
	t.Helper()
	reqs := p.Requests()
	if len(reqs) <= first {
		t.Fatalf("the model got %d requests, want a request at %d", len(reqs), first)
	}
	req := reqs[first]
	if !strings.Contains(fmt.Sprint(req.System, req.Messages), want) {
		t.Fatalf("the request does not carry the %d bytes under test", len(want))
	}
	est, sent := l.last(t), sentTokens(req)
	if est-estimateOutput < sent {
		t.Errorf("reserved %d tokens (%d for input), but the first call sent about %d", est, est-estimateOutput, sent)
	}
	if limit := int64(assistant.DefaultContextWindow + estimateOutput); est > limit {
		t.Errorf("reserved %d tokens, more than the window and the output allowance (%d)", est, limit)
	}
}

func TestReservationCoversFormAnswers(t *testing.T) {
	var qs []string
	for i := range 6 {
		qs = append(qs, fmt.Sprintf(`{"id": "q%d", "label": "Question %d", "type": "text"}`, i, i))
	}
	p := fake.New(fake.Turn{fake.CallTool("f1", assistant.AskUserName, `{"questions": [`+strings.Join(qs, ",")+`]}`)})
	h, l := estimateHarness(t, p)
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "plan my trip"})
	if err != nil {
		t.Fatal(err)
	}
	answer := strings.Repeat("lorem ipsum ", 330) // about 4 KB, each of six answers
	values := map[string]json.RawMessage{}
	for i := range 6 {
		values[fmt.Sprintf("q%d", i)], _ = json.Marshal(fmt.Sprintf("%d %s", i, answer))
	}
	p.Append(fake.Turn{fake.Text("Thanks.")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
		Form: &assistant.FormAnswer{ID: "f1", Values: values}}); err != nil {
		t.Fatal(err)
	}
	checkCovers(t, l, p, 1, "5 "+strings.TrimSpace(answer))
}

func TestReservationCoversARegeneratedMessage(t *testing.T) {
	long := strings.Repeat("Tell me about the weather. ", 800) // about 21 KB
	p := fake.New(fake.Turn{fake.Text("It is sunny.")}, fake.Turn{fake.Text("Still sunny.")})
	h, l := estimateHarness(t, p)
	reply, _, err := h.collect(t, alice, assistant.Request{Message: long})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID, Regenerate: true}); err != nil {
		t.Fatal(err)
	}
	checkCovers(t, l, p, 1, long)
}

func TestReservationCoversClientToolOutputs(t *testing.T) {
	p := fake.New(fake.Turn{fake.CallTool("loc1", "get_location", `{"precise": true}`)})
	l := &reserveLog{Ledger: newLedger(t, 1_000_000_000)}
	h, _ := clientHarness(t, p, func(c *assistant.Config) { c.Ledger, c.MaxOutputTokens = l, estimateOutput })
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "where am I?"})
	if err != nil {
		t.Fatal(err)
	}
	place := strings.Repeat("a street in Oslo, ", 800) // about 14 KB, within the result budget
	out, _ := json.Marshal(map[string]string{"place": place})
	p.Append(fake.Turn{fake.Text("You are in Oslo.")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
		ToolResults: []assistant.ToolResult{{ID: "loc1", Output: out}}}); err != nil {
		t.Fatal(err)
	}
	checkCovers(t, l, p, 1, place[:1000])
}

func TestReservationCoversEntities(t *testing.T) {
	text := strings.Repeat("Project notes. ", 135) // about 2 KB, each of four
	p := fake.New(fake.Turn{fake.Text("Noted.")})
	h, l := estimateHarness(t, p, func(c *assistant.Config) {
		c.Authorizer = assistant.RoleAuthorizer{
			Entities: func(context.Context, parley.User, assistant.EntityRef) bool { return true },
		}
		c.ResolveEntity = func(_ context.Context, _ parley.User, ref assistant.EntityRef) (assistant.Entity, error) {
			return assistant.Entity{Title: "Project " + ref.ID, Text: ref.ID + " " + text}, nil
		}
	})
	var refs []assistant.EntityRef
	for i := range 4 {
		refs = append(refs, assistant.EntityRef{Type: "project", ID: fmt.Sprint("p", i)})
	}
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "compare them", Entities: refs}); err != nil {
		t.Fatal(err)
	}
	checkCovers(t, l, p, 0, "p3 "+strings.TrimSpace(text[:1000]))
}

// A decision turn's first call carries the approved call and its result,
// which may take the whole result budget.
func TestReservationCoversADecisionsResult(t *testing.T) {
	big := strings.Repeat("row of exported data, ", 1000) // about 22 KB
	export := tools.Must(tools.WithPropose(tools.Must(tools.New(tools.Spec{Name: "export_rows", Description: "Exports.", Category: "weather", Effect: tools.Mutate},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			return tools.OK("exported", map[string]string{"rows": big}), nil
		})), func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.OK("Export the rows", nil), nil
	}))
	p := fake.New(fake.Turn{fake.CallTool("x1", "export_rows", `{}`)})
	h, l := estimateHarness(t, p, func(c *assistant.Config) {
		set, err := tools.NewSet(export, onlyWeather(c.Tools))
		if err != nil {
			t.Fatal(err)
		}
		c.Tools = set
	})
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "export"})
	if err != nil {
		t.Fatal(err)
	}
	cards := find(streamed, blocks.Confirm)
	if len(cards) != 1 {
		t.Fatalf("cards %v", cards)
	}
	p.Append(fake.Turn{fake.Text("Done.")})
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
		Decision: &assistant.Decision{Token: cards[0].ID, Apply: true}}); err != nil {
		t.Fatal(err)
	}
	checkCovers(t, l, p, 1, big[:1000])
}
