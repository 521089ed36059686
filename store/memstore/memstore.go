package memstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/internal/relayhub"
	"github.com/parleyhq/parley/store"
)

var (
	_ store.Store         = (*Store)(nil)
	_ store.FeedbackStore = (*Store)(nil)
	_ store.SystemPrompts = (*Store)(nil)
	_ store.Preferences   = (*Store)(nil)
)

// Store is an in-memory store.Store. The zero value is not usable; call New.
type Store struct {
	mu       sync.RWMutex
	threads  map[string]*thread
	messages map[string]msgRef  // message id -> where it lives
	audit    []store.AuditEvent // in insertion order
	auditIDs map[string]bool
	// proposals by token; each thread lists its own tokens in creation order.
	proposals     map[string]*store.Proposal
	prompts       map[string]*store.SystemPrompt   // by id
	preferences   map[string]store.ModelPreference // by user id
	autoApprovals map[string][]string              // by user id: sorted, without repeats
	relay         relayhub.Hub                     // store.Relay's subscriptions (relay.go)
}

// thread is a stored thread and its messages, which are kept in Seq order:
// msgs[i].Seq == i+1, because AppendTurn is the only way in. The feedback
// on its messages lives here too, so it goes with the thread.
type thread struct {
	t         store.Thread
	msgs      []store.Message
	proposals []string // tokens, in creation order
	feedback  map[feedbackKey]store.Feedback
}

type msgRef struct {
	th *thread
	i  int // index in th.msgs
}

// New returns an empty Store.
func New() *Store {
	return &Store{
		threads:     make(map[string]*thread),
		messages:    make(map[string]msgRef),
		auditIDs:    make(map[string]bool),
		proposals:   make(map[string]*store.Proposal),
		prompts:     make(map[string]*store.SystemPrompt),
		preferences: make(map[string]store.ModelPreference),
	}
}

// now is the store's clock. Times are kept as given; Round(0) only drops the
// monotonic reading so stored values print and compare like any other.
func now() time.Time { return time.Now().Round(0) }

// CreateThread implements store.Threads.
func (s *Store) CreateThread(ctx context.Context, t *store.Thread) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if t == nil || t.OwnerID == "" {
		return fmt.Errorf("memstore: create thread: owner required: %w", store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.ID != "" {
		if _, ok := s.threads[t.ID]; ok {
			return fmt.Errorf("memstore: create thread %q: %w", t.ID, store.ErrConflict)
		}
	} else {
		t.ID = uuid.NewString()
	}
	n := now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = n
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = n
	}
	c := cloneThread(*t)
	c.LastSeq = 0                       // maintained by AppendTurn
	c.Summary, c.SummaryThrough = "", 0 // written by SetSummary only
	s.threads[t.ID] = &thread{t: c}
	return nil
}

// GetThread implements store.Threads.
func (s *Store) GetThread(ctx context.Context, id string) (store.Thread, error) {
	if err := ctx.Err(); err != nil {
		return store.Thread{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	th, ok := s.threads[id]
	if !ok {
		return store.Thread{}, notFound("thread", id)
	}
	return th.snapshot(), nil
}

// ListThreads implements store.Threads. Threads updated at the same instant
// are ordered by descending ID so that the order is stable.
func (s *Store) ListThreads(ctx context.Context, ownerID string, opts store.ListOptions) ([]store.Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = 50
	}
	s.mu.RLock()
	out := make([]store.Thread, 0)
	for _, th := range s.threads {
		t := th.t
		if t.OwnerID != ownerID ||
			(t.ArchivedAt != nil && !opts.IncludeArchived) ||
			(!opts.Before.IsZero() && !t.UpdatedAt.Before(opts.Before)) {
			continue
		}
		out = append(out, th.snapshot())
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Thread) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// RenameThread implements store.Threads. A rename is a change to the thread,
// so it also sets UpdatedAt.
func (s *Store) RenameThread(ctx context.Context, id, title string) error {
	return s.updateThread(ctx, "rename", id, func(t *store.Thread) {
		t.Title = title
		t.UpdatedAt = now()
	})
}

// ArchiveThread implements store.Threads.
func (s *Store) ArchiveThread(ctx context.Context, id string, at time.Time) error {
	return s.updateThread(ctx, "archive", id, func(t *store.Thread) {
		if t.ArchivedAt == nil {
			t.ArchivedAt = &at
		}
	})
}

// GetThreads implements store.ThreadBatch.
func (s *Store) GetThreads(ctx context.Context, ids []string) (map[string]store.Thread, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make(map[string]store.Thread, len(ids))
	for _, id := range ids {
		if th, ok := s.threads[id]; ok {
			out[id] = th.snapshot()
		}
	}
	return out, nil
}

// RequestCancel implements store.Threads. A later request replaces an
// earlier one.
func (s *Store) RequestCancel(ctx context.Context, id string, at time.Time) error {
	return s.updateThread(ctx, "request cancel", id, func(t *store.Thread) {
		t.CancelRequestedAt = &at
	})
}

// ClearCancel implements store.Threads.
func (s *Store) ClearCancel(ctx context.Context, id string) error {
	return s.updateThread(ctx, "clear cancel", id, func(t *store.Thread) {
		t.CancelRequestedAt = nil
	})
}

// SetSummary implements store.Threads. The write lock makes the compare
// and the set one step.
func (s *Store) SetSummary(ctx context.Context, id, summary string, through, prevThrough int) error {
	if err := checkSummary(summary, through); err != nil {
		return fmt.Errorf("memstore: set summary: %w", err)
	}
	var lost error
	err := s.updateThread(ctx, "set summary", id, func(t *store.Thread) {
		if t.SummaryThrough != prevThrough {
			lost = fmt.Errorf("memstore: set summary: thread %q is summarized through %d, not %d: %w",
				id, t.SummaryThrough, prevThrough, store.ErrConflict)
			return
		}
		t.Summary, t.SummaryThrough = summary, through
	})
	if err != nil {
		return err
	}
	return lost
}

// checkSummary returns why a summary through Seq through cannot be set, or nil.
func checkSummary(summary string, through int) error {
	switch {
	case through < 0:
		return fmt.Errorf("through %d is negative: %w", through, store.ErrInvalid)
	case through == 0 && summary != "":
		return fmt.Errorf("a summary through 0 covers nothing: %w", store.ErrInvalid)
	}
	return nil
}

func (s *Store) updateThread(ctx context.Context, op, id string, f func(*store.Thread)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.threads[id]
	if !ok {
		return fmt.Errorf("memstore: %s: %w", op, notFound("thread", id))
	}
	f(&th.t)
	return nil
}

// DeleteThread implements store.Threads.
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.threads[id]
	if !ok {
		return fmt.Errorf("memstore: delete: %w", notFound("thread", id))
	}
	for _, m := range th.msgs {
		delete(s.messages, m.ID)
	}
	for _, token := range th.proposals {
		delete(s.proposals, token)
	}
	delete(s.threads, id)
	return nil
}

// AppendTurn implements store.Messages. An empty assistant.ThreadID is
// filled from user.ThreadID; a different one is ErrInvalid. A message ID
// already taken (or the two messages sharing one) is ErrConflict, as is a
// non-zero user.Seq that is not the thread's next. The caller's messages
// are filled in only when the turn is written.
func (s *Store) AppendTurn(ctx context.Context, user, assistant *store.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case user == nil || assistant == nil:
		return fmt.Errorf("memstore: append turn: nil message: %w", store.ErrInvalid)
	case user.Role != store.RoleUser || assistant.Role != store.RoleAssistant:
		return fmt.Errorf("memstore: append turn: roles %q, %q, want user, assistant: %w",
			user.Role, assistant.Role, store.ErrInvalid)
	case user.ThreadID == "":
		return fmt.Errorf("memstore: append turn: thread id required: %w", store.ErrInvalid)
	case assistant.ThreadID != "" && assistant.ThreadID != user.ThreadID:
		return fmt.Errorf("memstore: append turn: messages name threads %q and %q: %w",
			user.ThreadID, assistant.ThreadID, store.ErrInvalid)
	case !user.Source.Valid():
		return fmt.Errorf("memstore: append turn: unknown source %q: %w", user.Source, store.ErrInvalid)
	case user.ID != "" && user.ID == assistant.ID:
		return fmt.Errorf("memstore: append turn: both messages have id %q: %w", user.ID, store.ErrConflict)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	th, ok := s.threads[user.ThreadID]
	if !ok {
		return fmt.Errorf("memstore: append turn: %w", notFound("thread", user.ThreadID))
	}
	for _, id := range []string{user.ID, assistant.ID} {
		if _, taken := s.messages[id]; id != "" && taken {
			return fmt.Errorf("memstore: append turn: message %q: %w", id, store.ErrConflict)
		}
	}
	if user.Seq != 0 && user.Seq != len(th.msgs)+1 {
		return fmt.Errorf("memstore: append turn: seq %d, thread's last is %d: %w",
			user.Seq, len(th.msgs), store.ErrConflict)
	}
	replaced := 0 // the Seq of the replaced message; 0 when none
	if user.Replaces != "" {
		m, err := replaceable(th, s.messages[user.Replaces], user.Replaces)
		if err != nil {
			return fmt.Errorf("memstore: append turn: %w", err)
		}
		replaced = m.Seq
	}

	// Validated: from here on nothing fails, so filling the caller's values
	// and writing both messages is all-or-nothing.
	n := now()
	if replaced > 0 {
		supersede(th, replaced, n)
	}
	assistant.Source = "" // only a user message has a source
	for _, m := range []*store.Message{user, assistant} {
		if m.ID == "" {
			m.ID = uuid.NewString()
		}
		m.ThreadID = user.ThreadID
		m.Seq = len(th.msgs) + 1
		if m.CreatedAt.IsZero() {
			m.CreatedAt = n
		}
		if m.UpdatedAt.IsZero() {
			m.UpdatedAt = n
		}
		c := cloneMessage(*m)
		c.SupersededAt = nil // a new turn is the current branch
		if m == assistant {
			c.Replaces = "" // only a user message replaces one
		}
		th.msgs = append(th.msgs, c)
		s.messages[m.ID] = msgRef{th: th, i: len(th.msgs) - 1}
	}
	th.t.UpdatedAt = n
	return nil
}

// replaceable returns the message ref points to if a new turn of th may
// replace it: a user message of th not yet superseded.
func replaceable(th *thread, ref msgRef, id string) (store.Message, error) {
	if ref.th != th {
		return store.Message{}, fmt.Errorf("replaced message %q is not in thread %q: %w", id, th.t.ID, store.ErrNotFound)
	}
	m := ref.th.msgs[ref.i]
	switch {
	case m.Role != store.RoleUser:
		return m, fmt.Errorf("replaced message %q is the %s's, not the user's: %w", id, m.Role, store.ErrInvalid)
	case m.SupersededAt != nil:
		return m, fmt.Errorf("replaced message %q is already superseded: %w", id, store.ErrConflict)
	}
	return m, nil
}

// supersede marks at the messages of th from Seq seq on that are still on
// the current branch, and clears the thread's summary if it covers seq.
func supersede(th *thread, seq int, at time.Time) {
	for i := seq - 1; i < len(th.msgs); i++ {
		if th.msgs[i].SupersededAt == nil {
			th.msgs[i].SupersededAt = cloneTime(&at)
		}
	}
	if seq <= th.t.SummaryThrough {
		th.t.Summary, th.t.SummaryThrough = "", 0
	}
}

// UpdateMessage implements store.Messages. A zero m.UpdatedAt is set to now
// (in m as well).
func (s *Store) UpdateMessage(ctx context.Context, m *store.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m == nil {
		return fmt.Errorf("memstore: update message: nil message: %w", store.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.messages[m.ID]
	if !ok {
		return fmt.Errorf("memstore: update message: %w", notFound("message", m.ID))
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = now()
	}
	stored := &ref.th.msgs[ref.i]
	stored.Status = m.Status
	stored.Blocks = cloneBlocks(m.Blocks)
	stored.ModelMessages = bytes.Clone(m.ModelMessages)
	stored.InputTokens = m.InputTokens
	stored.OutputTokens = m.OutputTokens
	stored.UpdatedAt = m.UpdatedAt
	return nil
}

// GetMessage implements store.Messages.
func (s *Store) GetMessage(ctx context.Context, id string) (store.Message, error) {
	if err := ctx.Err(); err != nil {
		return store.Message{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ref, ok := s.messages[id]
	if !ok {
		return store.Message{}, notFound("message", id)
	}
	return cloneMessage(ref.th.msgs[ref.i]), nil
}

// ListMessages implements store.Messages.
func (s *Store) ListMessages(ctx context.Context, threadID string) ([]store.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	th, ok := s.threads[threadID]
	if !ok {
		return nil, notFound("thread", threadID)
	}
	out := make([]store.Message, len(th.msgs))
	for i, m := range th.msgs {
		out[i] = cloneMessage(m)
	}
	return out, nil
}

func notFound(what, id string) error {
	return fmt.Errorf("memstore: %s %q: %w", what, id, store.ErrNotFound)
}

// The clone functions copy everything a caller could mutate through a value:
// pointers, slices and the bytes of raw JSON. Strings are immutable.

// snapshot returns a copy of the thread with LastSeq filled in.
func (th *thread) snapshot() store.Thread {
	t := cloneThread(th.t)
	t.LastSeq = len(th.msgs)
	return t
}

func cloneThread(t store.Thread) store.Thread {
	t.ArchivedAt = cloneTime(t.ArchivedAt)
	t.CancelRequestedAt = cloneTime(t.CancelRequestedAt)
	return t
}

func cloneTime(p *time.Time) *time.Time {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneMessage(m store.Message) store.Message {
	m.Blocks = cloneBlocks(m.Blocks)
	m.ModelMessages = bytes.Clone(m.ModelMessages)
	m.Guard.Categories = slices.Clone(m.Guard.Categories)
	m.SupersededAt = cloneTime(m.SupersededAt)
	return m
}

func cloneBlocks(bs []blocks.Block) []blocks.Block {
	if bs == nil {
		return nil
	}
	out := make([]blocks.Block, len(bs))
	for i, b := range bs {
		b.Data = bytes.Clone(b.Data)
		if b.Meta != nil {
			meta := *b.Meta
			b.Meta = &meta
		}
		out[i] = b
	}
	return out
}

// InterruptStale implements store.Messages.
func (s *Store) InterruptStale(ctx context.Context, updatedBefore time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, at := 0, now()
	for _, th := range s.threads {
		for i := range th.msgs {
			m := &th.msgs[i]
			if m.Status == store.StatusStreaming && m.UpdatedAt.Before(updatedBefore) {
				m.Status, m.UpdatedAt = store.StatusInterrupted, at
				n++
			}
		}
	}
	return n, nil
}
