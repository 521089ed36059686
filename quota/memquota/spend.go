package memquota

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/parleyhq/parley/quota"
)

var _ quota.SpendLedger = (*SpendLedger)(nil)

// SpendLedger is an in-memory quota.SpendLedger. The zero value is ready to
// use. It sees only its own process's spend: a deployment of several
// processes needs a shared (SQL) SpendLedger for a cap to hold.
type SpendLedger struct {
	mu   sync.Mutex
	keys map[quota.SpendKey]*spendLog
}

// spendLog is one key's records, oldest first.
type spendLog struct {
	at     []time.Time
	tokens []int64
	keep   time.Duration // the longest window Allow was asked about
	asked  bool          // whether Allow was asked at all; keep is an hour until then
}

// Allow implements quota.SpendLedger.
func (s *SpendLedger) Allow(ctx context.Context, key quota.SpendKey, c quota.SpendCap, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !c.Enabled() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lg := s.keys[key]
	if lg == nil {
		return nil
	}
	if lg.asked {
		lg.keep = max(lg.keep, c.Window)
	} else {
		lg.keep, lg.asked = c.Window, true
	}
	// Records are sorted by time: the window is lg.at[first:last].
	first := sort.Search(len(lg.at), func(i int) bool { return lg.at[i].After(now.Add(-c.Window)) })
	last := sort.Search(len(lg.at), func(i int) bool { return lg.at[i].After(now) })
	var spent int64
	for _, n := range lg.tokens[first:last] {
		spent += n
	}
	if spent < c.Budget {
		return nil
	}
	// Walk the window oldest first until enough has left it.
	left, retry := spent, now
	for i := first; i < last && left >= c.Budget; i++ {
		left -= lg.tokens[i]
		retry = lg.at[i].Add(c.Window)
	}
	return &quota.SpendCapError{Key: key, Cap: c, Spent: spent, RetryAt: retry}
}

// Record implements quota.SpendLedger. Records older than the longest window
// Allow has seen for the key (or than an hour, before any Allow) are dropped.
func (s *SpendLedger) Record(ctx context.Context, key quota.SpendKey, tokens int64, now time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if tokens < 0 {
		return fmt.Errorf("memquota: record spend: negative tokens %d: %w", tokens, quota.ErrInvalid)
	}
	if tokens == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = make(map[quota.SpendKey]*spendLog)
	}
	lg := s.keys[key]
	if lg == nil {
		lg = &spendLog{keep: time.Hour}
		s.keys[key] = lg
	}
	// Keep records sorted by time; callers' clocks almost always move
	// forward, so this is an append.
	i := len(lg.at)
	for i > 0 && lg.at[i-1].After(now) {
		i--
	}
	lg.at = append(lg.at, time.Time{})
	lg.tokens = append(lg.tokens, 0)
	copy(lg.at[i+1:], lg.at[i:])
	copy(lg.tokens[i+1:], lg.tokens[i:])
	lg.at[i], lg.tokens[i] = now, tokens

	cut := 0
	for cut < len(lg.at) && !lg.at[cut].After(now.Add(-lg.keep)) {
		cut++
	}
	// Reslicing leaves the dropped records to the next growth of the
	// arrays, which copies only the live ones.
	lg.at, lg.tokens = lg.at[cut:], lg.tokens[cut:]
	return nil
}
