package memstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/parleyhq/parley/store"
)

// CreateProposal implements store.Proposals. The caller's proposal is
// filled in (Status, CreatedAt) only when it is stored.
func (s *Store) CreateProposal(ctx context.Context, p *store.Proposal) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkNewProposal(p); err != nil {
		return fmt.Errorf("memstore: create proposal: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.threads[p.ThreadID]
	if !ok {
		return fmt.Errorf("memstore: create proposal: %w", notFound("thread", p.ThreadID))
	}
	if _, taken := s.proposals[p.Token]; taken {
		return fmt.Errorf("memstore: create proposal: token taken: %w", store.ErrConflict)
	}
	p.Status = store.ProposalPending
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now()
	}
	c := cloneProposal(*p)
	c.DecidedAt = nil // set only by leaving pending
	s.proposals[p.Token] = &c
	th.proposals = append(th.proposals, p.Token)
	return nil
}

// checkNewProposal returns why p cannot be created, or nil. The token is
// a credential, so it is never put in an error.
func checkNewProposal(p *store.Proposal) error {
	switch {
	case p == nil:
		return fmt.Errorf("nil proposal: %w", store.ErrInvalid)
	case p.Token == "" || p.UserID == "" || p.ThreadID == "" || p.Tool == "" || p.ExpiresAt.IsZero():
		return fmt.Errorf("token, user, thread, tool and expiry required: %w", store.ErrInvalid)
	case p.Status != "" && p.Status != store.ProposalPending:
		return fmt.Errorf("status %q, want pending: %w", p.Status, store.ErrInvalid)
	}
	return nil
}

// GetProposal implements store.Proposals.
func (s *Store) GetProposal(ctx context.Context, token string) (store.Proposal, error) {
	if err := ctx.Err(); err != nil {
		return store.Proposal{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.proposals[token]
	if !ok {
		return store.Proposal{}, fmt.Errorf("memstore: proposal: %w", store.ErrNotFound)
	}
	return cloneProposal(*p), nil
}

// DecideProposal implements store.Proposals. The write lock makes the
// check of the status and the change one step.
func (s *Store) DecideProposal(ctx context.Context, token string, status store.ProposalStatus, at time.Time) (store.Proposal, error) {
	if err := ctx.Err(); err != nil {
		return store.Proposal{}, err
	}
	if status != store.ProposalApplied && status != store.ProposalDeclined {
		return store.Proposal{}, fmt.Errorf("memstore: decide proposal: status %q, want applied or declined: %w",
			status, store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.proposals[token]
	if !ok {
		return store.Proposal{}, fmt.Errorf("memstore: decide proposal: %w", store.ErrNotFound)
	}
	if p.Status != store.ProposalPending {
		return cloneProposal(*p), fmt.Errorf("memstore: decide proposal: already %s: %w", p.Status, store.ErrConflict)
	}
	p.DecidedAt = cloneTime(&at)
	if !p.ExpiresAt.After(at) {
		p.Status = store.ProposalExpired
		return cloneProposal(*p), fmt.Errorf("memstore: decide proposal: expired: %w", store.ErrConflict)
	}
	p.Status = status
	return cloneProposal(*p), nil
}

// ReopenProposal implements store.Proposals. Times are kept as given, so
// decidedAt matches when it is the same instant (time.Time.Equal).
func (s *Store) ReopenProposal(ctx context.Context, token string, decidedAt time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.proposals[token]
	if !ok {
		return fmt.Errorf("memstore: reopen proposal: %w", store.ErrNotFound)
	}
	if p.Status != store.ProposalApplied && p.Status != store.ProposalDeclined {
		return fmt.Errorf("memstore: reopen proposal: %s: %w", p.Status, store.ErrConflict)
	}
	if p.DecidedAt == nil || !p.DecidedAt.Equal(decidedAt) {
		return fmt.Errorf("memstore: reopen proposal: decided at another time: %w", store.ErrConflict)
	}
	p.Status, p.DecidedAt = store.ProposalPending, nil
	return nil
}

// ListProposals implements store.Proposals. Proposals created at the same
// instant list in the order they were created.
func (s *Store) ListProposals(ctx context.Context, threadID string) ([]store.Proposal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	th, ok := s.threads[threadID]
	if !ok {
		return []store.Proposal{}, nil
	}
	out := make([]store.Proposal, len(th.proposals))
	for i, token := range th.proposals {
		out[i] = cloneProposal(*s.proposals[token])
	}
	slices.SortStableFunc(out, func(a, b store.Proposal) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// ExpireProposals implements store.Proposals. DecidedAt of an expired
// proposal is before, the time the caller swept at.
func (s *Store) ExpireProposals(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.proposals {
		if p.Status == store.ProposalPending && !p.ExpiresAt.After(before) {
			p.Status, p.DecidedAt = store.ProposalExpired, cloneTime(&before)
			n++
		}
	}
	return n, nil
}

func cloneProposal(p store.Proposal) store.Proposal {
	p.Args = bytes.Clone(p.Args)
	p.DecidedAt = cloneTime(p.DecidedAt)
	return p
}
