package assistant_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
	"github.com/parleyhq/parley/store"
)

// A user with MaxTurnsPerUser turns running is refused another with
// too_many_turns before anything is written or sent to the model; other
// users are not affected, and the slot comes back when a turn ends.
func TestTurnsInFlightPerUserAreCapped(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	started.Add(2)
	p := fake.New(
		fake.Turn{fake.Func(func(ctx context.Context, _ *providers.Request) fake.Turn {
			started.Done()
			<-release
			return fake.Turn{fake.Text("one")}
		})},
		fake.Turn{fake.Func(func(ctx context.Context, _ *providers.Request) fake.Turn {
			started.Done()
			<-release
			return fake.Turn{fake.Text("two")}
		})},
	)
	p.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, p, func(c *assistant.Config) { c.MaxTurnsPerUser = 2 })
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"})); err != nil {
				t.Errorf("running turn: %v", err)
			}
		})
	}
	started.Wait()
	threadsBefore := len(threadsOf(t, h, alice))
	_, err := assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{Message: "a third"}))
	if !errors.Is(err, assistant.ErrTooManyTurns) {
		t.Fatalf("third turn: err = %v, want ErrTooManyTurns", err)
	}
	if n := len(threadsOf(t, h, alice)); n != threadsBefore {
		t.Errorf("the refused turn left %d threads, want %d", n, threadsBefore)
	}
	if p.Calls() != 2 {
		t.Errorf("model called %d times, want only the 2 running turns", p.Calls())
	}
	if _, err := assistant.Collect(h.eng.Stream(context.Background(), bob, assistant.Request{Message: "hi"})); err != nil {
		t.Errorf("another user is refused too: %v", err)
	}
	close(release)
	wg.Wait()
	if err := h.eng.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{Message: "again"})); err != nil {
		t.Errorf("after the turns ended: %v, want a slot free again", err)
	}
}

func threadsOf(t *testing.T, h *harness, u parley.User) []store.Thread {
	t.Helper()
	ts, err := h.eng.Threads(context.Background(), u, store.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// Refusals before the turn starts (here an invalid request) give the slot
// back: a user who sends many bad requests is not locked out.
func TestRefusedTurnsReleaseTheirSlot(t *testing.T) {
	p := fake.New()
	p.SetDefault(fake.Turn{fake.Text("ok")})
	h := newHarness(t, p, func(c *assistant.Config) { c.MaxTurnsPerUser = 1 })
	for range 3 {
		_, err := assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{ThreadID: "missing", Message: "hi"}))
		if !errors.Is(err, assistant.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	}
	if _, err := assistant.Collect(h.eng.Stream(context.Background(), alice, assistant.Request{Message: "hi"})); err != nil {
		t.Fatalf("a user whose requests were refused is locked out: %v", err)
	}
}
