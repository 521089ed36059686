package assistant_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/tools"
)

// shown is the text of the Markdown blocks of bs.
func shown(bs []blocks.Block) string {
	var b strings.Builder
	for _, x := range bs {
		if x.Kind == blocks.Markdown {
			b.WriteString(x.Content)
		}
	}
	return b.String()
}

// replayed is every model message a request carries, as one text.
func replayed(r providers.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

// A model that says it deleted a note without any tool call is not
// believed: the claim never reaches the user, the stored reply or the
// replayed history, the user is told nothing was changed, and the turn is
// audited (A8).
func TestClaimWithoutAToolCallIsWithheld(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.Text("Sure. ", "I have deleted ", "note 1 for you. ", "Anything else?")},
		fake.Turn{fake.Text("ok")},
	)
	h := newHarness(t, p)
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "delete note 1"})
	if err != nil {
		t.Fatal(err)
	}
	text := shown(streamed)
	if strings.Contains(text, "deleted") {
		t.Errorf("the user read the claim: %q", text)
	}
	if !strings.HasPrefix(text, "Sure. Anything else?") || !strings.Contains(text, "nothing was changed") {
		t.Errorf("shown %q, want the rest of the answer and that nothing was changed", text)
	}
	if len(find(streamed, blocks.Warning)) != 1 {
		t.Errorf("warnings %+v, want one saying why part of the answer is missing", find(streamed, blocks.Warning))
	}
	if reply.Finish != assistant.FinishStop {
		t.Errorf("finish %q", reply.Finish)
	}
	msgs := h.messages(t, reply.ThreadID)
	stored := msgs[len(msgs)-1]
	if s := shown(stored.Blocks); s != text {
		t.Errorf("stored %q, streamed %q: the stored reply must be what the user saw", s, text)
	}
	if strings.Contains(string(stored.ModelMessages), "deleted") {
		t.Errorf("the stored model messages keep the claim: %s", stored.ModelMessages)
	}
	ev, _ := h.store.ListAudit(context.Background(), store.AuditFilter{Kind: assistant.AuditClaimWithheld})
	if len(ev) != 1 {
		t.Fatalf("audit %+v, want one %s event", ev, assistant.AuditClaimWithheld)
	}
	var data map[string]any
	if err := json.Unmarshal(ev[0].Data, &data); err != nil || data["lang"] != "en" || data["sentences"] != float64(1) || data["word"] != "deleted" {
		t.Errorf("audit data %s (%v)", ev[0].Data, err)
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID, Message: "thanks"}); err != nil {
		t.Fatal(err)
	}
	next := replayed(p.Requests()[1])
	if strings.Contains(next, "deleted") || !strings.Contains(next, "nothing was changed") {
		t.Errorf("the next turn replays %q: want the correction, not the claim", next)
	}
}

// The note is in the claim's language.
func TestClaimIsCorrectedInItsLanguage(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("Erledigt! Ich habe die Notiz gelöscht.")}))
	_, streamed, err := h.collect(t, alice, assistant.Request{Message: "lösche die Notiz"})
	if err != nil {
		t.Fatal(err)
	}
	if text := shown(streamed); strings.Contains(text, "gelöscht") || !strings.Contains(text, "Es wurde nichts geändert") {
		t.Errorf("shown %q, want the German note and no claim", text)
	}
}

// A claim made while the change waits on a card says it waits: the card is
// the only thing that may make it.
func TestClaimBesideACardSaysTheChangeWaits(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("Done! I've added the note."), fake.CallTool("c1", "add_note", `{}`)})
	h := newHarness(t, p)
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "add a note"})
	if err != nil {
		t.Fatal(err)
	}
	if reply.Finish != assistant.FinishApproval || len(find(streamed, blocks.Confirm)) != 1 {
		t.Fatalf("finish %q, blocks %v: want a card", reply.Finish, kinds(streamed))
	}
	if n := h.runs["add_note"].Load(); n != 0 {
		t.Fatalf("add_note ran %d times before approval", n)
	}
	if text := shown(streamed); strings.Contains(text, "added") || !strings.Contains(text, "waits for your approval") {
		t.Errorf("shown %q, want no claim and that the change waits", text)
	}
}

// After a change that ran, the model's report of it is the truth and
// streams as it is.
func TestClaimAfterAChangeThatRanIsKept(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.CallTool("c1", "add_note", `{}`)},
		fake.Turn{fake.Text("I've added the note.")},
	)
	h := newHarness(t, p, func(c *assistant.Config) {
		c.AutoApprove = func(context.Context, parley.User, tools.Spec) bool { return true }
	})
	_, streamed, err := h.collect(t, alice, assistant.Request{Message: "add a note"})
	if err != nil {
		t.Fatal(err)
	}
	if h.runs["add_note"].Load() != 1 {
		t.Fatal("add_note did not run")
	}
	if text := shown(streamed); text != "I've added the note." || len(find(streamed, blocks.Warning)) != 0 {
		t.Errorf("shown %q with warnings %v, want the report as written", text, find(streamed, blocks.Warning))
	}
}

// What reads as a report of the past, a question or a plan streams as
// written; the check off lets everything through.
func TestClaimCheckLeavesOtherTextAlone(t *testing.T) {
	benign := "The note was created on 3 May. Should I delete it? I can also archive it.\n\n```go\nnote.Delete() // deleted\n```\n"
	for name, mod := range map[string]func(*assistant.Config){
		"on":  func(*assistant.Config) {},
		"off": func(c *assistant.Config) { c.DisableClaimCheck = true },
	} {
		t.Run(name, func(t *testing.T) {
			text := benign
			if name == "off" {
				text += "I have deleted note 1."
			}
			h := newHarness(t, fake.New(fake.Turn{fake.Text(text)}), mod)
			_, streamed, err := h.collect(t, alice, assistant.Request{Message: "note?"})
			if err != nil {
				t.Fatal(err)
			}
			var all strings.Builder
			for _, b := range streamed {
				switch b.Kind {
				case blocks.Markdown:
					all.WriteString(b.Content)
				case blocks.Code:
					all.WriteString("```go\n" + b.Content + "```\n")
				}
			}
			if all.String() != text || len(find(streamed, blocks.Warning)) != 0 {
				t.Errorf("shown %q, want %q unchanged", all.String(), text)
			}
		})
	}
}

// A model that never ends its sentence is still checked, and the user
// still reads it, in pieces of bounded size.
func TestClaimCheckBoundsWhatItHolds(t *testing.T) {
	long := strings.Repeat("word ", 400) // 2,000 bytes, no full stop
	h := newHarness(t, fake.New(fake.Turn{fake.Text(long)}))
	_, streamed, err := h.collect(t, alice, assistant.Request{Message: "talk"})
	if err != nil {
		t.Fatal(err)
	}
	md := find(streamed, blocks.Markdown)
	if shown(streamed) != long || len(md) < 4 {
		t.Errorf("%d markdown blocks for %d bytes without a full stop: want it let through in pieces", len(md), len(long))
	}
	// A claim in a run that never ends a sentence is still checked, in
	// the piece that holds it.
	h = newHarness(t, fake.New(fake.Turn{fake.Text(long + "\nI have deleted note 1 for you")}))
	_, streamed, err = h.collect(t, alice, assistant.Request{Message: "talk"})
	if err != nil {
		t.Fatal(err)
	}
	if text := shown(streamed); strings.Contains(text, "deleted") || !strings.Contains(text, "nothing was changed") {
		t.Errorf("a claim at the end of an endless run: shown %q", text[max(0, len(text)-200):])
	}
}

// A claim made beside the call that then ran was true: the user is not
// told that nothing was changed, and the model's report of it in the next
// round is replayed as written.
func TestClaimBesideACallThatRanIsNotCorrected(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.Text("I've added the note."), fake.CallTool("c1", "add_note", `{}`)},
		fake.Turn{fake.Text("I've added the note.")},
		fake.Turn{fake.Text("ok")},
	)
	h := newHarness(t, p, func(c *assistant.Config) {
		c.AutoApprove = func(context.Context, parley.User, tools.Spec) bool { return true }
	})
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "add a note"})
	if err != nil {
		t.Fatal(err)
	}
	if h.runs["add_note"].Load() != 1 {
		t.Fatal("add_note did not run")
	}
	if text := shown(streamed); strings.Contains(text, "nothing was changed") || len(find(streamed, blocks.Warning)) != 0 {
		t.Errorf("shown %q with warnings %v after the change ran", text, find(streamed, blocks.Warning))
	}
	if _, _, err := h.collect(t, alice, assistant.Request{ThreadID: reply.ThreadID, Message: "thanks"}); err != nil {
		t.Fatal(err)
	}
	if next := replayed(p.Requests()[2]); !strings.Contains(next, "I've added the note.") {
		t.Errorf("the next turn replays %q: the true report is missing", next)
	}
}
