package assistant_test

import (
	"context"
	"iter"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"
	"weak"

	"github.com/parleyhq/parley/assistant"
	"github.com/parleyhq/parley/providers"
)

// retainProbe is a model whose first call, once its answer has begun,
// waits to be released, and keeps only weak pointers to the request it was
// given: to the request and its system prompt's bytes. Later calls (a
// title, say) answer at once.
type retainProbe struct {
	calls     atomic.Int32
	streaming chan struct{}
	release   chan struct{}
	req       weak.Pointer[providers.Request]
	system    weak.Pointer[byte]
}

func (p *retainProbe) Stream(ctx context.Context, req *providers.Request) iter.Seq2[providers.Event, error] {
	if p.calls.Add(1) > 1 {
		return func(yield func(providers.Event, error) bool) {
			if yield(providers.Event{Kind: providers.TextDelta, Text: "Done."}, nil) {
				yield(providers.Event{Kind: providers.FinishEvent, Finish: providers.FinishStop}, nil)
			}
		}
	}
	p.req = weak.Make(req)
	p.system = weak.Make(unsafe.StringData(req.System))
	return func(yield func(providers.Event, error) bool) {
		if !yield(providers.Event{Kind: providers.TextDelta, Text: "The answer is "}, nil) {
			return
		}
		close(p.streaming)
		select {
		case <-p.release:
		case <-ctx.Done():
			return
		}
		if yield(providers.Event{Kind: providers.TextDelta, Text: "42."}, nil) {
			yield(providers.Event{Kind: providers.FinishEvent, Finish: providers.FinishStop}, nil)
		}
	}
}

// TestAParkedTurnHoldsNoRequest holds what a turn keeps while its answer
// streams: once the model's stream has begun, nothing in the Engine keeps
// the request or its joined system prompt (the provider's own copy of the
// body is its business; the turn keeps the prompt's sections and the
// history the next round sends). A parked turn keeps what it must
// persist, and every parked turn pays for what it holds.
func TestAParkedTurnHoldsNoRequest(t *testing.T) {
	p := &retainProbe{streaming: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, p, func(c *assistant.Config) { c.DisableGuard = true })
	done := make(chan error, 1)
	go func() {
		_, err := assistant.Collect(h.eng.Stream(t.Context(), alice, assistant.Request{Message: "What is the answer?"}))
		done <- err
	}()
	<-p.streaming
	for range 3 {
		runtime.GC()
	}
	held := []string{}
	if p.req.Value() != nil {
		held = append(held, "the request")
	}
	if p.system.Value() != nil {
		held = append(held, "the joined system prompt")
	}
	close(p.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(held) > 0 {
		t.Errorf("while the answer streams, the turn still holds %v", held)
	}
}
