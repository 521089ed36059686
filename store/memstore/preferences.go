package memstore

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/store"
)

// ModelPreference implements store.Preferences.
func (s *Store) ModelPreference(ctx context.Context, userID string) (store.ModelPreference, error) {
	if err := ctx.Err(); err != nil {
		return store.ModelPreference{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.preferences[userID]
	if !ok {
		return store.ModelPreference{}, notFound("model preference of user", userID)
	}
	return p, nil
}

// SetModelPreference implements store.Preferences.
func (s *Store) SetModelPreference(ctx context.Context, p store.ModelPreference) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.UserID == "" || p.Connection == "" || p.Model == "" {
		return fmt.Errorf("memstore: set model preference: user, connection and model required: %w", store.ErrInvalid)
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.preferences[p.UserID] = p // a ModelPreference holds no pointers: the value is the copy
	return nil
}

// ClearModelPreference implements store.Preferences.
func (s *Store) ClearModelPreference(ctx context.Context, userID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.preferences, userID)
	return nil
}
