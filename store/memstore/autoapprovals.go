package memstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/parleyhq/parley/store"
)

var _ store.AutoApprovals = (*Store)(nil)

// AutoApprovals implements store.AutoApprovals.
func (s *Store) AutoApprovals(ctx context.Context, userID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.autoApprovals[userID]), nil
}

// SetAutoApprovals implements store.AutoApprovals.
func (s *Store) SetAutoApprovals(ctx context.Context, userID string, grants []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if userID == "" || slices.Contains(grants, "") {
		return fmt.Errorf("memstore: set auto-approvals: user and grants must not be empty: %w", store.ErrInvalid)
	}
	gs := slices.Compact(slices.Sorted(slices.Values(grants)))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.autoApprovals == nil {
		s.autoApprovals = make(map[string][]string)
	}
	if len(gs) == 0 {
		delete(s.autoApprovals, userID)
		return nil
	}
	s.autoApprovals[userID] = gs
	return nil
}
