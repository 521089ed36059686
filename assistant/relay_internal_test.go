package assistant

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/blocks"
)

func textBlock(i int) blocks.Block {
	return blocks.Block{Kind: blocks.Markdown, Content: fmt.Sprint(i)}
}

// The consumer sees every block, in order, however the two sides' speeds
// mix, and the stream ends when the worker closes the relay.
func TestRelayDeliversEveryBlockInOrder(t *testing.T) {
	var s stopper
	s.start(context.Background())
	r := newRelay(&s)
	const n = 5000
	go func() {
		for i := range n {
			r.send(textBlock(i))
			if i%97 == 0 {
				time.Sleep(time.Millisecond) // let the consumer catch up and wait
			}
		}
		r.close()
	}()
	got := 0
	r.forward(func(b blocks.Block) bool {
		if b.Content != fmt.Sprint(got) {
			t.Fatalf("block %d is %q", got, b.Content)
		}
		got++
		if got%1000 == 0 {
			time.Sleep(5 * time.Millisecond) // and fall behind: the worker waits on a full queue
		}
		return true
	}, func() { t.Error("detached") }, func() blocks.Block { t.Error("stop block"); return blocks.Block{} })
	if got != n {
		t.Fatalf("the consumer saw %d blocks, want %d", got, n)
	}
}

// A stalled consumer holds the worker at relayBuffer blocks, never more,
// and a stop releases the worker; once the consumer catches up, a parked
// relay keeps no room for a burst.
func TestRelayBoundsTheQueueAndShrinksAfterABurst(t *testing.T) {
	var s stopper
	s.start(context.Background())
	r := newRelay(&s)
	sent := make(chan int)
	go func() {
		for i := range relayBuffer + 10 {
			r.send(textBlock(i))
			sent <- i
		}
		close(sent)
	}()
	for i := range relayBuffer {
		if got := <-sent; got != i {
			t.Fatalf("sent %d, want %d", got, i)
		}
	}
	select {
	case i := <-sent:
		t.Fatalf("the worker sent block %d past a full queue", i)
	case <-time.After(50 * time.Millisecond):
	}
	batch, closed := r.take(false)
	if len(batch) != relayBuffer || closed {
		t.Fatalf("took %d blocks (closed %v), want %d", len(batch), closed, relayBuffer)
	}
	r.done(batch)
	for range 10 {
		<-sent // the room freed lets the rest through
	}
	if _, ok := <-sent; ok {
		t.Fatal("more than was sent")
	}
	batch, _ = r.take(false)
	r.done(batch)
	if r.mu.Lock(); cap(r.q)+cap(r.spare) > relayKeep {
		t.Errorf("a caught-up relay keeps room for %d blocks", cap(r.q)+cap(r.spare))
	}
	r.mu.Unlock()

	// Full again, the consumer stalled: a stop frees the worker.
	for i := range relayBuffer {
		r.send(textBlock(i))
	}
	freed := make(chan struct{})
	go func() { r.send(textBlock(-1)); close(freed) }()
	s.cancel(errCancelRequested)
	select {
	case <-freed:
	case <-time.After(5 * time.Second):
		t.Fatal("a stopped turn's worker waits on a stalled consumer")
	}
}

// A stop ends the consumer's stream with the stop's block after what was
// sent before it; a turn that closed first ends without one.
func TestRelayStopEndsTheStream(t *testing.T) {
	for _, finished := range []bool{false, true} {
		t.Run(fmt.Sprint("finished=", finished), func(t *testing.T) {
			var s stopper
			s.start(context.Background())
			r := newRelay(&s)
			var wg sync.WaitGroup
			var got []string
			wg.Go(func() {
				r.forward(func(b blocks.Block) bool {
					got = append(got, b.Content)
					return true
				}, func() {}, func() blocks.Block { return blocks.Block{Kind: blocks.Error, Content: "stopped"} })
			})
			r.send(textBlock(0))
			r.send(textBlock(1))
			if finished {
				r.close()
			}
			s.cancel(errCancelRequested)
			wg.Wait()
			want := "[0 1 stopped]"
			if finished {
				want = "[0 1]"
			}
			if fmt.Sprint(got) != want {
				t.Fatalf("the consumer saw %v, want %s", got, want)
			}
			if !errors.Is(context.Cause(s.ctx), errCancelRequested) {
				t.Fatal(context.Cause(s.ctx))
			}
		})
	}
}

// A consumer so far behind that the stopped worker's last blocks (its
// error among them) were dropped still ends with the stop's block, even
// when the worker has closed the relay by the time it looks again.
func TestRelayAStalledConsumerMissingBlocksEndsWithTheStop(t *testing.T) {
	var s stopper
	s.start(context.Background())
	r := newRelay(&s)
	for i := range relayBuffer {
		r.send(textBlock(i))
	}
	s.cancel(errCancelRequested)
	r.send(blocks.Block{Kind: blocks.Error, Content: "the worker's error"}) // dropped: the queue is full
	r.close()
	var last blocks.Block
	n := 0
	r.forward(func(b blocks.Block) bool { last, n = b, n+1; return true },
		func() {}, func() blocks.Block { return blocks.Block{Kind: blocks.Error, Content: "stopped"} })
	if n != relayBuffer+1 || last.Content != "stopped" {
		t.Fatalf("the consumer saw %d blocks ending with %q, want the %d queued and the stop's block", n, last.Content, relayBuffer)
	}
}
