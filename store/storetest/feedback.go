package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

// feedbackCases run only on a store that implements store.FeedbackStore.
var feedbackCases = withCapability("store.FeedbackStore", []capabilityCase[store.FeedbackStore]{
	{"SetThenListRoundTripsAllFields", testFeedbackRoundTrip},
	{"SetFillsThreadIDFromTheMessageAndTimesWithNow", testFeedbackFills},
	{"SetAgainReplacesKeepsCreatedAtAdvancesUpdatedAt", testFeedbackReplace},
	{"ConcurrentSetsForOnePairLeaveOneRow", testFeedbackConcurrent},
	{"TwoUsersOnOneMessageAreTwoRows", testFeedbackTwoUsers},
	{"SetOnUnknownMessageIsNotFound", testFeedbackUnknownMessage},
	{"SetOnUserMessageIsInvalid", testFeedbackUserMessage},
	{"SetWithBadRatingIsInvalid", testFeedbackBadRating},
	{"SetWithEmptyIDsIsInvalid", testFeedbackEmptyIDs},
	{"DeleteRemovesOneAndNoneIsNotFound", testFeedbackDelete},
	{"ListOldestCreatedFirstAndEmptyForUnknownThread", testFeedbackList},
	{"DeleteThreadRemovesItsFeedback", testFeedbackDeleteThread},
	{"HostileStringsRoundTrip", testFeedbackStrings},
	{"CanceledContextFailsEveryMethodAndWritesNothing", testFeedbackCanceledContext},
})

// feedbackTick separates two writes whose store-filled times the case
// compares: more than any clock's resolution, microseconds included.
const feedbackTick = 2 * time.Millisecond

// assistantMessage appends a turn to a new thread of owner and returns
// the thread and the turn's assistant message.
func assistantMessage(t *testing.T, s store.Store, owner string) (store.Thread, store.Message) {
	t.Helper()
	th := newThread(t, s, owner, at(0))
	_, a := appendTurn(t, s, th.ID, "question")
	return th, a
}

func setFeedback(t *testing.T, fs store.FeedbackStore, f store.Feedback) store.Feedback {
	t.Helper()
	must(t, fs.SetFeedback(t.Context(), &f), "SetFeedback")
	return f
}

func listFeedback(t *testing.T, fs store.FeedbackStore, threadID string) []store.Feedback {
	t.Helper()
	fbs, err := fs.ListFeedback(t.Context(), threadID)
	must(t, err, "ListFeedback")
	return fbs
}

// diffFeedback describes how got differs from want, or returns "".
func diffFeedback(got, want store.Feedback) string {
	var d []string
	field := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %s, want %s", name, short(g), short(w)))
		}
	}
	field("MessageID", got.MessageID, want.MessageID)
	field("ThreadID", got.ThreadID, want.ThreadID)
	field("UserID", got.UserID, want.UserID)
	field("Rating", string(got.Rating), string(want.Rating))
	field("Category", got.Category, want.Category)
	field("Comment", got.Comment, want.Comment)
	d = appendTimeDiff(d, "CreatedAt", got.CreatedAt, want.CreatedAt)
	d = appendTimeDiff(d, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	return strings.Join(d, "; ")
}

// wantFeedback fails t unless the thread's feedback is want, in order.
func wantFeedback(t *testing.T, fs store.FeedbackStore, threadID, what string, want ...store.Feedback) {
	t.Helper()
	got := listFeedback(t, fs, threadID)
	if len(got) != len(want) {
		t.Errorf("%s: ListFeedback = %d rows, want %d", what, len(got), len(want))
		return
	}
	for i := range want {
		if d := diffFeedback(got[i], want[i]); d != "" {
			t.Errorf("%s: ListFeedback[%d]: %s", what, i, d)
		}
	}
}

func testFeedbackRoundTrip(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	f := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingDown,
		Category: "inaccurate", Comment: "The VM is in eu-west, not us-east."})
	wantFeedback(t, fs, th.ID, "after SetFeedback", f)
	if f.ThreadID != th.ID || f.Rating != store.RatingDown || f.Category != "inaccurate" {
		t.Errorf("SetFeedback reported %+v", f)
	}
}

// The store fills ThreadID from the message and both times with now, over
// whatever the caller put there; what it reports is what it stores.
func testFeedbackFills(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	other := newThread(t, s, "user-1", at(1))
	f := setFeedback(t, fs, store.Feedback{MessageID: a.ID, ThreadID: other.ID, UserID: "user-1",
		Rating: store.RatingUp, CreatedAt: at(-100), UpdatedAt: at(100)})
	if f.ThreadID != th.ID {
		t.Errorf("ThreadID = %q, want the message's thread %q", f.ThreadID, th.ID)
	}
	wantNow(t, "CreatedAt", f.CreatedAt)
	if !f.UpdatedAt.Equal(f.CreatedAt) {
		t.Errorf("a new row's UpdatedAt = %v, want its CreatedAt %v", f.UpdatedAt, f.CreatedAt)
	}
	wantFeedback(t, fs, th.ID, "after SetFeedback", f)
	wantFeedback(t, fs, other.ID, "the thread the caller named")
}

// Setting again replaces every field it is given (an empty category or
// comment included), keeps CreatedAt and moves UpdatedAt forward.
func testFeedbackReplace(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	first := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp,
		Comment: "great"})
	prev := first
	for i, next := range []store.Feedback{
		{Rating: store.RatingDown, Category: "inaccurate", Comment: "wrong region"},
		{Rating: store.RatingDown, Category: "harmful"},
		{Rating: store.RatingUp},
	} {
		time.Sleep(feedbackTick)
		next.MessageID, next.UserID = a.ID, "user-1"
		got := setFeedback(t, fs, next)
		if !got.CreatedAt.Equal(first.CreatedAt) {
			t.Errorf("set %d: CreatedAt = %v, want the first set's %v", i+2, got.CreatedAt, first.CreatedAt)
		}
		if !got.UpdatedAt.After(prev.UpdatedAt) {
			t.Errorf("set %d: UpdatedAt = %v, want after the previous set's %v", i+2, got.UpdatedAt, prev.UpdatedAt)
		}
		wantFeedback(t, fs, th.ID, fmt.Sprintf("after set %d", i+2), got)
		prev = got
	}
}

// Of concurrent sets for one (message, user), each succeeds, exactly one
// row is left, and it is one writer's whole write, with the CreatedAt of
// the row every writer found or made.
func testFeedbackConcurrent(t *testing.T, s store.Store, fs store.FeedbackStore) {
	const writers, rounds = 32, 3
	th := newThread(t, s, "user-1", at(0))
	for round := range rounds {
		_, a := appendTurn(t, s, th.ID, "question")
		results := make([]store.Feedback, writers)
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range results {
			results[i] = store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp,
				Category: fmt.Sprint("category ", i), Comment: fmt.Sprint("comment ", i)}
			if i%2 == 1 {
				results[i].Rating = store.RatingDown
			}
			wg.Go(func() {
				<-start
				errs[i] = fs.SetFeedback(t.Context(), &results[i])
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}

		var mine []store.Feedback
		for _, f := range listFeedback(t, fs, th.ID) {
			if f.MessageID == a.ID {
				mine = append(mine, f)
			}
		}
		if len(mine) != 1 {
			t.Fatalf("round %d: %d rows for one (message, user) after %d concurrent sets, want 1",
				round, len(mine), writers)
		}
		got := mine[0]
		var w int
		if _, err := fmt.Sscanf(got.Comment, "comment %d", &w); err != nil || w < 0 || w >= writers {
			t.Fatalf("round %d: the stored comment %q is no writer's", round, got.Comment)
		}
		if d := diffFeedback(got, results[w]); d != "" {
			t.Errorf("round %d: the stored row is not writer %d's whole write: %s", round, w, d)
		}
		for i, r := range results {
			if !r.CreatedAt.Equal(got.CreatedAt) {
				t.Errorf("round %d: writer %d got CreatedAt %v, want the row's %v", round, i, r.CreatedAt, got.CreatedAt)
				break
			}
		}
	}
}

func testFeedbackTwoUsers(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	f1 := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp})
	time.Sleep(feedbackTick)
	f2 := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "staff-2", Rating: store.RatingDown,
		Comment: "needs a source"})
	wantFeedback(t, fs, th.ID, "two users on one message", f1, f2)
	// Changing one leaves the other alone.
	time.Sleep(feedbackTick)
	f1 = setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingDown})
	wantFeedback(t, fs, th.ID, "after the first user changed theirs", f1, f2)
}

func testFeedbackUnknownMessage(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, _ := assistantMessage(t, s, "user-1")
	for _, id := range []string{uuid.NewString(), "%", th.ID} {
		err := fs.SetFeedback(t.Context(), &store.Feedback{MessageID: id, UserID: "user-1", Rating: store.RatingUp})
		wantErr(t, err, store.ErrNotFound, "SetFeedback on unknown message "+short(id))
	}
	wantFeedback(t, fs, th.ID, "after refused sets")
}

func testFeedbackUserMessage(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th := newThread(t, s, "user-1", at(0))
	u, _ := appendTurn(t, s, th.ID, "question")
	err := fs.SetFeedback(t.Context(), &store.Feedback{MessageID: u.ID, UserID: "user-1", Rating: store.RatingUp})
	wantErr(t, err, store.ErrInvalid, "SetFeedback on a user message")
	wantFeedback(t, fs, th.ID, "after a refused set")
}

func testFeedbackBadRating(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	for _, r := range []store.Rating{"", "UP", "Down", "up ", "meh", "1"} {
		err := fs.SetFeedback(t.Context(), &store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: r})
		wantErr(t, err, store.ErrInvalid, fmt.Sprintf("SetFeedback with rating %q", r))
	}
	wantFeedback(t, fs, th.ID, "after refused sets")
	// A bad rating does not touch feedback already there.
	f := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp})
	err := fs.SetFeedback(t.Context(), &store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: "meh"})
	wantErr(t, err, store.ErrInvalid, "SetFeedback with rating meh over a stored one")
	wantFeedback(t, fs, th.ID, "after a refused replace", f)
}

func testFeedbackEmptyIDs(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	for _, f := range []store.Feedback{
		{MessageID: "", UserID: "user-1", Rating: store.RatingUp},
		{MessageID: a.ID, UserID: "", Rating: store.RatingUp},
		{Rating: store.RatingDown},
	} {
		wantErr(t, fs.SetFeedback(t.Context(), &f), store.ErrInvalid,
			fmt.Sprintf("SetFeedback with message %q, user %q", f.MessageID, f.UserID))
	}
	wantFeedback(t, fs, th.ID, "after refused sets")
}

func testFeedbackDelete(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	f1 := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp})
	time.Sleep(feedbackTick)
	f2 := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-2", Rating: store.RatingDown})

	must(t, fs.DeleteFeedback(t.Context(), a.ID, "user-1"), "DeleteFeedback")
	wantFeedback(t, fs, th.ID, "after deleting user-1's", f2)
	wantErr(t, fs.DeleteFeedback(t.Context(), a.ID, "user-1"), store.ErrNotFound, "DeleteFeedback twice")
	wantErr(t, fs.DeleteFeedback(t.Context(), a.ID, "user-3"), store.ErrNotFound, "DeleteFeedback of a user with none")
	wantErr(t, fs.DeleteFeedback(t.Context(), uuid.NewString(), "user-2"), store.ErrNotFound,
		"DeleteFeedback on an unknown message")
	wantErr(t, fs.DeleteFeedback(t.Context(), a.ID, "%"), store.ErrNotFound, "DeleteFeedback of user %")
	wantFeedback(t, fs, th.ID, "after deletes of nothing", f2)

	// Set again after a delete, it is a new row.
	time.Sleep(feedbackTick)
	again := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp})
	if !again.CreatedAt.After(f1.CreatedAt) {
		t.Errorf("set after delete: CreatedAt = %v, want a new one after %v", again.CreatedAt, f1.CreatedAt)
	}
	wantFeedback(t, fs, th.ID, "after setting again", f2, again)
}

// ListFeedback orders by CreatedAt, so replacing a row (which moves only
// UpdatedAt) leaves its place, and lists one thread's feedback only.
func testFeedbackList(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th := newThread(t, s, "user-1", at(0))
	_, a1 := appendTurn(t, s, th.ID, "first")
	_, a2 := appendTurn(t, s, th.ID, "second")
	other, oa := assistantMessage(t, s, "user-1")
	empty := newThread(t, s, "user-1", at(2))

	var want []store.Feedback
	for _, f := range []store.Feedback{
		{MessageID: a2.ID, UserID: "user-b", Rating: store.RatingUp},
		{MessageID: oa.ID, UserID: "user-a", Rating: store.RatingUp},
		{MessageID: a1.ID, UserID: "user-c", Rating: store.RatingDown},
		{MessageID: a2.ID, UserID: "user-a", Rating: store.RatingDown},
	} {
		f = setFeedback(t, fs, f)
		if f.MessageID != oa.ID {
			want = append(want, f)
		}
		time.Sleep(feedbackTick)
	}
	want[0] = setFeedback(t, fs, store.Feedback{MessageID: a2.ID, UserID: "user-b", Rating: store.RatingDown,
		Comment: "changed my mind"})
	wantFeedback(t, fs, th.ID, "oldest created first", want...)
	if fbs := listFeedback(t, fs, other.ID); len(fbs) != 1 || fbs[0].MessageID != oa.ID {
		t.Errorf("ListFeedback of the other thread = %d rows, want its 1", len(fbs))
	}
	for _, id := range []string{empty.ID, uuid.NewString(), "", "%"} {
		fbs, err := fs.ListFeedback(t.Context(), id)
		if err != nil || len(fbs) != 0 {
			t.Errorf("ListFeedback(%s) = %d rows, %v; want none, nil", short(id), len(fbs), err)
		}
	}
}

func testFeedbackDeleteThread(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	keep, ka := assistantMessage(t, s, "user-1")
	setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp})
	setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-2", Rating: store.RatingDown})
	kept := setFeedback(t, fs, store.Feedback{MessageID: ka.ID, UserID: "user-1", Rating: store.RatingDown})

	must(t, s.DeleteThread(t.Context(), th.ID), "DeleteThread")
	wantFeedback(t, fs, th.ID, "the deleted thread")
	wantErr(t, fs.DeleteFeedback(t.Context(), a.ID, "user-1"), store.ErrNotFound,
		"DeleteFeedback on a deleted thread's message")
	err := fs.SetFeedback(t.Context(), &store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp})
	wantErr(t, err, store.ErrNotFound, "SetFeedback on a deleted thread's message")
	wantFeedback(t, fs, keep.ID, "another thread", kept)
}

// Category and comment are free text: what a model's answer provoked a
// user to paste, NUL and all. User ids are keys, so they get the hostile
// strings without NUL.
func testFeedbackStrings(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	check := func(user, text string, lenient bool) {
		t.Helper()
		want := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: user, Rating: store.RatingDown,
			Category: text, Comment: text})
		var got *store.Feedback
		fbs := listFeedback(t, fs, th.ID)
		for i := range fbs {
			if fbs[i].UserID == user {
				got = &fbs[i]
			}
		}
		if got == nil {
			t.Errorf("feedback with %s by user %s is not listed", short(text), short(user))
			return
		}
		if lenient {
			for _, p := range []struct{ got, want *string }{{&got.Category, &want.Category}, {&got.Comment, &want.Comment}} {
				if *p.got != *p.want && *p.got == replaced(*p.want) {
					*p.want = *p.got
				}
			}
		}
		if d := diffFeedback(*got, want); d != "" {
			t.Errorf("feedback with %s: %s", short(text), d)
		}
	}
	for i, str := range hostileStrings() {
		user := "user " + str
		if len(user) > 256 {
			user = fmt.Sprint("long user ", i)
		}
		check(user, str, false)
	}
	for _, str := range modelStrings() {
		check("user-1", str, false) // the same row, replaced each time
	}
	for _, str := range invalidUTF8() {
		check("user-1", str, true)
	}
}

func testFeedbackCanceledContext(t *testing.T, s store.Store, fs store.FeedbackStore) {
	th, a := assistantMessage(t, s, "user-1")
	f := setFeedback(t, fs, store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingUp})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	calls := []namedCall{
		{"SetFeedback", func() error {
			return fs.SetFeedback(ctx, &store.Feedback{MessageID: a.ID, UserID: "user-1", Rating: store.RatingDown})
		}},
		{"SetFeedback new", func() error {
			return fs.SetFeedback(ctx, &store.Feedback{MessageID: a.ID, UserID: "user-2", Rating: store.RatingDown})
		}},
		{"DeleteFeedback", func() error { return fs.DeleteFeedback(ctx, a.ID, "user-1") }},
		{"ListFeedback", func() error { _, err := fs.ListFeedback(ctx, th.ID); return err }},
	}
	wantCanceled(t, calls)
	wantFeedback(t, fs, th.ID, "after calls with a canceled context", f)
}
