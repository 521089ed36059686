package assistant_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
)

// failingWrites makes the final writes of replies (status other than
// streaming) fail: the first `transient` with a driver-like error, or every
// one with err.
type failingWrites struct {
	store.Store
	transient atomic.Int32
	err       error
	finals    atomic.Int32
}

func (s *failingWrites) UpdateMessage(ctx context.Context, m *store.Message) error {
	if m.Status != store.StatusStreaming {
		s.finals.Add(1)
		if s.transient.Add(-1) >= 0 {
			return errors.New("pq: sorry, too many clients already")
		}
		if s.err != nil {
			return s.err
		}
	}
	return s.Store.UpdateMessage(ctx, m)
}

// The final write of a reply is retried through transient store errors: a
// pool briefly exhausted under load does not lose a reply the user saw.
func TestFinalWriteRetriesTransientStoreErrors(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("kept"), fake.Usage(10, 5)})
	h := newHarness(t, p)
	fw := &failingWrites{Store: h.store}
	fw.transient.Store(3)
	l := newLedger(t, 100_000)
	eng, err := assistant.New(assistant.Config{Provider: p, Store: fw, Ledger: l, Authorizer: assistant.RoleAuthorizer{}})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := assistant.Collect(eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"}))
	if err != nil {
		t.Fatalf("turn failed: %v", err)
	}
	m := h.waitStatus(t, reply.MessageID)
	if m.Status != store.StatusComplete || len(m.Blocks) == 0 || m.Blocks[0].Content != "kept" {
		t.Errorf("stored %s %+v, want the complete reply", m.Status, m.Blocks)
	}
	if n := fw.finals.Load(); n != 4 {
		t.Errorf("%d final writes, want 3 failed and 1 that held", n)
	}
	if pu := usageOf(t, l, "alice"); pu.Used != 15 || pu.Held != 0 {
		t.Errorf("usage %+v, want 15 used and the hold settled", pu)
	}
}

// A reply that cannot be saved at all ends the user's stream with a plain
// message saying so, and the quota hold is still settled.
func TestReplyThatCannotBeSavedIsToldPlainly(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("seen but lost"), fake.Usage(10, 5)})
	h := newHarness(t, p)
	fw := &failingWrites{Store: h.store, err: store.ErrInvalid} // a value the store refuses: no retry helps
	l := newLedger(t, 100_000)
	eng, err := assistant.New(assistant.Config{Provider: p, Store: fw, Ledger: l, Authorizer: assistant.RoleAuthorizer{}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = assistant.Collect(eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"}))
	e, ok := errors.AsType[*assistant.Error](err)
	if !ok || !strings.Contains(e.UserMessage(), "could not be saved") {
		t.Fatalf("err = %v, want a message saying the answer was not saved", err)
	}
	if pu := usageOf(t, l, "alice"); pu.Used != 15 || pu.Held != 0 {
		t.Errorf("usage %+v, want 15 used and no hold left open", pu)
	}
}

// blockingModel streams some text, then waits for release (or its context).
type blockingModel struct {
	text    string
	release chan struct{}
}

func (m blockingModel) Stream(ctx context.Context, _ *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		if !yield(providers.Event{Kind: providers.TextDelta, Text: m.text}, nil) {
			return
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(providers.Event{}, ctx.Err())
			return
		}
		yield(providers.Event{Kind: providers.FinishEvent, Finish: providers.FinishStop}, nil)
	}
}

var _ providers.Provider = blockingModel{}

// The first block is checkpointed at once: a process killed before the
// first heartbeat leaves the start of the answer, not an empty reply.
func TestFirstBlockIsCheckpointedBeforeTheHeartbeat(t *testing.T) {
	release := make(chan struct{})
	model := blockingModel{text: "The first words.", release: release}
	h := newHarness(t, model, func(c *assistant.Config) { c.HeartbeatInterval, c.CancelPollInterval = time.Hour, -1 })
	seq := h.eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"})
	var id string
	for b := range seq {
		if b.Kind == blocks.Meta && b.Meta.MessageID != "" {
			id = b.Meta.MessageID
		}
		if b.Kind == blocks.Markdown {
			break // detach; the turn goes on
		}
	}
	defer func() {
		close(release)
		_ = h.eng.Wait(context.Background())
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := h.store.GetMessage(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status == store.StatusStreaming && len(m.Blocks) > 0 && strings.Contains(m.Blocks[0].Content, "The first") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5s (heartbeat 1h) the reply is %s with %+v: the first block was not checkpointed", m.Status, m.Blocks)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// When a turn is cancelled, its partial reply is stored with status
// cancelled by the time Cancel returns, while the model's stream is still
// being drained; the final write then adds the drained usage.
func TestCancelStoresThePartialReplyBeforeTheDrainEnds(t *testing.T) {
	release := make(chan struct{})
	model := blockingModel{text: "Half an answer.", release: release}
	h := newHarness(t, model, func(c *assistant.Config) { c.DrainTimeout = time.Minute })
	seq := h.eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"})
	var threadID, id string
	var last blocks.Block
	for b := range seq {
		if b.Kind == blocks.Meta && b.Meta.MessageID != "" {
			threadID, id = b.Meta.ThreadID, b.Meta.MessageID
		}
		if b.Kind == blocks.Markdown && threadID != "" {
			go func() {
				if err := h.eng.Cancel(context.Background(), alice, threadID); err != nil {
					t.Error(err)
				}
			}()
		}
		last = b
	}
	if last.Kind != blocks.Error || last.ErrorCode != string(assistant.CodeCancelled) {
		t.Fatalf("the stream ended with %+v, want the cancelled error block", last)
	}
	if err := h.eng.Cancel(context.Background(), alice, threadID); err != nil {
		t.Fatal(err)
	}
	m, err := h.store.GetMessage(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != store.StatusCancelled || len(m.Blocks) == 0 || m.Blocks[0].Content != "Half an answer." {
		t.Errorf("while the drain runs the reply is %s %+v, want cancelled with the partial text", m.Status, m.Blocks)
	}
	close(release) // the drain ends
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, _ = h.store.GetMessage(context.Background(), id)
	if m.Status != store.StatusCancelled || m.InputTokens == 0 {
		t.Errorf("after the drain: %s, %d input tokens; want cancelled with usage", m.Status, m.InputTokens)
	}
}

// countingStore counts the heartbeat's writes: UpdateMessage with status
// streaming.
type countingStore struct {
	*memstore.Store
	beats atomic.Int64
}

func (s *countingStore) UpdateMessage(ctx context.Context, m *store.Message) error {
	if m.Status == store.StatusStreaming {
		s.beats.Add(1)
	}
	return s.Store.UpdateMessage(ctx, m)
}

// A parked turn checkpoints once per HeartbeatInterval, plus once at its
// first block: the heartbeat never fires faster than its interval.
func TestTheHeartbeatWritesOncePerInterval(t *testing.T) {
	release := make(chan struct{})
	st := &countingStore{Store: memstore.New()}
	eng, err := assistant.New(assistant.Config{Provider: blockingModel{text: "Parked.", release: release}, Store: st,
		Authorizer: assistant.RoleAuthorizer{}, HeartbeatInterval: 100 * time.Millisecond, CancelPollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for b := range eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"}) {
		if b.Kind == blocks.Markdown {
			break // parked: the model holds the stream open
		}
	}
	start := time.Now()
	time.Sleep(time.Second)
	beats, held := st.beats.Load(), time.Since(start)
	close(release)
	_ = eng.Wait(context.Background())
	// The first block's checkpoint, then one per 100 ms; a slow machine
	// fires fewer, never more.
	if most := int64(held/(100*time.Millisecond)) + 2; beats > most || beats < 3 {
		t.Fatalf("%d heartbeat writes in %v at a 100ms interval, want 3 to %d", beats, held, most)
	}
}
