package assistant

import (
	"fmt"
	"sync"
)

// userTurns counts each user's turns in flight on this Engine, for
// Config.MaxTurnsPerUser: the first refusal a flood of requests meets, before
// any read, scan or write.
type userTurns struct {
	mu sync.Mutex
	n  map[string]int
}

// acquire takes one of userID's max slots (max < 0: no cap).
func (u *userTurns) acquire(userID string, max int) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if max >= 0 && u.n[userID] >= max {
		return &Error{Code: CodeTooManyTurns, Op: "admit turn", Err: fmt.Errorf("user has %d turns running, the limit", max)}
	}
	if u.n == nil {
		u.n = make(map[string]int)
	}
	u.n[userID]++
	return nil
}

// release gives back a slot acquire took.
func (u *userTurns) release(userID string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.n[userID]--; u.n[userID] <= 0 {
		delete(u.n, userID)
	}
}
