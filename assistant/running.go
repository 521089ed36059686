package assistant

import (
	"context"
	"sync"
)

// runningTurns counts turns between their first write and their final
// persist, so Engine.Wait can drain detached turns on shutdown. Unlike a
// sync.WaitGroup it allows new turns to start while someone waits.
type runningTurns struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero; nil while nobody waits
}

func (r *runningTurns) add() {
	r.mu.Lock()
	r.n++
	r.mu.Unlock()
}

func (r *runningTurns) done() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n--
	if r.n == 0 && r.idle != nil {
		close(r.idle)
		r.idle = nil
	}
}

func (r *runningTurns) wait(ctx context.Context) error {
	r.mu.Lock()
	if r.n == 0 {
		r.mu.Unlock()
		return nil
	}
	if r.idle == nil {
		r.idle = make(chan struct{})
	}
	idle := r.idle
	r.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
