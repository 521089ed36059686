package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

// CreateSystemPrompt implements store.SystemPrompts. The caller's prompt is
// filled in (ID, Active, the times) only when it is stored.
func (s *Store) CreateSystemPrompt(ctx context.Context, p *store.SystemPrompt) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == nil || p.Text == "" {
		return fmt.Errorf("memstore: create system prompt: text required: %w", store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.prompts[p.ID]; p.ID != "" && taken {
		return fmt.Errorf("memstore: create system prompt %q: %w", p.ID, store.ErrConflict)
	}
	if p.ID == "" {
		p.ID = uuid.NewString()
	}
	n := now()
	if p.CreatedAt.IsZero() {
		p.CreatedAt = n
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = n
	}
	p.Active = false // only ActivateSystemPrompt makes one active
	c := *p          // a SystemPrompt holds no pointers: the value is the copy
	s.prompts[p.ID] = &c
	return nil
}

// GetSystemPrompt implements store.SystemPrompts.
func (s *Store) GetSystemPrompt(ctx context.Context, id string) (store.SystemPrompt, error) {
	if err := ctx.Err(); err != nil {
		return store.SystemPrompt{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.prompts[id]
	if !ok {
		return store.SystemPrompt{}, notFound("system prompt", id)
	}
	return *p, nil
}

// ListSystemPrompts implements store.SystemPrompts.
func (s *Store) ListSystemPrompts(ctx context.Context) ([]store.SystemPrompt, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	out := make([]store.SystemPrompt, 0, len(s.prompts))
	for _, p := range s.prompts {
		out = append(out, *p)
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.SystemPrompt) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out, nil
}

// ActivateSystemPrompt implements store.SystemPrompts. The write lock makes
// deactivating the others and activating id one step.
func (s *Store) ActivateSystemPrompt(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.prompts[id]
	if !ok {
		return fmt.Errorf("memstore: activate: %w", notFound("system prompt", id))
	}
	if p.Active {
		return nil
	}
	n := now()
	s.deactivatePrompts(n)
	p.Active, p.UpdatedAt = true, n
	return nil
}

// DeactivateSystemPrompts implements store.SystemPrompts.
func (s *Store) DeactivateSystemPrompts(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deactivatePrompts(now())
	return nil
}

// deactivatePrompts leaves no prompt active, setting UpdatedAt = at on the
// one it changes. The caller holds the write lock.
func (s *Store) deactivatePrompts(at time.Time) {
	for _, p := range s.prompts {
		if p.Active {
			p.Active, p.UpdatedAt = false, at
		}
	}
}

// ActiveSystemPrompt implements store.SystemPrompts.
func (s *Store) ActiveSystemPrompt(ctx context.Context) (store.SystemPrompt, error) {
	if err := ctx.Err(); err != nil {
		return store.SystemPrompt{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.prompts {
		if p.Active {
			return *p, nil
		}
	}
	return store.SystemPrompt{}, fmt.Errorf("memstore: no active system prompt: %w", store.ErrNotFound)
}

// DeleteSystemPrompt implements store.SystemPrompts.
func (s *Store) DeleteSystemPrompt(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.prompts[id]; !ok {
		return fmt.Errorf("memstore: delete: %w", notFound("system prompt", id))
	}
	delete(s.prompts, id)
	return nil
}
