package assistant_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/quota"
	"github.com/parleyhq/parley/store"
)

// Regressions from the review of the hardening (issue 10).

// A reasoning model that goes on thinking after Stop is drained, not cut
// at the output cap: the reply stays cancelled, as the user saw it.

type thinkAfterStop struct{ thinking chan struct{} }

func (m thinkAfterStop) Stream(ctx context.Context, _ *providers.Request) iter.Seq2[providers.Event, error] {
	return func(yield func(providers.Event, error) bool) {
		if !yield(providers.Event{Kind: providers.TextDelta, Text: "Half an answer."}, nil) {
			return
		}
		select {
		case <-m.thinking:
		case <-ctx.Done():
			return
		}
		for ctx.Err() == nil { // the model goes on thinking; the Engine drains
			if !yield(providers.Event{Kind: providers.ReasoningDelta, Text: strings.Repeat("hmm ", 256)}, nil) {
				return
			}
		}
	}
}

func TestReasoningDrainedAfterCancelKeepsTheReplyCancelled(t *testing.T) {
	t.Parallel() // waits out a timeout; overlaps the rest of the package
	thinking := make(chan struct{})
	h := newHarness(t, thinkAfterStop{thinking}, func(c *assistant.Config) {
		c.MaxTurnOutputBytes = 8 << 10
		c.DrainTimeout = 5 * time.Second
	})
	var threadID, id string
	var last blocks.Block
	for b := range h.eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"}) {
		if b.Kind == blocks.Meta && b.Meta.MessageID != "" {
			threadID, id = b.Meta.ThreadID, b.Meta.MessageID
		}
		if b.Kind == blocks.Markdown {
			go func() {
				_ = h.eng.Cancel(context.Background(), alice, threadID)
				close(thinking)
			}()
		}
		last = b
	}
	if last.Kind != blocks.Error || last.ErrorCode != string(assistant.CodeCancelled) {
		t.Fatalf("stream ended with %+v, want cancelled", last)
	}
	_ = h.eng.Wait(context.Background())
	m, _ := h.store.GetMessage(context.Background(), id)
	if m.Status != store.StatusCancelled {
		t.Errorf("the user cancelled and saw the cancelled block, but the reply is stored %q with blocks %+v", m.Status, m.Blocks)
	}
}

// A panic in host code while a turn begins gives the user's slot back.

func TestPanicWhileATurnBeginsReleasesTheSlot(t *testing.T) {
	var boom atomic.Bool
	boom.Store(true)
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, p, func(c *assistant.Config) {
		c.MaxTurnsPerUser = 1
		inner := c.Authorizer
		c.Authorizer = assistant.AuthorizerFunc(func(ctx context.Context, u parley.User, a assistant.Action) error {
			if a.Kind == assistant.RunAutonomous && boom.Load() {
				panic("host authorizer bug")
			}
			return inner.Authorize(ctx, u, a)
		})
	})
	func() {
		defer func() { _ = recover() }() // as net/http recovers a handler's panic
		_, _ = assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{Message: "hi", Autonomous: true}))
	}()
	boom.Store(false)
	if _, err := assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"})); err != nil {
		t.Fatalf("after one panicking request alice is locked out: %v", err)
	}
}

// A failing quota ledger cannot use up the time the reply's write has.

type flakySettle struct {
	quota.Ledger
}

func (l flakySettle) Settle(ctx context.Context, h quota.Hold, used int64) error {
	return errors.New("pq: sorry, too many clients already")
}

func TestFailingLedgerDoesNotStarveTheReplyWrite(t *testing.T) {
	t.Parallel() // waits out a timeout; overlaps the rest of the package
	if testing.Short() {
		t.Skip("waits out the settle window")
	}
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("seen by the user"), fake.Usage(10, 5)})
	h := newHarness(t, p)
	eng, err := assistant.New(assistant.Config{Provider: p, Store: h.store, Ledger: flakySettle{newLedger(t, 100_000)},
		Authorizer: assistant.RoleAuthorizer{}})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := assistant.Collect(eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"}))
	m, gerr := h.store.GetMessage(context.Background(), reply.MessageID)
	if gerr != nil {
		t.Fatal(gerr)
	}
	if err != nil || m.Status != store.StatusComplete {
		t.Errorf("store healthy, only the quota ledger failing: stream err %v, stored %q %+v: the reply was lost", err, m.Status, m.Blocks)
	}
}

// Spend is recorded once: a Record whose commit went through but whose
// answer was lost is not retried into a second charge.

type countingSpend struct {
	total atomic.Int64
	calls atomic.Int32
}

func (s *countingSpend) Allow(context.Context, quota.SpendKey, quota.SpendCap, time.Time) error {
	return nil
}
func (s *countingSpend) Record(_ context.Context, _ quota.SpendKey, tokens int64, _ time.Time) error {
	s.total.Add(tokens) // committed...
	if s.calls.Add(1) == 1 {
		return errors.New("driver: bad connection") // ...but the ack was lost
	}
	return nil
}

func TestSpendIsRecordedOnceWhenItsAnswerIsLost(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("ok"), fake.Usage(10, 5)})
	h := newHarness(t, p)
	sp := &countingSpend{}
	eng, err := assistant.New(assistant.Config{Provider: p, Store: h.store, SpendLedger: sp, Authorizer: assistant.RoleAuthorizer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := assistant.Collect(eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"})); err != nil {
		t.Fatal(err)
	}
	_ = eng.Wait(context.Background())
	if got := sp.total.Load(); got != 15 {
		t.Errorf("spend recorded %d tokens for a 15-token turn (%d Record calls)", got, sp.calls.Load())
	}
}

// Reported usage past the token cap at the end of a call stops the turn:
// no tools run for it and the model is not called again.
func TestReportedUsageOverTheCapEndsTheTurn(t *testing.T) {
	p := fake.New(
		fake.Turn{fake.CallTool("c1", "get_weather", `{"city":"Oslo"}`), fake.Usage(10, 20_000)},
		fake.Turn{fake.Text("Sunny in Oslo."), fake.Usage(10, 5)},
	)
	h := newHarness(t, p) // default MaxTurnOutputTokens 16384
	reply, _, err := h.collect(t, alice, assistant.Request{Message: "weather?"})
	t.Logf("err %v finish %q text %q calls %d tool runs %d", err, reply.Finish, reply.Text, p.Calls(), h.runs["get_weather"].Load())
	if reply.Finish != assistant.FinishLength || h.runs["get_weather"].Load() != 0 {
		t.Errorf("finish %q after %d tool runs, want length and none", reply.Finish, h.runs["get_weather"].Load())
	}
	if p.Calls() > 1 {
		t.Errorf("the turn had already written %d of 16384 tokens, yet the model was called again (%d calls); reply text %q", 20000, p.Calls(), reply.Text)
	}
}
