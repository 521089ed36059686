package assistant_test

import (
	"errors"
	"testing"
	"time"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/providers"
	"github.com/parleyhq/parley/providers/fake"
)

func busy(after time.Duration) fake.Turn {
	return fake.Turn{fake.Fail(&providers.Error{Category: providers.CategoryRateLimit, StatusCode: 429, RetryAfter: after, Err: errors.New("slow down")})}
}

// A model call that fails before its first event with a busy or
// unreachable model is tried again, after the server's Retry-After, and
// the user sees a waiting status, not an error.
func TestBusyModelIsRetriedBeforeTheFirstToken(t *testing.T) {
	p := fake.New(busy(20*time.Millisecond),
		fake.Turn{fake.Fail(&providers.Error{Category: providers.CategoryConnection, Err: errors.New("connection reset")})},
		fake.Turn{fake.Text("Here."), fake.Usage(10, 2)})
	h := newHarness(t, p)
	r, streamed, err := h.collect(t, alice, assistant.Request{Message: "hi"})
	if err != nil || r.Text != "Here." {
		t.Fatalf("%q, %v", r.Text, err)
	}
	var waits []string
	for _, b := range find(streamed, blocks.Meta) {
		if b.Meta.Waiting != "" {
			waits = append(waits, b.Meta.Waiting)
		}
	}
	if len(waits) != 2 || waits[0] != "The model is busy. Trying again in 1s." || waits[1][:29] != "The model cannot be reached. " {
		t.Errorf("waiting statuses %q", waits)
	}
	if p.Calls() != 3 {
		t.Errorf("%d calls, want 3", p.Calls())
	}
	if r.Usage.InputTokens != 10 {
		t.Errorf("usage %+v: the failed calls were charged", r.Usage)
	}
	for _, b := range h.messages(t, r.ThreadID)[1].Blocks {
		if b.Kind == blocks.Meta {
			t.Errorf("a waiting status was stored: %+v", b)
		}
	}
}

func TestRetriesAreBoundedAndNeverAfterTheFirstToken(t *testing.T) {
	t.Run("after the first token", func(t *testing.T) {
		p := fake.New(fake.Turn{fake.Text("Half"), fake.Fail(&providers.Error{Category: providers.CategoryUnavailable, Err: errors.New("503")})},
			fake.Turn{fake.Text("never")})
		h := newHarness(t, p)
		_, _, err := h.collect(t, alice, assistant.Request{Message: "hi"})
		if !errors.Is(err, assistant.ErrModelUnavailable) || p.Calls() != 1 {
			t.Errorf("%v after %d calls; want the failure, with no second call", err, p.Calls())
		}
	})
	t.Run("attempts", func(t *testing.T) {
		p := fake.New(busy(time.Millisecond), busy(time.Millisecond), busy(time.Millisecond), busy(time.Millisecond), fake.Turn{fake.Text("late")})
		h := newHarness(t, p, func(c *assistant.Config) { c.ModelRetries = 2 })
		_, _, err := h.collect(t, alice, assistant.Request{Message: "hi"})
		if !errors.Is(err, assistant.ErrModelBusy) || p.Calls() != 3 {
			t.Errorf("%v after %d calls; want busy after 3", err, p.Calls())
		}
	})
	t.Run("total wait", func(t *testing.T) {
		p := fake.New(busy(time.Hour), fake.Turn{fake.Text("late")})
		h := newHarness(t, p)
		_, _, err := h.collect(t, alice, assistant.Request{Message: "hi"})
		if !errors.Is(err, assistant.ErrModelBusy) || p.Calls() != 1 {
			t.Errorf("%v after %d calls; a Retry-After past ModelRetryWait must not be waited for", err, p.Calls())
		}
	})
	t.Run("not a busy model", func(t *testing.T) {
		p := fake.New(fake.Turn{fake.Fail(&providers.Error{Category: providers.CategoryAuth, Err: errors.New("401")})}, fake.Turn{fake.Text("x")})
		h := newHarness(t, p)
		if _, _, err := h.collect(t, alice, assistant.Request{Message: "hi"}); err == nil || p.Calls() != 1 {
			t.Errorf("%v after %d calls; an auth failure is not retried", err, p.Calls())
		}
	})
	t.Run("off", func(t *testing.T) {
		p := fake.New(busy(time.Millisecond), fake.Turn{fake.Text("x")})
		h := newHarness(t, p, func(c *assistant.Config) { c.ModelRetries = -1 })
		if _, _, err := h.collect(t, alice, assistant.Request{Message: "hi"}); !errors.Is(err, assistant.ErrModelBusy) || p.Calls() != 1 {
			t.Errorf("%v after %d calls with retries off", err, p.Calls())
		}
	})
	t.Run("a stop during the wait", func(t *testing.T) {
		p := fake.New(busy(10*time.Second), fake.Turn{fake.Text("x")})
		h := newHarness(t, p)
		done := make(chan error, 1)
		var thread string
		started := make(chan struct{})
		go func() {
			_, err := assistant.Collect(func(yield func(blocks.Block) bool) {
				for b := range h.eng.Stream(t.Context(), alice, assistant.Request{Message: "hi"}) {
					if b.Kind == blocks.Meta && b.Meta.ThreadID != "" && thread == "" {
						thread = b.Meta.ThreadID
					}
					if b.Kind == blocks.Meta && b.Meta.Waiting != "" {
						close(started)
					}
					if !yield(b) {
						return
					}
				}
			})
			done <- err
		}()
		<-started
		t0 := time.Now()
		if err := h.eng.Cancel(t.Context(), alice, thread); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, assistant.ErrCancelled) {
			t.Errorf("%v", err)
		}
		waitTurns(t, h)
		if time.Since(t0) > 5*time.Second || p.Calls() != 1 {
			t.Errorf("the stop did not end the wait (%v, %d calls)", time.Since(t0), p.Calls())
		}
	})
}
