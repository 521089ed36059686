package memquota

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"time"

	"github.com/parleyhq/parley/quota"
)

var (
	_ quota.Ledger  = (*Ledger)(nil)
	_ quota.Renewer = (*Ledger)(nil)
)

const shardCount = 64 // a power of two

// unset marks a period without a per-user override.
const unset int64 = -2

// Ledger is an in-memory quota.Ledger. Create one with New.
type Ledger struct {
	policy   quota.Policy
	loc      *time.Location
	ttl      time.Duration
	defaults [3]int64 // resolved: a limit or quota.Unlimited
	seed     maphash.Seed
	idPrefix string
	windows  quota.WindowCache
	shards   [shardCount]shard
}

type shard struct {
	mu     sync.Mutex
	users  map[string]*user
	prefix string // the ledger's id prefix and the shard's index
	nextID uint64
	_      [64]byte // keep neighbouring shards' locks off one cache line
}

// user is one user's override, usage rows and open holds.
type user struct {
	limits [3]int64  // override per period, or unset
	rows   [3][]*row // per period; the current one and any still held
	holds  map[string]*hold
}

// row is the usage of one (period, period start).
type row struct {
	start, end time.Time
	used, held int64
	open       int // open holds reserved in this row
}

type hold struct {
	estimate int64 // tokens held: the estimate as Reserve capped it
	expires  time.Time
	rows     [3]*row
}

var periods = quota.PeriodOrder

// New returns an empty Ledger with the given policy. It returns an error
// wrapping quota.ErrInvalid if the policy is invalid.
func New(p quota.Policy) (*Ledger, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("memquota: %w", err)
	}
	l := &Ledger{
		policy: quota.Policy{Defaults: p.Defaults.Clone(), Location: p.Loc(), HoldTTL: p.TTL()},
		loc:    p.Loc(),
		ttl:    p.TTL(),
		seed:   maphash.MakeSeed(),
	}
	for i, per := range periods {
		l.defaults[i] = l.policy.Limit(per, quota.Limits{})
	}
	// Hold ids carry a random per-ledger prefix, so a hold from one ledger
	// is never found in another.
	var b [6]byte
	_, _ = rand.Read(b[:])
	l.idPrefix = "h" + hex.EncodeToString(b[:]) + "-"
	for i := range l.shards {
		l.shards[i].users = make(map[string]*user)
		l.shards[i].prefix = l.idPrefix + strconv.Itoa(i) + "-"
	}
	return l, nil
}

// Policy returns the ledger's policy with its defaults filled in.
func (l *Ledger) Policy() quota.Policy {
	p := l.policy
	p.Defaults = p.Defaults.Clone()
	return p
}

func (l *Ledger) shard(userID string) *shard {
	return &l.shards[maphash.String(l.seed, userID)&(shardCount-1)]
}

func (l *Ledger) windowsAt(now time.Time) *quota.Windows { return l.windows.At(now, l.loc) }

func (u *user) limit(l *Ledger, i int) int64 {
	if u != nil && u.limits[i] != unset {
		return u.limits[i]
	}
	return l.defaults[i]
}

// row returns the user's row for period i starting at start, or nil.
func (u *user) row(i int, start time.Time) *row {
	for _, r := range u.rows[i] {
		if r.start.Equal(start) {
			return r
		}
	}
	return nil
}

// usage builds the quota.PeriodUsage of period i in window w.
func (l *Ledger) usage(u *user, i int, w *quota.Windows) quota.PeriodUsage {
	pu := quota.PeriodUsage{
		Period:   periods[i],
		Start:    w[i].Start,
		ResetsAt: w[i].End,
		Limit:    u.limit(l, i),
	}
	if u != nil {
		if r := u.row(i, w[i].Start); r != nil {
			pu.Used, pu.Held = r.used, r.held
		}
	}
	return pu
}

func checkUser(op, userID string) error {
	if userID == "" {
		return fmt.Errorf("memquota: %s: empty user id: %w", op, quota.ErrInvalid)
	}
	return nil
}

// Reserve implements quota.Ledger.
func (l *Ledger) Reserve(ctx context.Context, userID string, estimate int64, now time.Time) (quota.Hold, error) {
	if err := ctx.Err(); err != nil {
		return quota.Hold{}, err
	}
	if err := checkUser("reserve", userID); err != nil {
		return quota.Hold{}, err
	}
	if estimate < 0 {
		return quota.Hold{}, fmt.Errorf("memquota: reserve: negative estimate %d: %w", estimate, quota.ErrInvalid)
	}
	w := l.windowsAt(now)
	sh := l.shard(userID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	u := sh.users[userID]
	if u == nil {
		u = &user{limits: [3]int64{unset, unset, unset}, holds: make(map[string]*hold)}
		sh.users[userID] = u
	}
	// The shard's lock makes the check and the hold one step. Admit caps
	// the hold and picks the period to report, as in every implementation.
	held, err := quota.Usage{
		UserID: userID,
		Daily:  l.usage(u, 0, w), Weekly: l.usage(u, 1, w), Monthly: l.usage(u, 2, w),
	}.Admit(estimate)
	if err != nil {
		return quota.Hold{}, err
	}
	h := &hold{estimate: held, expires: now.Add(l.ttl)}
	for i := range periods {
		r := u.row(i, w[i].Start)
		if r == nil {
			u.prune(i, now)
			r = &row{start: w[i].Start, end: w[i].End}
			u.rows[i] = append(u.rows[i], r)
		}
		r.held += held
		r.open++
		h.rows[i] = r
	}
	sh.nextID++
	id := sh.prefix + strconv.FormatUint(sh.nextID, 36)
	u.holds[id] = h
	return quota.Hold{ID: id, UserID: userID, Estimate: held, ExpiresAt: h.expires}, nil
}

// prune drops the rows of period i that ended by now and have no open hold:
// usage is reported only for the periods containing now, and the clock of a
// Ledger's callers moves forward.
func (u *user) prune(i int, now time.Time) {
	rows := u.rows[i][:0]
	for _, r := range u.rows[i] {
		if r.open > 0 || now.Before(r.end) {
			rows = append(rows, r)
		}
	}
	clear(u.rows[i][len(rows):])
	u.rows[i] = rows
}

// Settle implements quota.Ledger.
func (l *Ledger) Settle(ctx context.Context, h quota.Hold, actual int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if actual < 0 {
		return fmt.Errorf("memquota: settle: negative actual %d: %w", actual, quota.ErrInvalid)
	}
	return l.close("settle", h, actual)
}

// Release implements quota.Ledger.
func (l *Ledger) Release(ctx context.Context, h quota.Hold) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.close("release", h, 0)
}

func (l *Ledger) close(op string, h quota.Hold, actual int64) error {
	sh := l.shard(h.UserID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	u := sh.users[h.UserID]
	var hd *hold
	if u != nil {
		hd = u.holds[h.ID]
	}
	if hd == nil {
		return fmt.Errorf("memquota: %s hold %q: %w", op, h.ID, quota.ErrHoldNotFound)
	}
	delete(u.holds, h.ID)
	hd.apply(actual)
	return nil
}

// Renew implements quota.Renewer.
func (l *Ledger) Renew(ctx context.Context, h quota.Hold, expiresAt time.Time) (quota.Hold, error) {
	if err := ctx.Err(); err != nil {
		return quota.Hold{}, err
	}
	if expiresAt.IsZero() {
		return quota.Hold{}, fmt.Errorf("memquota: renew hold %q: zero expiry: %w", h.ID, quota.ErrInvalid)
	}
	sh := l.shard(h.UserID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var hd *hold
	if u := sh.users[h.UserID]; u != nil {
		hd = u.holds[h.ID]
	}
	if hd == nil {
		return quota.Hold{}, fmt.Errorf("memquota: renew hold %q: %w", h.ID, quota.ErrHoldNotFound)
	}
	hd.expires = expiresAt
	return quota.Hold{ID: h.ID, UserID: h.UserID, Estimate: hd.estimate, ExpiresAt: expiresAt}, nil
}

// apply moves a closed hold's estimate out of held and charges actual.
func (hd *hold) apply(actual int64) {
	for _, r := range hd.rows {
		r.held -= hd.estimate
		r.used += actual
		r.open--
	}
}

// Usage implements quota.Ledger.
func (l *Ledger) Usage(ctx context.Context, userID string, now time.Time) (quota.Usage, error) {
	if err := ctx.Err(); err != nil {
		return quota.Usage{}, err
	}
	if err := checkUser("usage", userID); err != nil {
		return quota.Usage{}, err
	}
	w := l.windowsAt(now)
	sh := l.shard(userID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	u := sh.users[userID]
	return quota.Usage{
		UserID:  userID,
		Daily:   l.usage(u, 0, w),
		Weekly:  l.usage(u, 1, w),
		Monthly: l.usage(u, 2, w),
	}, nil
}

// SetLimits implements quota.Ledger.
func (l *Ledger) SetLimits(ctx context.Context, userID string, lim quota.Limits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkUser("set limits", userID); err != nil {
		return err
	}
	if err := lim.Validate(); err != nil {
		return fmt.Errorf("memquota: set limits: %w", err)
	}
	sh := l.shard(userID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	u := sh.users[userID]
	if u == nil {
		u = &user{holds: make(map[string]*hold)}
		sh.users[userID] = u
	}
	for i, per := range periods {
		u.limits[i] = unset
		if v := lim.Get(per); v != nil {
			u.limits[i] = *v
		}
	}
	return nil
}

// Limits implements quota.Ledger.
func (l *Ledger) Limits(ctx context.Context, userID string) (quota.Limits, error) {
	if err := ctx.Err(); err != nil {
		return quota.Limits{}, err
	}
	if err := checkUser("limits", userID); err != nil {
		return quota.Limits{}, err
	}
	sh := l.shard(userID)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var lim quota.Limits
	if u := sh.users[userID]; u != nil {
		for i, f := range []**int64{&lim.Daily, &lim.Weekly, &lim.Monthly} {
			if u.limits[i] != unset {
				*f = quota.Limit(u.limits[i])
			}
		}
	}
	return lim, nil
}

// Sweep implements quota.Ledger. It also forgets users left with no open
// hold, no override and no usage in a period containing now, so a
// long-running Ledger's memory follows its active users.
func (l *Ledger) Sweep(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for id, u := range sh.users {
			for hid, hd := range u.holds {
				if !now.Before(hd.expires) {
					delete(u.holds, hid)
					hd.apply(0)
					n++
				}
			}
			empty := len(u.holds) == 0 && u.limits == [3]int64{unset, unset, unset}
			for p := range periods {
				u.prune(p, now)
				empty = empty && len(u.rows[p]) == 0
			}
			if empty {
				delete(sh.users, id)
			}
		}
		sh.mu.Unlock()
	}
	return n, nil
}
