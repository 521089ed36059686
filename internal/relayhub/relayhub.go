package relayhub

import (
	"context"
	"fmt"
	"sync"

	"github.com/parleyhq/parley/store"
)

// Hub is the subscriptions of one Relay. Its zero value is ready, and it
// is safe for concurrent use. Idle, when set before first use, is called
// with the Hub's lock held when its last subscription ends, and Busy when
// its first begins, so a Relay that needs a connection while anyone
// listens can open and close it there (neither may call back into the
// Hub).
type Hub struct {
	Busy, Idle func()

	mu   sync.Mutex
	subs map[string]map[*sub]struct{}
	n    int
}

type sub struct {
	topic string
	ch    chan []byte
}

// Check returns store.ErrInvalid, wrapped with what, for an invalid topic
// or a payload too long to relay.
func Check(what, topic string, payload []byte) error {
	if !store.ValidRelayTopic(topic) {
		return fmt.Errorf("%s: topic is not 1 to %d printable ASCII bytes: %w", what, store.MaxRelayTopic, store.ErrInvalid)
	}
	if len(payload) > store.MaxRelayPayload {
		return fmt.Errorf("%s: payload of %d bytes, past %d: %w", what, len(payload), store.MaxRelayPayload, store.ErrInvalid)
	}
	return nil
}

// Subscribe adds a subscription to topic that ends when ctx does; the
// caller checked topic.
func (h *Hub) Subscribe(ctx context.Context, topic string) <-chan []byte {
	s := &sub{topic: topic, ch: make(chan []byte, store.RelayBuffer)}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[string]map[*sub]struct{}{}
	}
	if h.subs[topic] == nil {
		h.subs[topic] = map[*sub]struct{}{}
	}
	h.subs[topic][s] = struct{}{}
	h.n++
	if h.n == 1 && h.Busy != nil {
		h.Busy()
	}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.remove(s)
	})
	return s.ch
}

// Deliver hands a copy of payload to each subscriber of topic. A
// subscriber whose buffer is full is dropped (its channel closed) rather
// than waited for or buffered without bound.
func (h *Hub) Deliver(topic string, payload []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs[topic] {
		select {
		case s.ch <- append([]byte(nil), payload...):
		default:
			h.remove(s)
		}
	}
}

// Has reports whether topic has subscribers, so that a payload nobody
// wants need not be decoded.
func (h *Hub) Has(topic string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[topic]) > 0
}

// DropAll ends every subscription (closes its channel): the Relay lost
// payloads they may have wanted.
func (h *Hub) DropAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.subs {
		for s := range subs {
			h.remove(s)
		}
	}
}

// remove ends s if it has not ended; h.mu is held.
func (h *Hub) remove(s *sub) {
	subs := h.subs[s.topic]
	if _, ok := subs[s]; !ok {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(h.subs, s.topic)
	}
	close(s.ch)
	h.n--
	if h.n == 0 && h.Idle != nil {
		h.Idle()
	}
}
