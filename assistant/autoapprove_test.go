package assistant_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// Standing approvals (B10): the Mutate tools a user chose to run without a
// card, stored or sent with a request.

// wipeTool is a Destructive tool of the weather category, next to the
// harness's Mutate add_note.
func withWipe(t *testing.T, c *assistant.Config, runs *int) {
	t.Helper()
	wipe := tools.Must(tools.New(tools.Spec{Name: "wipe_notes", Description: "Deletes every note.", Category: "weather", Effect: tools.Destructive},
		func(context.Context, tools.Call, struct{}) (tools.Result, error) {
			*runs++
			return tools.OK("wiped", nil), nil
		}))
	reg := c.Tools
	var ts []tools.BaseTool
	ts = append(ts, reg.All()...)
	set, err := tools.NewSet(append(ts, wipe)...)
	if err != nil {
		t.Fatal(err)
	}
	c.Tools = set
}

// asks runs a turn that calls tool, and reports whether it asked on a card.
func asks(t *testing.T, h *harness, p *fake.Provider, u parley.User, tool string, grants []string) bool {
	t.Helper()
	p.SetDefault(fake.Turn{fake.Text("Done.")}) // the answer after a tool ran
	p.Append(fake.Turn{fake.CallTool("c1", tool, `{}`)})
	_, streamed, err := h.collect(t, u, assistant.Request{Message: "go", AutoApprove: grants})
	if err != nil {
		t.Fatal(err)
	}
	return len(find(streamed, blocks.Confirm)) > 0
}

func TestStoredAutoApprovalRunsTheToolWithoutACard(t *testing.T) {
	p := fake.New()
	h := newHarness(t, p)
	if !asks(t, h, p, alice, "add_note", nil) {
		t.Fatal("add_note ran without a card before any approval was set")
	}
	gs, err := h.eng.SetAutoApprovals(context.Background(), alice, []string{"add_note"})
	if err != nil || len(gs) != 1 || gs[0] != "add_note" {
		t.Fatalf("SetAutoApprovals = %q, %v", gs, err)
	}
	if asks(t, h, p, alice, "add_note", nil) || h.runs["add_note"].Load() != 1 {
		t.Fatalf("with a standing approval add_note asked on a card (runs %d)", h.runs["add_note"].Load())
	}
	if !asks(t, h, p, bob, "add_note", nil) {
		t.Error("alice's standing approval ran bob's add_note without a card")
	}
	calls, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditToolCall, ActorID: "alice"})
	if len(calls) == 0 || !strings.Contains(string(calls[0].Data), `"approval":"auto"`) {
		t.Errorf("the call is not audited as auto-approved: %+v", calls)
	}
	sets, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditAutoApproveSet})
	if len(sets) != 1 || !strings.Contains(string(sets[0].Data), `"add_note"`) {
		t.Errorf("the change is not audited: %+v", sets)
	}
	if gs, err := h.eng.SetAutoApprovals(context.Background(), alice, nil); err != nil || len(gs) != 0 {
		t.Fatalf("clearing: %q, %v", gs, err)
	}
	if !asks(t, h, p, alice, "add_note", nil) {
		t.Error("a cleared approval still ran the tool without a card")
	}
}

func TestRequestAutoApproveIsCheckedLikeAStoredOne(t *testing.T) {
	p := fake.New()
	var wipes int
	h := newHarness(t, p, func(c *assistant.Config) { withWipe(t, c, &wipes) })
	if asks(t, h, p, alice, "add_note", []string{"category:weather"}) {
		t.Error("a request's category grant did not run add_note without a card")
	}
	if !asks(t, h, p, alice, "wipe_notes", []string{"category:weather"}) || !asks(t, h, p, alice, "wipe_notes", []string{"wipe_notes"}) || wipes != 0 {
		t.Errorf("a Destructive tool ran without a card (runs %d) though AutoApproveDestructive is off", wipes)
	}
	// A grant for a tool the user may not use is ignored, not an error.
	if !asks(t, h, p, alice, "add_note", []string{"admin_stats", "no_such_tool"}) {
		t.Error("unrelated grants ran add_note without a card")
	}
	_, _, err := h.collect(t, alice, assistant.Request{Message: "go", AutoApprove: []string{"a\x00b"}})
	if !errors.Is(err, assistant.ErrInvalidRequest) {
		t.Errorf("a grant with a NUL: %v, want ErrInvalidRequest", err)
	}
	many := make([]string, assistant.MaxAutoApprovals+1)
	for i := range many {
		many[i] = fmt.Sprint("tool_", i)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "go", AutoApprove: many}); !errors.Is(err, assistant.ErrInvalidRequest) {
		t.Errorf("%d grants: %v, want ErrInvalidRequest", len(many), err)
	}
}

func TestDestructiveAutoApprovalNeedsTheHostsConsent(t *testing.T) {
	p := fake.New()
	var wipes int
	h := newHarness(t, p, func(c *assistant.Config) { withWipe(t, c, &wipes) })
	for _, g := range [][]string{{"wipe_notes"}, {"admin_stats"}, {"no_such_tool"}, {"category:admin"}} {
		if _, err := h.eng.SetAutoApprovals(context.Background(), alice, g); !errors.Is(err, assistant.ErrInvalidRequest) {
			t.Errorf("SetAutoApprovals(%q) = %v, want ErrInvalidRequest", g, err)
		}
	}
	h2 := newHarness(t, p, func(c *assistant.Config) { withWipe(t, c, &wipes); c.AutoApproveDestructive = true })
	if _, err := h2.eng.SetAutoApprovals(context.Background(), alice, []string{"wipe_notes"}); err != nil {
		t.Fatalf("with AutoApproveDestructive: %v", err)
	}
	if asks(t, h2, p, alice, "wipe_notes", nil) || wipes != 1 {
		t.Errorf("the host allowed it, but wipe_notes still asked (runs %d)", wipes)
	}
	// Still never through a category.
	if _, err := h2.eng.SetAutoApprovals(context.Background(), alice, []string{"category:weather"}); err != nil {
		t.Fatal(err)
	}
	if !asks(t, h2, p, alice, "wipe_notes", nil) {
		t.Error("a category grant ran a Destructive tool without a card")
	}
}

func TestAutoApprovalsNeedAStoreThatKeepsThem(t *testing.T) {
	h := newHarness(t, fake.New(), func(c *assistant.Config) { c.Store = struct{ store.Store }{c.Store} })
	if _, err := h.eng.SetAutoApprovals(context.Background(), alice, []string{"add_note"}); !errors.Is(err, assistant.ErrUnsupported) {
		t.Errorf("SetAutoApprovals = %v, want ErrUnsupported", err)
	}
	if _, err := h.eng.AutoApprovals(context.Background(), alice); !errors.Is(err, assistant.ErrUnsupported) {
		t.Errorf("AutoApprovals = %v, want ErrUnsupported", err)
	}
}
