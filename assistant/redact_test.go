package assistant_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers/fake"
)

// Staff reading alice's thread see her pending confirm card, and its
// state, but not its token, which only alice may use; alice sees it with.
func TestStaffSeeCardsWithoutTheirTokens(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("I will add it."), fake.CallTool("c1", "add_note", `{}`)}))
	ctx := context.Background()
	reply, streamed, err := h.collect(t, alice, assistant.Request{Message: "add a note"})
	if err != nil {
		t.Fatal(err)
	}
	cards := find(streamed, blocks.Confirm)
	if len(cards) != 1 {
		t.Fatalf("streamed %v, want one confirm card", kinds(streamed))
	}
	token := cards[0].ID
	threadID := reply.ThreadID

	read := func(u parley.User) (card blocks.Block, proposal string) {
		t.Helper()
		_, msgs, err := h.eng.Thread(ctx, u, threadID, assistant.ThreadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var found []blocks.Block
		for _, m := range msgs {
			found = append(found, find(m.Blocks, blocks.Confirm)...)
		}
		if len(found) != 1 {
			t.Fatalf("%s sees %d cards, want 1", u.ID, len(found))
		}
		ps, err := h.eng.Proposals(ctx, u, threadID)
		if err != nil || len(ps) != 1 {
			t.Fatalf("%s: proposals %v, %v", u.ID, ps, err)
		}
		return found[0], ps[0].Token
	}

	card, proposal := read(sam)
	if card.ID == token || proposal == token {
		t.Errorf("staff see the token: card %q, proposal %q", card.ID, proposal)
	}
	if card.ID == "" || card.ID != proposal {
		t.Errorf("staff's card %q and proposal %q do not match: the card's state cannot be shown", card.ID, proposal)
	}
	if card.Name != "add_note" || card.Content == "" {
		t.Errorf("staff's card lost its content: %+v", card)
	}
	_, _, _ = h.collect(t, sam, assistant.Request{ThreadID: threadID, Decision: &assistant.Decision{Token: card.ID, Apply: true}})
	if n := h.runs["add_note"].Load(); n != 0 {
		t.Errorf("the stand-in decided the card: add_note ran %d times", n)
	}

	card, proposal = read(alice)
	if card.ID != token || proposal != token {
		t.Errorf("alice sees card %q, proposal %q, want her token %q", card.ID, proposal, token)
	}
	// What staff read left alice's stored card alone.
	if got := find(h.messages(t, threadID)[1].Blocks, blocks.Confirm)[0].ID; got != token {
		t.Errorf("stored card %q, want %q", got, token)
	}
}
