package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/parleyhq/parley/store"
)

// feedbackKey is what makes feedback unique: one per user per message.
type feedbackKey struct{ messageID, userID string }

// SetFeedback implements store.FeedbackStore. The write lock makes finding
// the message and replacing the feedback one step. The caller's feedback
// is filled in (ThreadID and the times) only when it is stored.
func (s *Store) SetFeedback(ctx context.Context, f *store.Feedback) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkFeedback(f); err != nil {
		return fmt.Errorf("memstore: set feedback: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.messages[f.MessageID]
	if !ok {
		return fmt.Errorf("memstore: set feedback: %w", notFound("message", f.MessageID))
	}
	m := ref.th.msgs[ref.i]
	if m.Role != store.RoleAssistant {
		return fmt.Errorf("memstore: set feedback: message %q is the %s's, not the assistant's: %w",
			m.ID, m.Role, store.ErrInvalid)
	}
	row := *f
	row.ThreadID = m.ThreadID
	row.UpdatedAt = now()
	row.CreatedAt = row.UpdatedAt
	key := feedbackKey{f.MessageID, f.UserID}
	if old, ok := ref.th.feedback[key]; ok {
		row.CreatedAt = old.CreatedAt
	}
	if ref.th.feedback == nil {
		ref.th.feedback = make(map[feedbackKey]store.Feedback)
	}
	ref.th.feedback[key] = row // Feedback holds no pointers: the value is the copy
	f.ThreadID, f.CreatedAt, f.UpdatedAt = row.ThreadID, row.CreatedAt, row.UpdatedAt
	return nil
}

// checkFeedback returns why f cannot be set, or nil.
func checkFeedback(f *store.Feedback) error {
	switch {
	case f == nil:
		return fmt.Errorf("nil feedback: %w", store.ErrInvalid)
	case f.MessageID == "" || f.UserID == "":
		return fmt.Errorf("message and user required: %w", store.ErrInvalid)
	case !f.Rating.Valid():
		return fmt.Errorf("rating %q, want up or down: %w", f.Rating, store.ErrInvalid)
	}
	return nil
}

// DeleteFeedback implements store.FeedbackStore.
func (s *Store) DeleteFeedback(ctx context.Context, messageID, userID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := feedbackKey{messageID, userID}
	ref, ok := s.messages[messageID]
	if !ok {
		return fmt.Errorf("memstore: delete feedback: %w", notFound("message", messageID))
	}
	if _, ok := ref.th.feedback[key]; !ok {
		return fmt.Errorf("memstore: delete feedback: none by %q on message %q: %w", userID, messageID, store.ErrNotFound)
	}
	delete(ref.th.feedback, key)
	return nil
}

// ListFeedback implements store.FeedbackStore. An unknown thread has none.
func (s *Store) ListFeedback(ctx context.Context, threadID string) ([]store.Feedback, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	out := make([]store.Feedback, 0)
	if th, ok := s.threads[threadID]; ok {
		for _, f := range th.feedback {
			out = append(out, f)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Feedback) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.MessageID, b.MessageID),
			cmp.Compare(a.UserID, b.UserID))
	})
	return out, nil
}
