package storetest

import (
	"testing"

	"github.com/parleyhq/parley/store"
)

// The isolation cases pin that values cross the boundary by copy: neither a
// value the caller passed in nor one the store returned aliases what the
// store keeps. Trivially true of a SQL store; the point for memory stores.
var isolationCases = []testCase{
	{"MutatingCreatedThreadChangesNothing", testThreadInputIsolated},
	{"MutatingReturnedThreadChangesNothing", testThreadOutputIsolated},
	{"MutatingAppendedMessagesChangesNothing", testAppendInputIsolated},
	{"MutatingUpdatedMessageChangesNothing", testUpdateInputIsolated},
	{"MutatingReturnedMessagesChangesNothing", testMessageOutputIsolated},
}

func testThreadInputIsolated(t *testing.T, s store.Store) {
	archived, cancel := at(5), at(6)
	in := store.Thread{OwnerID: "user-1", Title: "title", CreatedAt: at(1), UpdatedAt: at(2),
		ArchivedAt: &archived, CancelRequestedAt: &cancel}
	must(t, s.CreateThread(t.Context(), &in), "CreateThread")
	want := in
	want.ArchivedAt, want.CancelRequestedAt = ptr(at(5)), ptr(at(6))

	archived, cancel = at(50), at(60)
	in.Title, in.OwnerID = "changed", "user-2"
	if d := diffThread(getThread(t, s, want.ID), want); d != "" {
		t.Errorf("mutating the created thread changed the store: %s", d)
	}
}

func testThreadOutputIsolated(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(1))
	must(t, s.ArchiveThread(t.Context(), th.ID, at(2)), "ArchiveThread")
	must(t, s.RequestCancel(t.Context(), th.ID, at(3)), "RequestCancel")
	want := getThread(t, s, th.ID)
	want.ArchivedAt, want.CancelRequestedAt = ptr(at(2)), ptr(at(3))

	got := getThread(t, s, th.ID)
	*got.ArchivedAt, *got.CancelRequestedAt = at(20), at(30)
	listed, err := s.ListThreads(t.Context(), "user-1", store.ListOptions{IncludeArchived: true})
	must(t, err, "ListThreads")
	for _, l := range listed {
		*l.ArchivedAt, *l.CancelRequestedAt = at(40), at(50)
	}
	if d := diffThread(getThread(t, s, th.ID), want); d != "" {
		t.Errorf("mutating returned threads changed the store: %s", d)
	}
}

// scribble mutates everything reachable from m in place: the bytes of raw
// JSON, the Meta behind the pointer, the blocks in the backing array.
func scribble(m *store.Message) {
	for i := range m.Blocks {
		b := &m.Blocks[i]
		b.Content = "scribbled"
		for j := range b.Data {
			b.Data[j] = ' '
		}
		if b.Meta != nil {
			b.Meta.Title = "scribbled"
			b.Meta.InputTokens = -1
		}
	}
	for j := range m.ModelMessages {
		m.ModelMessages[j] = ' '
	}
	m.Blocks = append(m.Blocks[:0:0], m.Blocks...) // and a reslice, for good measure
	m.Content = "scribbled"
	if m.SupersededAt != nil {
		*m.SupersededAt = at(-99)
	}
}

func testAppendInputIsolated(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	u, a := newTurn(th.ID, "q")
	u.Blocks = sampleBlocks()
	a.Blocks, a.ModelMessages = sampleBlocks(), sampleModelMessages()
	must(t, s.AppendTurn(t.Context(), u, a), "AppendTurn")
	wantU, wantA := cloneMessage(*u), cloneMessage(*a)
	scribble(u)
	scribble(a)
	if d := diffMessage(getMessage(t, s, wantU.ID), wantU); d != "" {
		t.Errorf("mutating the appended user message changed the store: %s", d)
	}
	if d := diffMessage(getMessage(t, s, wantA.ID), wantA); d != "" {
		t.Errorf("mutating the appended assistant message changed the store: %s", d)
	}
}

func testUpdateInputIsolated(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	_, a := appendTurn(t, s, th.ID, "q")
	a.Blocks, a.ModelMessages, a.UpdatedAt = sampleBlocks(), sampleModelMessages(), at(1)
	must(t, s.UpdateMessage(t.Context(), &a), "UpdateMessage")
	want := cloneMessage(a)
	scribble(&a)
	if d := diffMessage(getMessage(t, s, want.ID), want); d != "" {
		t.Errorf("mutating the updated message changed the store: %s", d)
	}
}

func testMessageOutputIsolated(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	u, a := appendTurn(t, s, th.ID, "q")
	a.Blocks, a.ModelMessages, a.UpdatedAt = sampleBlocks(), sampleModelMessages(), at(1)
	must(t, s.UpdateMessage(t.Context(), &a), "UpdateMessage")
	replaceTurn(t, s, th.ID, u.ID) // so that a has a SupersededAt to scribble on
	want := getMessage(t, s, a.ID)
	want = cloneMessage(want)

	got := getMessage(t, s, a.ID)
	scribble(&got)
	for _, m := range listMessages(t, s, th.ID) {
		scribble(&m)
	}
	if d := diffMessage(getMessage(t, s, a.ID), want); d != "" {
		t.Errorf("mutating returned messages changed the store: %s", d)
	}
	// Blocks of a returned message are not shared with another returned copy.
	x, y := getMessage(t, s, a.ID), getMessage(t, s, a.ID)
	scribble(&x)
	if d := diffMessage(y, want); d != "" {
		t.Errorf("two returned copies share memory: %s", d)
	}
}
