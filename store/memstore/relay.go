package memstore

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/internal/relayhub"
	"github.com/parleyhq/parley/store"
)

var _ store.Relay = (*Store)(nil)

// Publish implements store.Relay within the process: the Store's
// subscribers of topic get payload before Publish returns.
func (s *Store) Publish(ctx context.Context, topic string, payload []byte) error {
	if err := relayhub.Check("memstore: relay publish", topic, payload); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: relay publish: %w", err)
	}
	s.relay.Deliver(topic, payload)
	return nil
}

// Subscribe implements store.Relay within the process.
func (s *Store) Subscribe(ctx context.Context, topic string) (<-chan []byte, error) {
	if err := relayhub.Check("memstore: relay subscribe", topic, nil); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: relay subscribe: %w", err)
	}
	return s.relay.Subscribe(ctx, topic), nil
}
