package assistant_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/tools"
)

// The workflow policy (B17): resolve -> read -> write -> verify.

// What the Engine tells the model, as it words it.
const (
	verifySays = "Check it now with a read tool"
	ruleSays   = "never guess an id"
)

type noteIDArgs struct {
	NoteID string `json:"note_id"`
}

// workflowHarness is newHarness with notes tools besides the weather ones:
// find_notes (Read) lists notes n-1 and n-2 with their ids; rename_note
// (Mutate) and delete_note (Destructive) declare note_id as an id. on
// turns the policy on. Their runs are counted in h.runs.
func workflowHarness(t *testing.T, p providers.Provider, on bool, mod ...func(*assistant.Config)) *harness {
	t.Helper()
	finds, renames, deletes := new(atomic.Int64), new(atomic.Int64), new(atomic.Int64)
	notes := []tools.BaseTool{
		tools.Must(tools.New(tools.Spec{Name: "find_notes", Description: "Lists the user's notes with their ids.", Category: "notes"},
			func(context.Context, tools.Call, struct{}) (tools.Result, error) {
				finds.Add(1)
				return tools.OK("2 notes", []map[string]string{{"id": "n-1", "title": "Groceries"}, {"id": "n-2", "title": "Taxes"}}), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "rename_note", Description: "Renames a note.", Category: "notes", Effect: tools.Mutate,
			IDArgs: []string{"note_id"}},
			func(context.Context, tools.Call, struct {
				NoteID string `json:"note_id"`
				Title  string `json:"title"`
			}) (tools.Result, error) {
				renames.Add(1)
				return tools.OK("renamed", nil), nil
			})),
		tools.Must(tools.New(tools.Spec{Name: "delete_note", Description: "Deletes a note.", Category: "notes", Effect: tools.Destructive,
			IDArgs: []string{"note_id"}},
			func(context.Context, tools.Call, noteIDArgs) (tools.Result, error) {
				deletes.Add(1)
				return tools.OK("deleted", nil), nil
			})),
	}
	h := newHarness(t, p, append([]func(*assistant.Config){func(c *assistant.Config) {
		set, err := tools.NewSet(append(c.Tools.All(), notes...)...)
		if err != nil {
			t.Fatal(err)
		}
		c.Tools, c.Workflow = set, on
		c.Authorizer = assistant.RoleAuthorizer{Tools: map[string][]string{"user": {"category:weather", "category:notes"}}}
	}}, mod...)...)
	h.runs["find_notes"], h.runs["rename_note"], h.runs["delete_note"] = finds, renames, deletes
	return h
}

// autoApprove runs every change without a card.
func autoApprove(c *assistant.Config) {
	c.AutoApprove = func(context.Context, parley.User, tools.Spec) bool { return true }
}

func TestWorkflowRefusesAWriteOnAnIDTheThreadNeverSaw(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  []func(*assistant.Config)
	}{{"card", nil}, {"auto-approved", []func(*assistant.Config){autoApprove}}} {
		t.Run(tc.name, func(t *testing.T) {
			p := fake.New(fake.Turn{fake.CallTool("d1", "delete_note", `{"note_id":"n-1"}`)}, fake.Turn{fake.Text("I need to look it up first.")})
			h := workflowHarness(t, p, true, tc.mod...)
			reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "delete my groceries note"})
			if err != nil {
				t.Fatal(err)
			}
			if n := h.runs["delete_note"].Load(); n != 0 {
				t.Errorf("delete_note ran %d times on an id nobody saw", n)
			}
			if cards := find(streamed, blocks.Confirm); len(cards) != 0 {
				t.Errorf("%d confirm cards for an unresolved id", len(cards))
			}
			props, err := h.eng.Proposals(context.Background(), alice, reply.ThreadID)
			if err != nil || len(props) != 0 {
				t.Errorf("proposals %v, %v: want none", props, err)
			}
			results := find(streamed, blocks.ToolResult)
			if len(results) != 1 || results[0].ErrorCode != string(tools.CodeUnresolvedID) {
				t.Fatalf("tool results %+v: want one UNRESOLVED_ID", results)
			}
			reqs := p.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests: want the model told, then its answer", len(reqs))
			}
			told := toolMessage(t, reqs[1], "d1")
			if !strings.Contains(told, "UNRESOLVED_ID") || !strings.Contains(told, "read or search tool") || strings.Contains(told, `"blocked"`) {
				t.Errorf("the model was told %s: want a recoverable UNRESOLVED_ID saying to look the id up first", told)
			}
			if !strings.Contains(reqs[0].System, ruleSays) {
				t.Error("the system prompt does not state the policy's rule")
			}
			if reply.Finish == assistant.FinishApproval {
				t.Error("the turn ended waiting for an approval")
			}
		})
	}
}

func TestWorkflowIDFromAReadResultGoesToACard(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.CallTool("f1", "find_notes", `{}`)},
		fake.Turn{fake.CallTool("d1", "delete_note", `{"note_id":"n-2"}`)},
	)
	h := workflowHarness(t, p, true)
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "delete my taxes note"})
	if err != nil {
		t.Fatal(err)
	}
	cards := find(streamed, blocks.Confirm)
	if len(cards) != 1 || cards[0].Name != "delete_note" || reply.Finish != assistant.FinishApproval {
		t.Fatalf("cards %+v, finish %q: want a card for the id find_notes returned", cards, reply.Finish)
	}
	if h.runs["find_notes"].Load() != 1 || h.runs["delete_note"].Load() != 0 {
		t.Errorf("find_notes ran %d, delete_note %d: want 1 and 0 (waiting on the card)", h.runs["find_notes"].Load(), h.runs["delete_note"].Load())
	}
}

func TestWorkflowIDTypedByTheUserCountsAsResolved(t *testing.T) {
	p := fake.New(fake.Turn{fake.CallTool("d1", "delete_note", `{"note_id":"n-7"}`)})
	h := workflowHarness(t, p, true)
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "please delete note n-7."})
	if err != nil {
		t.Fatal(err)
	}
	if cards := find(streamed, blocks.Confirm); len(cards) != 1 {
		t.Fatalf("%d cards: an id the user typed must be usable", len(cards))
	}
	// A later turn may use it too, and an id that only contains it may not.
	p.Append(fake.Turn{fake.CallTool("d2", "delete_note", `{"note_id":"n-70"}`)}, fake.Turn{fake.Text("Which note?")})
	_, streamed, err = h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID, Message: "and the one after it"})
	if err != nil {
		t.Fatal(err)
	}
	if results := find(streamed, blocks.ToolResult); len(results) != 1 || results[0].ErrorCode != string(tools.CodeUnresolvedID) {
		t.Errorf("n-70 after the user typed n-7: results %+v, want UNRESOLVED_ID", results)
	}
}

// Ids resolve per thread: what one thread's tools returned, or its user
// typed, is nothing to another thread of the same user; later turns of the
// same thread keep them (the replay).
func TestWorkflowIDFromAnotherThreadDoesNotCount(t *testing.T) {
	p := fake.New(fake.Turn{fake.CallTool("f1", "find_notes", `{}`)}, fake.Turn{fake.Text("You have two notes.")})
	h := workflowHarness(t, p, true)
	first, _, err := h.collect(t, alice, assistant.Request{Message: "list my notes"})
	if err != nil {
		t.Fatal(err)
	}
	p.Append(fake.Turn{fake.CallTool("d1", "delete_note", `{"note_id":"n-1"}`)}, fake.Turn{fake.Text("Let me look.")})
	_, streamed, err := h.collect(t, alice, assistant.Request{Message: "delete the groceries note"}) // a new thread
	if err != nil {
		t.Fatal(err)
	}
	if results := find(streamed, blocks.ToolResult); len(results) != 1 || results[0].ErrorCode != string(tools.CodeUnresolvedID) {
		t.Fatalf("another thread's id: results %+v, want UNRESOLVED_ID", results)
	}
	p.Append(fake.Turn{fake.CallTool("d2", "delete_note", `{"note_id":"n-1"}`)})
	_, streamed, err = h.collect(t, alice, assistant.Request{ThreadID: first.ThreadID, Message: "delete the groceries note"})
	if err != nil {
		t.Fatal(err)
	}
	if cards := find(streamed, blocks.Confirm); len(cards) != 1 {
		t.Errorf("%d cards in the thread whose earlier turn listed n-1: want 1", len(cards))
	}
	if n := h.runs["delete_note"].Load(); n != 0 {
		t.Errorf("delete_note ran %d times", n)
	}
}

// After a change, one round may only read, to check it; then the change is
// reported with no tools.
func TestWorkflowVerifyRoundOffersOnlyReadToolsThenASummary(t *testing.T) {
	readOnly := []string{"explode", "find_notes", "get_weather"} // the host's Read tools alice may use
	checkRounds := func(t *testing.T, reqs []providers.Request) {
		t.Helper()
		verify, summary := reqs[len(reqs)-2], reqs[len(reqs)-1]
		if got := toolNames(verify); !slices.Equal(got, readOnly) || len(verify.Tools) != len(readOnly) || !strings.Contains(verify.System, verifySays) {
			t.Errorf("verify round offers %v (%d in all), told to verify %v: want only %v", got, len(verify.Tools), strings.Contains(verify.System, verifySays), readOnly)
		}
		if len(summary.Tools) != 0 || !strings.Contains(summary.System, changedSays) {
			t.Errorf("after the verify round: %d tools offered, change reported %v", len(summary.Tools), strings.Contains(summary.System, changedSays))
		}
	}
	t.Run("in the turn", func(t *testing.T) {
		p := fake.New(
			fake.Turn{fake.CallTool("f1", "find_notes", `{}`)},
			fake.Turn{fake.CallTool("r1", "rename_note", `{"note_id":"n-1","title":"Food"}`)},
			fake.Turn{fake.CallTool("f2", "find_notes", `{}`), fake.CallTool("d1", "delete_note", `{"note_id":"n-2"}`)},
			fake.Turn{fake.Text("Renamed n-1 to Food.")},
		)
		h := workflowHarness(t, p, true, autoApprove)
		reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "rename groceries to food"})
		if err != nil {
			t.Fatal(err)
		}
		reqs := p.Requests()
		if len(reqs) != 4 || reply.Text != "Renamed n-1 to Food." {
			t.Fatalf("%d requests, answer %q: want find, rename, verify, summary", len(reqs), reply.Text)
		}
		checkRounds(t, reqs)
		if h.runs["rename_note"].Load() != 1 || h.runs["find_notes"].Load() != 2 || h.runs["delete_note"].Load() != 0 {
			t.Errorf("runs: rename %d, find %d, delete %d: want 1, 2 (the check) and 0 (refused while verifying)",
				h.runs["rename_note"].Load(), h.runs["find_notes"].Load(), h.runs["delete_note"].Load())
		}
		var codes []string
		for _, b := range find(streamed, blocks.ToolResult) {
			codes = append(codes, b.ErrorCode)
		}
		if !slices.Equal(codes, []string{"", "", "", string(tools.CodeVerifyFirst)}) {
			t.Errorf("result codes %q: want the write in the verify round answered VERIFY_FIRST", codes)
		}
	})
	t.Run("applied card", func(t *testing.T) {
		p := fake.New(fake.Turn{fake.CallTool("f1", "find_notes", `{}`)}, fake.Turn{fake.CallTool("r1", "rename_note", `{"note_id":"n-1","title":"Food"}`)})
		h := workflowHarness(t, p, true)
		reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "rename groceries to food"})
		if err != nil {
			t.Fatal(err)
		}
		cards := find(streamed, blocks.Confirm)
		if len(cards) != 1 {
			t.Fatalf("%d cards", len(cards))
		}
		p.Append(fake.Turn{fake.CallTool("f2", "find_notes", `{}`)}, fake.Turn{fake.Text("Renamed.")})
		if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID,
			Decision: &assistant.Decision{Token: cards[0].ID, Apply: true}}); err != nil {
			t.Fatal(err)
		}
		reqs := p.Requests()
		if len(reqs) != 4 || h.runs["rename_note"].Load() != 1 || h.runs["find_notes"].Load() != 2 {
			t.Fatalf("%d requests, rename ran %d, find %d: want the applied change checked, then reported", len(reqs),
				h.runs["rename_note"].Load(), h.runs["find_notes"].Load())
		}
		checkRounds(t, reqs)
	})
}

// The verify round is one round with tools: a turn with none left reports
// the change at once.
func TestWorkflowVerifiesOnlyWhenTheTurnHasRoom(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.CallTool("f1", "find_notes", `{}`)},
		fake.Turn{fake.CallTool("r1", "rename_note", `{"note_id":"n-1","title":"Food"}`)},
		fake.Turn{fake.Text("Renamed.")},
	)
	h := workflowHarness(t, p, true, autoApprove, func(c *assistant.Config) { c.MaxToolRounds = 2 })
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "rename groceries to food"}); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if len(reqs) != 3 || len(reqs[2].Tools) != 0 || !strings.Contains(reqs[2].System, changedSays) || strings.Contains(reqs[2].System, verifySays) {
		t.Fatalf("%d requests, the last offering %d tools: want the change reported with no verify round", len(reqs), len(reqs[len(reqs)-1].Tools))
	}
}

// With the policy off (the default), a turn is what it was: an id nobody
// saw goes to a card, a change is reported at once, and the prompt says
// nothing of the policy.
func TestWorkflowOffLeavesTurnsAsTheyWere(t *testing.T) {
	p := fake.New(fake.Turn{fake.CallTool("d1", "delete_note", `{"note_id":"n-99"}`)})
	h := workflowHarness(t, p, false)
	_, streamed, err := h.collect(t, alice, assistant.Request{Message: "delete note 99"})
	if err != nil {
		t.Fatal(err)
	}
	if cards := find(streamed, blocks.Confirm); len(cards) != 1 {
		t.Errorf("%d cards: want the card, as without the policy", len(cards))
	}
	if strings.Contains(p.Requests()[0].System, ruleSays) {
		t.Error("the prompt states the policy's rule with the policy off")
	}

	p = fake.New(fake.Turn{fake.CallTool("r1", "rename_note", `{"note_id":"n-99","title":"x"}`)}, fake.Turn{fake.Text("Renamed.")})
	h = workflowHarness(t, p, false, autoApprove)
	if _, _, err := h.collect(t, alice, assistant.Request{Message: "rename note 99"}); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	if h.runs["rename_note"].Load() != 1 || len(reqs) != 2 || len(reqs[1].Tools) != 0 || strings.Contains(reqs[1].System, verifySays) {
		t.Errorf("rename ran %d, %d requests: want it run and reported at once, no verify round", h.runs["rename_note"].Load(), len(reqs))
	}
}
