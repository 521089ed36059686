package assistant_test

import (
	"context"
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
const ruleSays = "never guess an id"

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

// With the policy off (the default), a turn is what it was: an id nobody
// saw goes to a card, and the prompt says nothing of the policy.
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
}
