package sqlstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/internal/relayhub"
	"github.com/parleyhq/parley/store"
)

var _ store.Relay = (*Store)(nil)

// relayChannel is the PostgreSQL notification channel of every Relay
// topic: a notification's payload is the topic, a space and the payload in
// standard base64, which keeps NUL and every other byte intact in NOTIFY's
// text and stays under its 8000-byte limit (128 + 1 + 5464 bytes at most).
const relayChannel = "parley_relay"

// relay is a Store's side of store.Relay: its subscriptions, and the one
// LISTEN connection they share while there are any.
type relay struct {
	once sync.Once
	hub  relayhub.Hub

	mu     sync.Mutex
	conn   *relayConn // nil while nobody subscribes
	failed error      // listening is not supported: every Subscribe fails
}

// relayConn is one run of the LISTEN connection, from the first
// subscription to the end of the last.
type relayConn struct {
	ctx    context.Context
	cancel context.CancelFunc
	up     bool          // LISTEN holds: Subscribe may return
	err    error         // listening is not supported: Subscribe fails
	change chan struct{} // closed and replaced when up or err changes
}

// Publish implements store.Relay on PostgreSQL with pg_notify, one
// statement outside a transaction. On SQLite it returns
// errors.ErrUnsupported.
func (s *Store) Publish(ctx context.Context, topic string, payload []byte) error {
	const op = "relay publish"
	if err := s.listenable(op); err != nil {
		return err
	}
	if err := relayhub.Check("sqlstore: "+op, topic, payload); err != nil {
		return err
	}
	msg := topic + " " + base64.StdEncoding.EncodeToString(payload)
	_, err := s.db.ExecContext(ctx, s.rebind(`SELECT pg_notify(?, ?)`), relayChannel, msg)
	return fail(ctx, op, err)
}

// Subscribe implements store.Relay on PostgreSQL. The Store's
// subscriptions share one LISTEN connection of its own, taken from the
// pool with the first subscription (so the pool must allow one more
// connection than the host's other work needs while anyone subscribes),
// and closed, never returned to the pool, when the last ends. When that
// connection fails, every subscription ends (its channel is closed) and
// the next ones wait for a new connection, retried from 100 ms to 5 s
// apart. On SQLite, and on a pool of fewer than 4 connections (see
// minListenPool), it returns errors.ErrUnsupported, as Publish does.
func (s *Store) Subscribe(ctx context.Context, topic string) (<-chan []byte, error) {
	const op = "relay subscribe"
	if err := s.listenable(op); err != nil {
		return nil, err
	}
	if err := relayhub.Check("sqlstore: "+op, topic, nil); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fail(ctx, op, err)
	}
	r := &s.relay
	r.once.Do(func() { r.hub.Busy, r.hub.Idle = s.relayBusy, r.relayIdle })
	ch := r.hub.Subscribe(ctx, topic)
	for {
		r.mu.Lock()
		c := r.conn
		if c == nil { // the subscription ended, and with it the connection
			failed := r.failed
			r.mu.Unlock()
			switch {
			case failed != nil:
				return nil, fmt.Errorf("sqlstore: %s: %w", op, failed)
			case ctx.Err() != nil:
				return nil, fail(ctx, op, ctx.Err())
			}
			return nil, fmt.Errorf("sqlstore: %s: the connection failed before it listened", op)
		}
		up, err, change := c.up, c.err, c.change
		r.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("sqlstore: %s: %w", op, err)
		}
		if up {
			return ch, nil
		}
		select {
		case <-change:
		case <-ctx.Done():
			return nil, fail(ctx, op, ctx.Err())
		}
	}
}

// relayBusy opens the LISTEN connection for the first subscription; the
// hub's lock is held.
func (s *Store) relayBusy() {
	r := &s.relay
	ctx, cancel := context.WithCancel(context.Background())
	c := &relayConn{ctx: ctx, cancel: cancel, change: make(chan struct{})}
	r.mu.Lock()
	r.conn = c
	r.mu.Unlock()
	go s.relayListen(c)
}

// relayIdle closes the LISTEN connection after the last subscription; the
// hub's lock is held.
func (r *relay) relayIdle() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn != nil {
		r.conn.cancel()
		r.conn = nil
	}
}

// set records the state of c's connection and wakes the subscribers
// waiting on it.
func (r *relay) set(c *relayConn, up bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.up, c.err = up, err
	if err != nil {
		r.failed = err
	}
	close(c.change)
	c.change = make(chan struct{})
}

// relayListen holds c's LISTEN connection until c ends, reconnecting
// after a failure. Whatever was published while it was down is lost, so
// each failure ends every subscription.
func (s *Store) relayListen(c *relayConn) {
	r := &s.relay
	wait := 100 * time.Millisecond
	for {
		listened, err := s.listen(c.ctx, relayChannel, func() { r.set(c, true, nil) },
			func(p string) { r.notified(c, p) })
		if c.ctx.Err() != nil {
			return
		}
		if errors.Is(err, errors.ErrUnsupported) {
			r.set(c, false, err)
			r.hub.DropAll()
			return
		}
		r.set(c, false, nil)
		r.hub.DropAll()
		if listened {
			wait = 100 * time.Millisecond
		}
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// notified delivers one notification of c's connection. A payload that is
// not one Publish wrote (another program notifying the channel) is
// dropped.
func (r *relay) notified(c *relayConn, msg string) {
	if c.ctx.Err() != nil {
		return // a newer connection delivers from now on
	}
	topic, enc, ok := strings.Cut(msg, " ")
	if !ok || !r.hub.Has(topic) {
		return // another Store's, or nobody here listens to it
	}
	p, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return
	}
	r.hub.Deliver(topic, p)
}
