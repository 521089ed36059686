package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

// editCases pin AppendTurn with user.Replaces: an edited message, or a
// regenerated answer, supersedes the branch it replaces.
var editCases = []testCase{
	{"ReplacingSupersedesItAndEveryLaterMessage", testReplaceSupersedes},
	{"ReplacingKeepsTheFirstSupersededAt", testReplaceKeepsFirstTime},
	{"ReplacingClearsTheSummaryOnlyWhenItCoversTheMessage", testReplaceClearsCoveredSummary},
	{"ReplacingAMessageOfNoneOrAnotherThreadIsNotFoundAndWritesNothing", testReplaceUnknown},
	{"ReplacingAnAssistantMessageIsInvalidAndWritesNothing", testReplaceAssistant},
	{"ReplacingASupersededMessageConflictsAndWritesNothing", testReplaceSuperseded},
	{"ReplacingHonoursTheConditionalSeq", testReplaceAtSeq},
	{"UpdateMessageKeepsSupersededAtAndReplaces", testReplaceThenUpdate},
}

// editTick separates two supersessions whose times the case compares.
const editTick = 2 * time.Millisecond

// replaceTurn appends a turn to threadID that replaces the user message
// replaced, and returns the messages as filled in.
func replaceTurn(t *testing.T, s store.Store, threadID, replaced string) (user, assistant store.Message) {
	t.Helper()
	u, a := newTurn(threadID, "edited")
	u.Replaces = replaced
	must(t, s.AppendTurn(t.Context(), u, a), "AppendTurn replacing "+replaced)
	return *u, *a
}

// wantUnchanged fails t unless the thread and its messages read as before.
func wantUnchanged(t *testing.T, s store.Store, what string, th store.Thread, msgs []store.Message) {
	t.Helper()
	got := getThread(t, s, th.ID)
	if d := diffThread(got, th); d != "" {
		t.Errorf("%s changed the thread: %s", what, d)
	}
	if got.LastSeq != th.LastSeq {
		t.Errorf("%s moved LastSeq from %d to %d", what, th.LastSeq, got.LastSeq)
	}
	ms := listMessages(t, s, th.ID)
	if len(ms) != len(msgs) {
		t.Errorf("%s: ListMessages = %d messages, want %d", what, len(ms), len(msgs))
		return
	}
	for i := range ms {
		if d := diffMessage(ms[i], msgs[i]); d != "" {
			t.Errorf("%s changed message %d: %s", what, msgs[i].Seq, d)
		}
	}
}

// refuseReplace appends a turn replacing replaced, with fresh ids, and
// fails t unless it is refused with want and writes nothing.
func refuseReplace(t *testing.T, s store.Store, threadID, replaced string, want error, what string) {
	t.Helper()
	th := getThread(t, s, threadID)
	msgs := listMessages(t, s, threadID)
	u, a := newTurn(threadID, "refused edit")
	u.ID, a.ID, u.Replaces = uuid.NewString(), uuid.NewString(), replaced
	wantErr(t, s.AppendTurn(t.Context(), u, a), want, what)
	for _, id := range []string{u.ID, a.ID} {
		_, err := s.GetMessage(t.Context(), id)
		wantErr(t, err, store.ErrNotFound, "GetMessage of a message of the refused "+what)
	}
	wantUnchanged(t, s, "the refused "+what, th, msgs)
}

// The replaced message and every message after it get one SupersededAt,
// now, and keep every other field, UpdatedAt included; the ones before it
// stay current; the new turn is appended after the last message, current,
// with Replaces, and ListMessages returns all of them.
func testReplaceSupersedes(t *testing.T, s store.Store) {
	th, before := threadWithTurns(t, s, "user-1", 3)
	replaced := before[2] // the second turn's user message, Seq 3
	u, a := replaceTurn(t, s, th.ID, replaced.ID)

	if u.Seq != 7 || a.Seq != 8 {
		t.Errorf("the replacing turn got Seq %d, %d; want 7, 8", u.Seq, a.Seq)
	}
	ms := listMessages(t, s, th.ID)
	if len(ms) != 8 {
		t.Fatalf("ListMessages = %d messages, want 8 (superseded ones included)", len(ms))
	}
	var when *time.Time
	for i, m := range ms[:6] {
		want := before[i]
		if m.Seq >= replaced.Seq {
			if m.SupersededAt == nil {
				t.Errorf("message %d after the replaced one is not superseded", m.Seq)
				continue
			}
			wantNow(t, fmt.Sprint("SupersededAt of message ", m.Seq), *m.SupersededAt)
			if when == nil {
				when = m.SupersededAt
			} else if !m.SupersededAt.Equal(*when) {
				t.Errorf("message %d SupersededAt = %v, want the one time %v", m.Seq, *m.SupersededAt, *when)
			}
			want.SupersededAt = m.SupersededAt
		}
		if d := diffMessage(m, want); d != "" {
			t.Errorf("ListMessages, message %d: %s", m.Seq, d)
		}
		if d := diffMessage(getMessage(t, s, m.ID), want); d != "" {
			t.Errorf("GetMessage, message %d: %s", m.Seq, d)
		}
	}
	if u.Replaces != replaced.ID {
		t.Errorf("the new user message's Replaces = %q, want %q", u.Replaces, replaced.ID)
	}
	for i, want := range []store.Message{u, a} {
		if d := diffMessage(ms[6+i], want); d != "" {
			t.Errorf("ListMessages, new message %d: %s", want.Seq, d)
		}
		if d := diffMessage(getMessage(t, s, want.ID), want); d != "" {
			t.Errorf("GetMessage, new message %d: %s", want.Seq, d)
		}
	}
	got := getThread(t, s, th.ID)
	if got.LastSeq != 8 || !got.UpdatedAt.After(th.UpdatedAt) {
		t.Errorf("thread LastSeq, UpdatedAt = %d, %v; want 8 and later than %v", got.LastSeq, got.UpdatedAt, th.UpdatedAt)
	}
}

// A message superseded by one edit keeps that time when an edit of an
// earlier message supersedes the branch again.
func testReplaceKeepsFirstTime(t *testing.T, s store.Store) {
	th, before := threadWithTurns(t, s, "user-1", 2)
	replaceTurn(t, s, th.ID, before[2].ID) // supersedes Seq 3, 4
	first := listMessages(t, s, th.ID)
	time.Sleep(editTick)
	replaceTurn(t, s, th.ID, before[0].ID) // supersedes Seq 1, 2, 5, 6; 3 and 4 already are
	ms := listMessages(t, s, th.ID)
	if len(ms) != 8 {
		t.Fatalf("ListMessages = %d messages, want 8", len(ms))
	}
	second := ms[0].SupersededAt
	if second == nil || !second.After(*first[2].SupersededAt) {
		t.Fatalf("the second edit's SupersededAt = %v, want after the first's %v",
			fmtTimePtr(second), fmtTimePtr(first[2].SupersededAt))
	}
	for _, m := range ms {
		var want *time.Time
		switch m.Seq {
		case 3, 4:
			want = first[2].SupersededAt
		case 1, 2, 5, 6:
			want = second
		}
		if d := appendTimePtrDiff(nil, "SupersededAt", m.SupersededAt, want); d != nil {
			t.Errorf("message %d: %s", m.Seq, d[0])
		}
	}
}

// The summary is cleared when the replaced message's Seq is at or before
// SummaryThrough (it summarizes a branch that is gone), and kept when the
// edit is after what it covers.
func testReplaceClearsCoveredSummary(t *testing.T, s store.Store) {
	for _, c := range []struct {
		through, replaced int // SummaryThrough (0: none) and the Seq of the replaced user message
		cleared           bool
	}{
		{4, 5, false},
		{2, 5, false},
		{5, 5, true},
		{6, 5, true},
		{4, 1, true},
		{2, 3, false},
		{0, 3, false},
	} {
		what := fmt.Sprintf("replacing Seq %d with a summary through %d", c.replaced, c.through)
		th, msgs := threadWithTurns(t, s, "user-1", 3)
		summary := ""
		if c.through > 0 {
			summary = fmt.Sprint("summary through ", c.through)
			setSummary(t, s, th.ID, summary, c.through, 0)
		}
		replaceTurn(t, s, th.ID, msgs[c.replaced-1].ID)
		if c.cleared {
			wantSummary(t, s, th.ID, what, "", 0)
		} else {
			wantSummary(t, s, th.ID, what, summary, c.through)
		}
	}
}

func testReplaceUnknown(t *testing.T, s store.Store) {
	th, _ := threadWithTurns(t, s, "user-1", 1)
	setSummary(t, s, th.ID, "kept", 2, 0)
	_, others := threadWithTurns(t, s, "user-1", 1)
	for _, id := range []string{uuid.NewString(), others[0].ID, th.ID, "%"} {
		refuseReplace(t, s, th.ID, id, store.ErrNotFound, "AppendTurn replacing "+short(id))
	}
	if ms := listMessages(t, s, others[0].ThreadID); ms[0].SupersededAt != nil {
		t.Errorf("a refused edit superseded another thread's message")
	}
}

func testReplaceAssistant(t *testing.T, s store.Store) {
	th, msgs := threadWithTurns(t, s, "user-1", 2)
	setSummary(t, s, th.ID, "kept", 2, 0)
	refuseReplace(t, s, th.ID, msgs[1].ID, store.ErrInvalid, "AppendTurn replacing an assistant message")
}

// A message already superseded, the replaced one or one after it, cannot
// be replaced: another edit won.
func testReplaceSuperseded(t *testing.T, s store.Store) {
	th, msgs := threadWithTurns(t, s, "user-1", 3)
	replaceTurn(t, s, th.ID, msgs[2].ID)
	setSummary(t, s, th.ID, "kept", 2, 0)
	refuseReplace(t, s, th.ID, msgs[2].ID, store.ErrConflict, "AppendTurn replacing the replaced message again")
	refuseReplace(t, s, th.ID, msgs[4].ID, store.ErrConflict, "AppendTurn replacing a message the edit superseded")
}

// user.Seq still makes the append conditional: at LastSeq+1 the edit is
// written, at any other Seq it is ErrConflict and supersedes nothing.
func testReplaceAtSeq(t *testing.T, s store.Store) {
	th, msgs := threadWithTurns(t, s, "user-1", 2)
	for _, seq := range []int{1, 3, 4, 6} {
		before := getThread(t, s, th.ID)
		u, a := newTurn(th.ID, "stale edit")
		u.ID, a.ID, u.Replaces, u.Seq = uuid.NewString(), uuid.NewString(), msgs[2].ID, seq
		what := fmt.Sprintf("AppendTurn replacing at Seq %d after LastSeq 4", seq)
		wantErr(t, s.AppendTurn(t.Context(), u, a), store.ErrConflict, what)
		wantUnchanged(t, s, what, before, msgs)
	}
	u, a := newTurn(th.ID, "edit")
	u.Replaces, u.Seq = msgs[2].ID, 5
	must(t, s.AppendTurn(t.Context(), u, a), "AppendTurn replacing at Seq 5")
	if u.Seq != 5 || a.Seq != 6 {
		t.Errorf("the conditional edit got Seq %d, %d; want 5, 6", u.Seq, a.Seq)
	}
	if m := getMessage(t, s, msgs[2].ID); m.SupersededAt == nil {
		t.Error("the conditional edit did not supersede the replaced message")
	}
}

// The placeholder of a turn that an edit superseded is still finished by
// its worker: UpdateMessage changes the mutable fields and leaves
// SupersededAt (and a user message's Replaces) as they are.
func testReplaceThenUpdate(t *testing.T, s store.Store) {
	th, msgs := threadWithTurns(t, s, "user-1", 1)
	u, _ := replaceTurn(t, s, th.ID, msgs[0].ID)
	placeholder := getMessage(t, s, msgs[1].ID)
	want := cloneMessage(placeholder)
	want.Status, want.OutputTokens, want.UpdatedAt = store.StatusCancelled, 7, at(9)
	upd := cloneMessage(want)
	upd.SupersededAt = nil
	must(t, s.UpdateMessage(t.Context(), &upd), "UpdateMessage of a superseded placeholder")
	if d := diffMessage(getMessage(t, s, want.ID), want); d != "" {
		t.Errorf("GetMessage after UpdateMessage: %s", d)
	}
	upd = cloneMessage(u)
	upd.Replaces, upd.UpdatedAt = "", at(10)
	must(t, s.UpdateMessage(t.Context(), &upd), "UpdateMessage of the editing user message")
	if got := getMessage(t, s, u.ID).Replaces; got != msgs[0].ID {
		t.Errorf("Replaces after UpdateMessage = %q, want %q", got, msgs[0].ID)
	}
}
