package assistant_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// A reply whose worker died (the process crashed mid-answer) is marked
// interrupted by the sweep; readers then see it end with an error block, as
// every other failed reply does, after what it had streamed (issue 25.4).
func TestAnInterruptedReplyEndsWithAnErrorBlock(t *testing.T) {
	h := newHarness(t, fake.New(fake.Turn{fake.Text("ok")}))
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	// A second turn whose process died after its first words: its reply is
	// left streaming, as a crash leaves it.
	user := store.Message{ThreadID: reply.ThreadID, Role: store.RoleUser, Status: store.StatusComplete, Content: "and?"}
	dead := store.Message{ThreadID: reply.ThreadID, Role: store.RoleAssistant, Status: store.StatusStreaming,
		Blocks: []blocks.Block{{Kind: blocks.Markdown, Content: "Half an"}}}
	if err := h.store.AppendTurn(context.Background(), &user, &dead); err != nil {
		t.Fatal(err)
	}
	if err := h.store.UpdateMessage(context.Background(), &dead); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.InterruptStale(context.Background(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, msgs, err := h.eng.Thread(context.Background(), alice, reply.ThreadID, assistant.ThreadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Status != store.StatusInterrupted || len(last.Blocks) != 2 || last.Blocks[0].Content != "Half an" || !last.Blocks[1].Terminal() {
		t.Errorf("interrupted reply %s %+v, want its words and then an error block", last.Status, last.Blocks)
	}
	if first := msgs[1]; len(first.Blocks) != 1 || first.Blocks[0].Terminal() {
		t.Errorf("the complete reply %+v gained a block", first.Blocks)
	}
}

// The hold of a turn whose process died is voided by the ledger's sweep
// within eleven minutes with the default policy (issue 25.4: it kept the
// user's tokens for 30).
func TestADeadTurnsHoldIsSweptWithinElevenMinutes(t *testing.T) {
	l := newLedger(t, 1_000_000)
	release := make(chan struct{})
	p := fake.New(fake.Turn{fake.Text("a. "), fake.Func(func(context.Context, *providers.Request) fake.Turn {
		<-release
		return fake.Turn{fake.Text("b")}
	})})
	h := newHarness(t, p, func(c *assistant.Config) { c.Ledger = l })
	meta, rest := startTurn(t, h.eng, assistant.Request{Message: "x"})
	defer func() {
		close(release)
		<-rest
		h.waitStatus(t, meta.MessageID)
	}()
	if held := usageOf(t, l, "alice").Held; held == 0 {
		t.Fatal("the running turn holds nothing")
	}
	// The process is gone: nothing settles the hold; the sweep runs later.
	if n, err := l.Sweep(context.Background(), time.Now().Add(11*time.Minute)); err != nil || n != 1 {
		t.Errorf("Sweep 11 minutes on = %d, %v; want the dead turn's hold voided", n, err)
	}
}
