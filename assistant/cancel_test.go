package assistant_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/sqltest"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// slowTurn streams "first. " at once, then a chunk every 20ms, then usage.
func slowTurn() fake.Turn {
	turn := fake.Turn{fake.Text("first. ")}
	for range 50 {
		turn = append(turn, fake.Delay(20*time.Millisecond), fake.Text("more. "))
	}
	return append(turn, fake.Usage(100, 200))
}

// startTurn starts a turn and returns its first meta block and the rest of
// its blocks, collected in the background.
func startTurn(t *testing.T, eng *assistant.Engine, req assistant.Request) (blocks.MetaInfo, <-chan []blocks.Block) {
	t.Helper()
	next, stop := iterPull(eng.Stream(context.Background(), alice, req))
	first, ok := next()
	if !ok || first.Kind != blocks.Meta {
		t.Fatalf("first block %+v, want meta", first)
	}
	if b, ok := next(); !ok || b.Kind != blocks.Markdown { // the model is streaming
		t.Fatalf("second block %+v, want the first words", b)
	}
	rest := make(chan []blocks.Block, 1)
	go func() {
		defer stop()
		var bs []blocks.Block
		for b, ok := next(); ok; b, ok = next() {
			bs = append(bs, b)
		}
		rest <- bs
	}()
	return *first.Meta, rest
}

func TestCancelStopsTheTurnKeepsPartialOutputAndDrainsUsage(t *testing.T) {
	base := sqltest.Goroutines()
	l := newLedger(t, 1_000_000)
	h := newHarness(t, fake.New(slowTurn()), func(c *assistant.Config) {
		c.Ledger = l
		// The drain reads the rest of a 1 s stream. At the default 5 s a
		// CI run at load 13 once timed it out (its 45 timers each waited
		// for a core); TestDrainIsBoundedByDrainTimeout holds the bound.
		c.DrainTimeout = 30 * time.Second
	})
	meta, rest := startTurn(t, h.eng, assistant.Request{Message: "long answer please"})
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if err := h.eng.Cancel(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	bs := <-rest
	if d := time.Since(start); d > time.Second {
		t.Errorf("the stream ended %v after Cancel, want well under 1s", d)
	}
	last := bs[len(bs)-1]
	if last.Kind != blocks.Error || last.ErrorCode != string(assistant.CodeCancelled) {
		t.Fatalf("last block %+v, want a cancelled error block", last)
	}
	m := h.waitStatus(t, meta.MessageID)
	if m.Status != store.StatusCancelled || !strings.HasPrefix(m.Blocks[0].Content, "first.") || strings.Count(m.Blocks[0].Content, "more") > 20 {
		t.Errorf("stored %s %q, want cancelled with only the text before the cancel", m.Status, m.Blocks[0].Content)
	}
	// The stream was drained to its end: the model's own usage is charged.
	if m.OutputTokens != 200 || usageOf(t, l, "alice").Used != 300 { // reported after the drain
		t.Errorf("tokens %d/%d, ledger %d: want the drained usage 100+200 charged", m.InputTokens, m.OutputTokens, usageOf(t, l, "alice").Used)
	}
	settleGoroutines(t, base)
}

func TestDrainIsBoundedByDrainTimeout(t *testing.T) {
	p := fake.New(fake.Turn{fake.Text("first. "), fake.Delay(50 * time.Millisecond), fake.Text("x"), fake.Delay(time.Minute), fake.Usage(1, 1)})
	h := newHarness(t, p, func(c *assistant.Config) { c.DrainTimeout = 30 * time.Millisecond })
	meta, rest := startTurn(t, h.eng, assistant.Request{Message: "x"})
	if err := h.eng.Cancel(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rest:
	case <-time.After(2 * time.Second):
		t.Fatal("a stopped turn kept reading a stalled stream past DrainTimeout")
	}
	if m := h.waitStatus(t, meta.MessageID); m.Status != store.StatusCancelled || m.OutputTokens == 0 {
		t.Errorf("stored %s with %d output tokens, want cancelled and the drained text estimated", m.Status, m.OutputTokens)
	}
}

// TestADrainEndsAtTheFirstBound holds the two bounds of a stopped turn's
// drain: a model that goes on talking is cut at DrainTimeout (its deltas
// restart the silence bound, never the drain's), with or without a silence
// bound, and a model gone silent at whichever of ModelIdleTimeout and
// DrainTimeout comes first.
func TestADrainEndsAtTheFirstBound(t *testing.T) {
	talk := fake.Turn{fake.Text("first. ")}
	for range 2000 { // 10 s of talk
		talk = append(talk, fake.Delay(5*time.Millisecond), fake.Text("more "))
	}
	for _, tc := range []struct {
		name        string
		model       providers.Provider
		drain, idle time.Duration
		tokens      bool // the drained text is estimated
	}{
		{"a model that keeps talking, past DrainTimeout", fake.New(append(talk, fake.Usage(1, 1))), 30 * time.Millisecond, time.Second, true},
		{"a model that keeps talking, with no silence bound", fake.New(append(talk, fake.Usage(1, 1))), 30 * time.Millisecond, -1, true},
		{"a silent model, past ModelIdleTimeout", stallingModel{}, time.Minute, 300 * time.Millisecond, false},
		{"a silent model, past DrainTimeout", stallingModel{}, 30 * time.Millisecond, time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.model, func(c *assistant.Config) { c.DrainTimeout, c.ModelIdleTimeout = tc.drain, tc.idle })
			meta, rest := startTurn(t, h.eng, assistant.Request{Message: "x"})
			if err := h.eng.Cancel(context.Background(), alice, meta.ThreadID); err != nil {
				t.Fatal(err)
			}
			<-rest
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := h.eng.Wait(ctx); err != nil {
				t.Fatal("a stopped turn kept reading " + tc.name)
			}
			if m := h.waitStatus(t, meta.MessageID); m.Status != store.StatusCancelled || tc.tokens && m.OutputTokens == 0 {
				t.Errorf("stored %s with %d output tokens, want cancelled (drained text estimated: %v)", m.Status, m.OutputTokens, tc.tokens)
			}
		})
	}
}

func TestCancelFromAnotherInstanceStopsTheTurnWithinASecond(t *testing.T) {
	// Two Engines sharing one Store are two instances of an app.
	shared := newHarness(t, fake.New(slowTurn()), func(c *assistant.Config) { c.CancelPollInterval = 50 * time.Millisecond })
	other, err := assistant.New(assistant.Config{Provider: fake.New(), Store: shared.store, Authorizer: assistant.RoleAuthorizer{}})
	if err != nil {
		t.Fatal(err)
	}
	meta, rest := startTurn(t, shared.eng, assistant.Request{Message: "x"})
	start := time.Now()
	if err := other.Cancel(context.Background(), alice, meta.ThreadID); err != nil {
		t.Fatal(err)
	}
	bs := <-rest
	if d := time.Since(start); d > time.Second {
		t.Errorf("the turn stopped %v after the other instance's Cancel, want < 1s", d)
	}
	if last := bs[len(bs)-1]; last.ErrorCode != string(assistant.CodeCancelled) {
		t.Errorf("last block %+v, want cancelled", last)
	}
	if m := shared.waitStatus(t, meta.MessageID); m.Status != store.StatusCancelled {
		t.Errorf("stored status %s, want cancelled", m.Status)
	}
}

func TestANewerMessageSupersedesTheRunningTurn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sameProc bool
	}{{"same instance", true}, {"another instance", false}} {
		t.Run(tc.name, func(t *testing.T) {
			p := fake.New()
			p.SetDefault(fake.Turn{fake.Func(func(_ context.Context, req *providers.Request) fake.Turn {
				if last := req.Messages[len(req.Messages)-1]; last.Content == "first question" {
					return slowTurn()
				}
				return fake.Turn{fake.Text("the new answer")}
			})})
			a := newHarness(t, p, func(c *assistant.Config) { c.CancelPollInterval = 50 * time.Millisecond })
			b := a.eng
			if !tc.sameProc {
				var err error
				b, err = assistant.New(assistant.Config{Provider: p, Store: a.store, Authorizer: assistant.RoleAuthorizer{}})
				if err != nil {
					t.Fatal(err)
				}
			}
			meta, rest := startTurn(t, a.eng, assistant.Request{Message: "first question"})
			reply, err := assistant.Collect(b.Stream(context.Background(), alice, assistant.Request{ThreadID: meta.ThreadID, Message: "never mind, this instead"}))
			if err != nil || reply.Text != "the new answer" {
				t.Fatalf("the newer turn: %q, %v", reply.Text, err)
			}
			bs := <-rest
			last := bs[len(bs)-1]
			if last.ErrorCode != string(assistant.CodeCancelled) || !strings.Contains(last.Content, "newer message") {
				t.Errorf("the superseded turn ended with %+v, want a cancelled block naming the newer message", last)
			}
			a.waitStatus(t, meta.MessageID) // its drain and final write finish detached
			msgs := a.messages(t, meta.ThreadID)
			if len(msgs) != 4 || msgs[1].Status != store.StatusCancelled || msgs[3].Status != store.StatusComplete {
				t.Errorf("statuses %v, want the first reply cancelled and the second complete", statuses(msgs))
			}
		})
	}
}

func statuses(ms []store.Message) []store.Status {
	out := make([]store.Status, len(ms))
	for i, m := range ms {
		out[i] = m.Status
	}
	return out
}

func TestCancelNeedsTheOwner(t *testing.T) {
	h := newHarness(t, fake.New())
	id, _, err := newHarnessThread(t, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []parleyUser{bob, sam} {
		if err := h.eng.Cancel(context.Background(), u, id); !errors.Is(err, assistant.ErrNotFound) {
			t.Errorf("%s cancelling alice's thread: %v, want ErrNotFound", u.ID, err)
		}
	}
	if th, _ := h.store.GetThread(context.Background(), id); th.CancelRequestedAt != nil {
		t.Error("a refused cancel set the flag")
	}
}

func TestHeartbeatKeepsLiveTurnsAndSweepInterruptsDeadOnes(t *testing.T) {
	h := newHarness(t, fake.New(slowTurn()), func(c *assistant.Config) { c.HeartbeatInterval = 30 * time.Millisecond })
	// A turn whose process died: a placeholder nobody updates any more.
	dead, _, err := newHarnessThread(t, h)
	if err != nil {
		t.Fatal(err)
	}
	deadReply := h.messages(t, dead)[1]
	deadReply.Status, deadReply.UpdatedAt = store.StatusStreaming, time.Now().Add(-time.Hour)
	deadReply.Blocks = []blocks.Block{{Kind: blocks.Markdown, Content: "half an answer"}}
	if err := h.store.UpdateMessage(context.Background(), &deadReply); err != nil {
		t.Fatal(err)
	}

	meta, rest := startTurn(t, h.eng, assistant.Request{Message: "a long one"})
	time.Sleep(150 * time.Millisecond)
	live, _ := h.store.GetMessage(context.Background(), meta.MessageID)
	if live.Status != store.StatusStreaming || len(live.Blocks) == 0 || !strings.HasPrefix(live.Blocks[0].Content, "first.") {
		t.Errorf("mid-turn the stored reply is %s %+v, want the partial text checkpointed", live.Status, live.Blocks)
	}
	n, err := h.eng.SweepInterrupted(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("SweepInterrupted = %d, %v; want the one dead turn", n, err)
	}
	if m, _ := h.store.GetMessage(context.Background(), deadReply.ID); m.Status != store.StatusInterrupted || m.Blocks[0].Content != "half an answer" {
		t.Errorf("dead turn: %s %+v, want interrupted with its partial blocks", m.Status, m.Blocks)
	}
	<-rest
	if m := h.waitStatus(t, meta.MessageID); m.Status != store.StatusComplete {
		t.Errorf("the live turn ended %s, want complete: the sweep must not touch it", m.Status)
	}
}
