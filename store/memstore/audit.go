package memstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

// AppendAudit implements store.Audit.
func (s *Store) AppendAudit(ctx context.Context, e *store.AuditEvent) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e == nil || e.Kind == "" || e.ActorID == "" {
		return fmt.Errorf("memstore: append audit: kind and actor required: %w", store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.ID == "" {
		e.ID = uuid.NewString()
	}
	if s.auditIDs[e.ID] {
		return fmt.Errorf("memstore: audit event %q: %w", e.ID, store.ErrConflict)
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = now()
	}
	c := *e
	c.Data = bytes.Clone(e.Data)
	s.audit = append(s.audit, c)
	s.auditIDs[e.ID] = true
	return nil
}

// ListAudit implements store.Audit.
func (s *Store) ListAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []store.AuditEvent
	// Newest first: insertion order reversed, ties in CreatedAt included.
	for i := len(s.audit) - 1; i >= 0; i-- {
		e := s.audit[i]
		if (f.Kind != "" && e.Kind != f.Kind) || (f.ActorID != "" && e.ActorID != f.ActorID) ||
			(f.ThreadID != "" && e.ThreadID != f.ThreadID) {
			continue
		}
		e.Data = bytes.Clone(e.Data)
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b store.AuditEvent) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out[:min(limit, len(out))], nil
}
