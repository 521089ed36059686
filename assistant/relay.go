package assistant

import (
	"runtime"
	"sync"

	"github.com/parleyhq/parley/blocks"
)

// relayBuffer is how many blocks the worker may run ahead of the consumer.
const relayBuffer = 64

// relayKeep is the largest of the relay's two slices (the queue and the
// consumer's last batch) kept for reuse once the consumer has caught up: a
// burst does not leave a parked turn holding room for 64 blocks while it
// waits on the model.
const relayKeep = 8

// relay hands the worker's blocks to the consumer. The worker never waits
// on a consumer that left, nor, once the turn is stopped, on a stalled
// one. Its queue grows with the consumer's lag, up to relayBuffer blocks,
// and is small again once the consumer catches up: a parked turn holds no
// room for blocks it is not sending.
type relay struct {
	mu      sync.Mutex
	q       []blocks.Block // sent, not yet taken
	spare   []blocks.Block // the consumer's last batch, emptied, for reuse
	closed  bool
	dropped bool // a block was not queued because the turn was stopped
	waiting bool // the consumer waits on ready

	ready    chan struct{} // capacity 1: something was queued, or closed
	room     chan struct{} // capacity 1: the consumer took a full queue
	detached chan struct{} // closed when the consumer leaves
	stop     *stopper
}

func newRelay(stop *stopper) *relay {
	return &relay{ready: make(chan struct{}, 1), room: make(chan struct{}, 1), detached: make(chan struct{}), stop: stop}
}

// signal wakes whoever waits on c, if nobody did yet.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// send hands b on; the worker calls it. It waits while the queue is full,
// unless the consumer left or the turn was stopped.
func (r *relay) send(b blocks.Block) {
	for {
		r.mu.Lock()
		if len(r.q) < relayBuffer {
			r.q = append(r.q, b)
			waiting := r.waiting
			r.waiting = false
			r.mu.Unlock()
			if waiting {
				// The consumer waits for this block: let it run now rather
				// than when this goroutine next blocks.
				signal(r.ready)
				runtime.Gosched()
			}
			return
		}
		r.mu.Unlock()
		// The consumer is behind. A stopped turn never waits on a stalled
		// reader; one that left reads nothing more.
		select {
		case <-r.room:
		case <-r.detached:
			return
		case <-r.stop.done():
			// The block is lost to the consumer, perhaps the worker's
			// error: forward must end with the stop's block.
			r.mu.Lock()
			r.dropped = true
			r.mu.Unlock()
			return
		}
	}
}

// close ends the worker's side: it has sent everything.
func (r *relay) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	signal(r.ready)
}

// take returns the queued blocks and whether the worker closed the relay
// after sending everything it sent, none dropped; with none queued and
// wait set, the consumer is marked waiting, to be signalled on ready.
// done hands the batch back.
func (r *relay) take(wait bool) (batch []blocks.Block, complete bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	batch, r.q, r.spare = r.q, r.spare, nil
	if len(batch) == relayBuffer {
		signal(r.room)
	}
	r.waiting = wait && len(batch) == 0 && !r.closed
	return batch, r.closed && !r.dropped
}

// done returns a batch take gave, its blocks delivered, for reuse.
func (r *relay) done(batch []blocks.Block) {
	clear(batch)
	if cap(batch) > relayKeep {
		return
	}
	r.mu.Lock()
	if r.spare == nil {
		r.spare = batch[:0]
	}
	r.mu.Unlock()
}

// forward yields the blocks until the worker closes the relay, yield
// returns false (detach is called) or an error block passes. When the
// turn is stopped it delivers what was produced before the stop and ends
// with stopBlock: if the turn has finished, and the consumer missed none
// of its blocks, that is everything; if it is still draining, or a block
// was dropped for a stalled consumer, the stream ends now, with the block
// the worker persists.
func (r *relay) forward(yield func(blocks.Block) bool, detach func(), stopBlock func() blocks.Block) {
	defer close(r.detached)
	for {
		batch, complete := r.take(true)
		for _, b := range batch {
			if !yield(b) || b.Kind == blocks.Error {
				detach()
				return
			}
		}
		r.done(batch)
		if complete && len(batch) == 0 {
			return
		}
		if !r.stop.stopped() {
			if len(batch) > 0 {
				continue
			}
			select {
			case <-r.ready:
				continue
			case <-r.stop.done():
			}
		}
		// What was sent before the stop; a turn that finished (it closes
		// the relay before its context ends) sent everything, unless a
		// block was dropped.
		batch, complete = r.take(false)
		for _, b := range batch {
			if !yield(b) || b.Kind == blocks.Error {
				return
			}
		}
		if !complete {
			yield(stopBlock())
		}
		return
	}
}
