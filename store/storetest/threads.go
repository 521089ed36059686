package storetest

import (
	"testing"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

var threadCases = []testCase{
	{"CreateThenGetRoundTripsAllFields", testCreateGetRoundTrip},
	{"CreateFillsIDAndTimes", testCreateFillsIDAndTimes},
	{"CreateGeneratesUniqueUUIDs", testCreateGeneratesUniqueUUIDs},
	{"CreateWithoutOwnerIsInvalid", testCreateWithoutOwner},
	{"CreateWithTakenIDConflicts", testCreateDuplicateID},
	{"GetUnknownIsNotFound", testGetUnknownThread},
	{"RenameSetsTitleOnly", testRename},
	{"ArchiveKeepsFirstTime", testArchiveIdempotent},
	{"DeleteRemovesThreadAndItsMessages", testDelete},
	{"RequestAndClearCancelAreVisibleThroughGet", testCancelFlag},
	{"UnknownThreadIsNotFoundForEveryMutation", testThreadMutationsUnknown},
}

var listCases = []testCase{
	{"NewestUpdatedFirst", testListOrder},
	{"LimitKeepsNewest", testListLimit},
	{"ZeroOrNegativeLimitMeans50", testListDefaultLimit},
	{"BeforePagesStrictly", testListBefore},
	{"ArchivedOnlyWithIncludeArchived", testListArchived},
	{"OtherOwnersNeverListed", testListOwners},
	{"AppendTurnMovesThreadToTop", testListAfterAppend},
}

func testCreateGetRoundTrip(t *testing.T, s store.Store) {
	want := store.Thread{
		ID:                uuid.NewString(),
		OwnerID:           "user-1",
		Title:             "Quarterly report",
		CreatedAt:         at(0),
		UpdatedAt:         at(5),
		ArchivedAt:        ptr(at(7)),
		CancelRequestedAt: ptr(at(6)),
	}
	in := want
	must(t, s.CreateThread(t.Context(), &in), "CreateThread")
	if d := diffThread(in, want); d != "" {
		t.Errorf("CreateThread changed fields it was given: %s", d)
	}
	if d := diffThread(getThread(t, s, want.ID), want); d != "" {
		t.Errorf("GetThread: %s", d)
	}
}

func testCreateFillsIDAndTimes(t *testing.T, s store.Store) {
	th := store.Thread{OwnerID: "user-1", Title: "t"}
	must(t, s.CreateThread(t.Context(), &th), "CreateThread")
	if !isUUID(th.ID) {
		t.Errorf("CreateThread filled ID %q, want a UUID", th.ID)
	}
	wantNow(t, "CreatedAt", th.CreatedAt)
	wantNow(t, "UpdatedAt", th.UpdatedAt)
	// The filled values are the stored ones (a SQL store must truncate
	// before it reports them).
	if d := diffThread(getThread(t, s, th.ID), th); d != "" {
		t.Errorf("GetThread after filling: %s", d)
	}
}

func testCreateGeneratesUniqueUUIDs(t *testing.T, s store.Store) {
	seen := map[string]bool{}
	for range 20 {
		th := store.Thread{OwnerID: "user-1"}
		must(t, s.CreateThread(t.Context(), &th), "CreateThread")
		if !isUUID(th.ID) {
			t.Errorf("ID %q is not a UUID", th.ID)
		}
		if seen[th.ID] {
			t.Errorf("ID %q generated twice", th.ID)
		}
		seen[th.ID] = true
	}
}

func testCreateWithoutOwner(t *testing.T, s store.Store) {
	id := uuid.NewString()
	err := s.CreateThread(t.Context(), &store.Thread{ID: id, Title: "no owner"})
	wantErr(t, err, store.ErrInvalid, "CreateThread without owner")
	_, err = s.GetThread(t.Context(), id)
	wantErr(t, err, store.ErrNotFound, "GetThread of the rejected thread")
}

func testCreateDuplicateID(t *testing.T, s store.Store) {
	first := newThread(t, s, "user-1", at(1))
	dup := store.Thread{ID: first.ID, OwnerID: "user-2", Title: "second", CreatedAt: at(2), UpdatedAt: at(2)}
	wantErr(t, s.CreateThread(t.Context(), &dup), store.ErrConflict, "CreateThread with a taken ID")
	if d := diffThread(getThread(t, s, first.ID), first); d != "" {
		t.Errorf("the conflicting create changed the first thread: %s", d)
	}
}

func testGetUnknownThread(t *testing.T, s store.Store) {
	newThread(t, s, "user-1", at(1))
	// A malformed id is just another id with no thread: not an
	// infrastructure error, even where ids are a uuid column.
	for _, id := range []string{uuid.NewString(), "", "no-such-thread", `' OR '1'='1`} {
		_, err := s.GetThread(t.Context(), id)
		wantErr(t, err, store.ErrNotFound, "GetThread("+short(id)+")")
	}
}

func testRename(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(1))
	other := newThread(t, s, "user-1", at(2))
	must(t, s.RenameThread(t.Context(), th.ID, "New title"), "RenameThread")
	got := getThread(t, s, th.ID)
	if got.Title != "New title" {
		t.Errorf("Title = %q, want %q", got.Title, "New title")
	}
	// Whether a rename bumps UpdatedAt is the store's choice; it may not
	// move it backwards or touch anything else.
	if got.UpdatedAt.Before(th.UpdatedAt) {
		t.Errorf("UpdatedAt went back from %v to %v", th.UpdatedAt, got.UpdatedAt)
	}
	got.Title, got.UpdatedAt = th.Title, th.UpdatedAt
	if d := diffThread(got, th); d != "" {
		t.Errorf("RenameThread changed other fields: %s", d)
	}
	if d := diffThread(getThread(t, s, other.ID), other); d != "" {
		t.Errorf("RenameThread changed another thread: %s", d)
	}
}

func testArchiveIdempotent(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(1))
	must(t, s.ArchiveThread(t.Context(), th.ID, at(10)), "ArchiveThread")
	must(t, s.ArchiveThread(t.Context(), th.ID, at(20)), "ArchiveThread again")
	got := getThread(t, s, th.ID) // archived threads stay readable
	if got.ArchivedAt == nil || !got.ArchivedAt.Equal(at(10)) {
		t.Errorf("ArchivedAt = %v, want the first archive time %v", fmtTimePtr(got.ArchivedAt), at(10))
	}
}

func testDelete(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(1))
	u, a := appendTurn(t, s, th.ID, "hello")
	keep := newThread(t, s, "user-1", at(2))
	ku, ka := appendTurn(t, s, keep.ID, "other")

	must(t, s.DeleteThread(t.Context(), th.ID), "DeleteThread")

	_, err := s.GetThread(t.Context(), th.ID)
	wantErr(t, err, store.ErrNotFound, "GetThread after delete")
	_, err = s.ListMessages(t.Context(), th.ID)
	wantErr(t, err, store.ErrNotFound, "ListMessages after delete")
	for _, id := range []string{u.ID, a.ID} {
		_, err = s.GetMessage(t.Context(), id)
		wantErr(t, err, store.ErrNotFound, "GetMessage of a deleted thread's message")
	}
	wantErr(t, s.DeleteThread(t.Context(), th.ID), store.ErrNotFound, "DeleteThread twice")

	if ms := listMessages(t, s, keep.ID); len(ms) != 2 || ms[0].ID != ku.ID || ms[1].ID != ka.ID {
		t.Errorf("another thread's messages after delete = %d messages, want its 2", len(ms))
	}
}

func testCancelFlag(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(1))
	if got := getThread(t, s, th.ID); got.CancelRequestedAt != nil {
		t.Fatalf("new thread CancelRequestedAt = %v, want nil", got.CancelRequestedAt)
	}
	must(t, s.RequestCancel(t.Context(), th.ID, at(3)), "RequestCancel")
	if got := getThread(t, s, th.ID); got.CancelRequestedAt == nil || !got.CancelRequestedAt.Equal(at(3)) {
		t.Errorf("after RequestCancel CancelRequestedAt = %v, want %v", fmtTimePtr(got.CancelRequestedAt), at(3))
	}
	must(t, s.ClearCancel(t.Context(), th.ID), "ClearCancel")
	if got := getThread(t, s, th.ID); got.CancelRequestedAt != nil {
		t.Errorf("after ClearCancel CancelRequestedAt = %v, want nil", got.CancelRequestedAt)
	}
	// Clearing with nothing requested is not an error: the Engine clears a
	// stale flag at the start of every turn.
	must(t, s.ClearCancel(t.Context(), th.ID), "ClearCancel with no request")
}

func testThreadMutationsUnknown(t *testing.T, s store.Store) {
	ctx := t.Context()
	id := uuid.NewString()
	wantErr(t, s.RenameThread(ctx, id, "x"), store.ErrNotFound, "RenameThread")
	wantErr(t, s.ArchiveThread(ctx, id, at(1)), store.ErrNotFound, "ArchiveThread")
	wantErr(t, s.DeleteThread(ctx, id), store.ErrNotFound, "DeleteThread")
	wantErr(t, s.RequestCancel(ctx, id, at(1)), store.ErrNotFound, "RequestCancel")
	wantErr(t, s.ClearCancel(ctx, id), store.ErrNotFound, "ClearCancel")
	_, err := s.ListMessages(ctx, id)
	wantErr(t, err, store.ErrNotFound, "ListMessages")
}

// listIDs lists ownerID's threads and returns their ids in order.
func listIDs(t *testing.T, s store.Store, ownerID string, opts store.ListOptions) []string {
	t.Helper()
	ts, err := s.ListThreads(t.Context(), ownerID, opts)
	must(t, err, "ListThreads")
	ids := make([]string, len(ts))
	for i, th := range ts {
		if th.OwnerID != ownerID {
			t.Errorf("ListThreads(%q) returned thread %s of owner %q", ownerID, th.ID, th.OwnerID)
		}
		ids[i] = th.ID
	}
	return ids
}

func wantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s = %q, want %q", what, got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s = %q, want %q", what, got, want)
			return
		}
	}
}

func testListOrder(t *testing.T, s store.Store) {
	// Created in an order unlike the update order.
	b := newThread(t, s, "user-1", at(2))
	c := newThread(t, s, "user-1", at(3))
	a := newThread(t, s, "user-1", at(1))
	ts, err := s.ListThreads(t.Context(), "user-1", store.ListOptions{})
	must(t, err, "ListThreads")
	wantIDs(t, "ListThreads", idsOf(ts), []string{c.ID, b.ID, a.ID})
	if len(ts) == 3 {
		if d := diffThread(ts[0], c); d != "" {
			t.Errorf("listed thread differs from the stored one: %s", d)
		}
	}
}

func idsOf(ts []store.Thread) []string {
	ids := make([]string, len(ts))
	for i, th := range ts {
		ids[i] = th.ID
	}
	return ids
}

func testListLimit(t *testing.T, s store.Store) {
	var ids []string
	for i := range 5 {
		ids = append(ids, newThread(t, s, "user-1", at(i)).ID)
	}
	got := listIDs(t, s, "user-1", store.ListOptions{Limit: 2})
	wantIDs(t, "ListThreads(Limit 2)", got, []string{ids[4], ids[3]})
	got = listIDs(t, s, "user-1", store.ListOptions{Limit: 10})
	wantIDs(t, "ListThreads(Limit 10)", got, []string{ids[4], ids[3], ids[2], ids[1], ids[0]})
}

func testListDefaultLimit(t *testing.T, s store.Store) {
	for i := range 53 {
		newThread(t, s, "user-1", at(i))
	}
	for _, limit := range []int{0, -1} {
		got := listIDs(t, s, "user-1", store.ListOptions{Limit: limit})
		if len(got) != 50 {
			t.Errorf("ListThreads(Limit %d) returned %d threads, want 50", limit, len(got))
		}
	}
}

func testListBefore(t *testing.T, s store.Store) {
	var ids []string
	for i := range 5 {
		ids = append(ids, newThread(t, s, "user-1", at(i)).ID)
	}
	// Page through two at a time, as a client does with the last UpdatedAt.
	var pages [][]string
	var before = store.ListOptions{Limit: 2}
	for range 4 {
		ts, err := s.ListThreads(t.Context(), "user-1", before)
		must(t, err, "ListThreads")
		pages = append(pages, idsOf(ts))
		if len(ts) == 0 {
			break
		}
		before.Before = ts[len(ts)-1].UpdatedAt
	}
	want := [][]string{{ids[4], ids[3]}, {ids[2], ids[1]}, {ids[0]}, {}}
	if len(pages) != len(want) {
		t.Fatalf("paging took %d pages %q, want %q", len(pages), pages, want)
	}
	for i := range want {
		wantIDs(t, "page", pages[i], want[i])
	}
	// Strictly before: the thread updated exactly at Before is not listed.
	got := listIDs(t, s, "user-1", store.ListOptions{Before: at(2)})
	wantIDs(t, "ListThreads(Before at(2))", got, []string{ids[1], ids[0]})
}

func testListArchived(t *testing.T, s store.Store) {
	a := newThread(t, s, "user-1", at(1))
	b := newThread(t, s, "user-1", at(2))
	c := newThread(t, s, "user-1", at(3))
	must(t, s.ArchiveThread(t.Context(), b.ID, at(4)), "ArchiveThread")
	wantIDs(t, "ListThreads", listIDs(t, s, "user-1", store.ListOptions{}), []string{c.ID, a.ID})
	wantIDs(t, "ListThreads(IncludeArchived)",
		listIDs(t, s, "user-1", store.ListOptions{IncludeArchived: true}), []string{c.ID, b.ID, a.ID})
}

func testListOwners(t *testing.T, s store.Store) {
	// Owner ids that are LIKE patterns or prefixes of each other must match
	// exactly.
	owners := []string{"ab", "a%", "a_", "a", "A", "ab "}
	byOwner := map[string]string{}
	for i, o := range owners {
		byOwner[o] = newThread(t, s, o, at(i)).ID
	}
	for _, o := range owners {
		wantIDs(t, "ListThreads("+short(o)+")",
			listIDs(t, s, o, store.ListOptions{IncludeArchived: true}), []string{byOwner[o]})
	}
	for _, o := range []string{"nobody", "%", "", "*"} {
		if got := listIDs(t, s, o, store.ListOptions{IncludeArchived: true}); len(got) != 0 {
			t.Errorf("ListThreads(%q) = %q, want none", o, got)
		}
	}
}

func testListAfterAppend(t *testing.T, s store.Store) {
	old := newThread(t, s, "user-1", at(1))
	recent := newThread(t, s, "user-1", at(2))
	appendTurn(t, s, old.ID, "bump")
	wantIDs(t, "ListThreads after AppendTurn", listIDs(t, s, "user-1", store.ListOptions{}),
		[]string{old.ID, recent.ID})
}
