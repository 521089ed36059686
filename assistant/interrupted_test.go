package assistant_test

import (
	"context"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
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
