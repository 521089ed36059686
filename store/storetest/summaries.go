package storetest

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

var summaryCases = []testCase{
	{"SetSummaryIsReturnedByGetAndList", testSummaryRoundTrip},
	{"SetSummaryLeavesUpdatedAtAndOtherFields", testSummaryLeavesThread},
	{"SetSummaryWithStalePrevThroughConflictsAndWritesNothing", testSummaryCompareAndSet},
	{"SetSummaryEmptyThroughZeroClears", testSummaryClear},
	{"SetSummaryWithBadThroughIsInvalidAndWritesNothing", testSummaryInvalid},
	{"SetSummaryOnUnknownThreadIsNotFound", testSummaryUnknownThread},
	{"CreateThreadIgnoresSummary", testSummaryIgnoredByCreate},
}

// threadWithTurns creates a thread of owner with n turns (Seq 1 to 2n) and
// returns it as stored, and its messages in Seq order.
func threadWithTurns(t *testing.T, s store.Store, owner string, n int) (store.Thread, []store.Message) {
	t.Helper()
	th := newThread(t, s, owner, at(0))
	for i := range n {
		appendTurn(t, s, th.ID, fmt.Sprint("turn ", i+1))
	}
	return getThread(t, s, th.ID), listMessages(t, s, th.ID)
}

func setSummary(t *testing.T, s store.Store, id, summary string, through, prev int) {
	t.Helper()
	must(t, s.SetSummary(t.Context(), id, summary, through, prev),
		fmt.Sprintf("SetSummary through %d over %d", through, prev))
}

// wantSummary fails t unless GetThread reports the summary and through.
func wantSummary(t *testing.T, s store.Store, id, what, summary string, through int) {
	t.Helper()
	got := getThread(t, s, id)
	if got.Summary != summary || got.SummaryThrough != through {
		t.Errorf("%s: Summary, SummaryThrough = %s, %d; want %s, %d",
			what, short(got.Summary), got.SummaryThrough, short(summary), through)
	}
}

func testSummaryRoundTrip(t *testing.T, s store.Store) {
	th, _ := threadWithTurns(t, s, "user-1", 2)
	other, _ := threadWithTurns(t, s, "user-1", 1)
	const summary = "The user asked about VMs in eu-west; there are three."
	setSummary(t, s, th.ID, summary, 2, 0)

	want := th
	want.Summary, want.SummaryThrough = summary, 2
	if d := diffThread(getThread(t, s, th.ID), want); d != "" {
		t.Errorf("GetThread after SetSummary: %s", d)
	}
	ts, err := s.ListThreads(t.Context(), "user-1", store.ListOptions{})
	must(t, err, "ListThreads")
	for _, l := range ts {
		w := map[string]store.Thread{th.ID: want, other.ID: other}[l.ID]
		if d := diffThread(l, w); d != "" {
			t.Errorf("ListThreads, thread %s: %s", l.ID, d)
		}
	}
	if len(ts) != 2 {
		t.Errorf("ListThreads = %d threads, want 2", len(ts))
	}
}

// A summary is bookkeeping, not activity: the thread keeps its place in
// ListThreads and its messages are untouched.
func testSummaryLeavesThread(t *testing.T, s store.Store) {
	th, msgs := threadWithTurns(t, s, "user-1", 2)
	setSummary(t, s, th.ID, "first", 2, 0)
	setSummary(t, s, th.ID, "second", 4, 2)
	want := th
	want.Summary, want.SummaryThrough = "second", 4
	got := getThread(t, s, th.ID)
	if d := diffThread(got, want); d != "" {
		t.Errorf("GetThread after SetSummary: %s", d)
	}
	if got.LastSeq != th.LastSeq {
		t.Errorf("LastSeq = %d after SetSummary, want %d", got.LastSeq, th.LastSeq)
	}
	for i, m := range listMessages(t, s, th.ID) {
		if d := diffMessage(m, msgs[i]); d != "" {
			t.Errorf("SetSummary changed message %d: %s", m.Seq, d)
		}
	}
}

// Of two compactions that read the same SummaryThrough, the second loses
// and writes nothing; a set over the current SummaryThrough wins.
func testSummaryCompareAndSet(t *testing.T, s store.Store) {
	th, _ := threadWithTurns(t, s, "user-1", 3)
	setSummary(t, s, th.ID, "first", 2, 0)
	for _, prev := range []int{0, 1, 3, 4, -1} {
		err := s.SetSummary(t.Context(), th.ID, "stale", 4, prev)
		wantErr(t, err, store.ErrConflict, fmt.Sprintf("SetSummary over %d when it is through 2", prev))
	}
	wantSummary(t, s, th.ID, "after stale sets", "first", 2)
	setSummary(t, s, th.ID, "second", 6, 2)
	wantSummary(t, s, th.ID, "after a set over the current", "second", 6)
	// The old prevThrough is stale now.
	wantErr(t, s.SetSummary(t.Context(), th.ID, "late", 4, 2), store.ErrConflict, "SetSummary over 2 again")
	wantSummary(t, s, th.ID, "after a late set", "second", 6)
}

func testSummaryClear(t *testing.T, s store.Store) {
	th, _ := threadWithTurns(t, s, "user-1", 2)
	setSummary(t, s, th.ID, "kept for a while", 2, 0)
	setSummary(t, s, th.ID, "", 0, 2)
	wantSummary(t, s, th.ID, "after clearing", "", 0)
	// Clearing is a compare-and-set too, and a cleared thread takes a new one.
	wantErr(t, s.SetSummary(t.Context(), th.ID, "", 0, 2), store.ErrConflict, "clearing over a stale 2")
	setSummary(t, s, th.ID, "again", 4, 0)
	wantSummary(t, s, th.ID, "after a new summary", "again", 4)
}

func testSummaryInvalid(t *testing.T, s store.Store) {
	th, _ := threadWithTurns(t, s, "user-1", 2)
	setSummary(t, s, th.ID, "kept", 2, 0)
	for _, c := range []struct {
		summary string
		through int
	}{
		{"negative", -1},
		{"", -2},
		{"a summary through nothing", 0},
	} {
		err := s.SetSummary(t.Context(), th.ID, c.summary, c.through, 2)
		wantErr(t, err, store.ErrInvalid, fmt.Sprintf("SetSummary(%q, through %d)", c.summary, c.through))
	}
	wantSummary(t, s, th.ID, "after refused sets", "kept", 2)
}

func testSummaryUnknownThread(t *testing.T, s store.Store) {
	th, _ := threadWithTurns(t, s, "user-1", 1)
	for _, id := range []string{uuid.NewString(), "", "%", th.ID + " "} {
		wantErr(t, s.SetSummary(t.Context(), id, "x", 2, 0), store.ErrNotFound, "SetSummary("+short(id)+")")
	}
	wantSummary(t, s, th.ID, "another thread", "", 0)
}

func testSummaryIgnoredByCreate(t *testing.T, s store.Store) {
	th := store.Thread{OwnerID: "user-1", Summary: "smuggled", SummaryThrough: 4}
	must(t, s.CreateThread(t.Context(), &th), "CreateThread")
	wantSummary(t, s, th.ID, "a new thread", "", 0)
}
