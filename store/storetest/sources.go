package storetest

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

// sourceCases pin Message.Source: how a user message was made, written
// once by AppendTurn, so a client reloading the thread can tell a typed
// message from the server's note of a decision, a form's answers or
// carried tool results.
var sourceCases = []testCase{
	{"AppendTurnRoundTripsEverySource", testSourceRoundTrip},
	{"AppendTurnStoresTheAssistantsSourceEmpty", testSourceAssistantEmpty},
	{"AppendTurnWithUnknownSourceIsInvalidAndWritesNothing", testSourceUnknown},
	{"UpdateMessageKeepsTheSource", testSourceThenUpdate},
}

// sources are every MessageSource, typed (empty) first.
var sources = []store.MessageSource{
	store.SourceTyped, store.SourceDecision, store.SourceForm, store.SourceToolResults,
}

// Each source is reported in the caller's value and read back by
// GetMessage and ListMessages, on the user message only. Carried tool
// results may come with no text.
func testSourceRoundTrip(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	var want []store.Message
	for _, src := range sources {
		u, a := newTurn(th.ID, fmt.Sprintf("made as %q", src))
		u.Source = src
		if src == store.SourceToolResults {
			u.Content = ""
		}
		must(t, s.AppendTurn(t.Context(), u, a), fmt.Sprintf("AppendTurn with Source %q", src))
		if u.Source != src {
			t.Errorf("AppendTurn changed the caller's Source from %q to %q", src, u.Source)
		}
		want = append(want, *u, *a)
	}
	ms := listMessages(t, s, th.ID)
	if len(ms) != len(want) {
		t.Fatalf("ListMessages = %d messages, want %d", len(ms), len(want))
	}
	for i, w := range want {
		if d := diffMessage(ms[i], w); d != "" {
			t.Errorf("ListMessages, message %d (Source %q): %s", w.Seq, w.Source, d)
		}
		if d := diffMessage(getMessage(t, s, w.ID), w); d != "" {
			t.Errorf("GetMessage, message %d (Source %q): %s", w.Seq, w.Source, d)
		}
	}
}

// An assistant message has no source: whatever the caller puts on it, a
// valid source or not, the store writes it empty and says so in the
// caller's value, and the user's source is still written.
func testSourceAssistantEmpty(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	for _, src := range []store.MessageSource{store.SourceDecision, store.SourceForm, store.SourceToolResults, "bogus"} {
		u, a := newTurn(th.ID, "question")
		u.Source, a.Source = store.SourceForm, src
		must(t, s.AppendTurn(t.Context(), u, a), fmt.Sprintf("AppendTurn with an assistant Source %q", src))
		if a.Source != "" {
			t.Errorf("AppendTurn left the caller's assistant Source %q, want it empty", a.Source)
		}
		if got := getMessage(t, s, a.ID).Source; got != "" {
			t.Errorf("GetMessage: assistant Source = %q (given %q), want empty", got, src)
		}
		if got := getMessage(t, s, u.ID).Source; got != store.SourceForm {
			t.Errorf("GetMessage: user Source = %q, want %q", got, store.SourceForm)
		}
	}
	for _, m := range listMessages(t, s, th.ID) {
		if m.Role == store.RoleAssistant && m.Source != "" {
			t.Errorf("ListMessages: assistant message %d Source = %q, want empty", m.Seq, m.Source)
		}
	}
}

// A user Source other than the four is ErrInvalid, conditional or not,
// and writes nothing: no message, no bump, no Seq taken.
func testSourceUnknown(t *testing.T, s store.Store) {
	th, msgs := threadWithTurns(t, s, "user-1", 1)
	for _, src := range []store.MessageSource{
		"bogus", "typed", "Form", " form", "tool-results", "decision\x00", "assistant",
	} {
		for _, seq := range []int{0, 3} {
			what := fmt.Sprintf("AppendTurn at Seq %d with Source %q", seq, src)
			u, a := newTurn(th.ID, "refused")
			u.ID, a.ID, u.Source, u.Seq = uuid.NewString(), uuid.NewString(), src, seq
			wantErr(t, s.AppendTurn(t.Context(), u, a), store.ErrInvalid, what)
			for _, id := range []string{u.ID, a.ID} {
				_, err := s.GetMessage(t.Context(), id)
				wantErr(t, err, store.ErrNotFound, "GetMessage of a message of the refused "+what)
			}
			wantUnchanged(t, s, "the refused "+what, th, msgs)
		}
	}
	u, a := newTurn(th.ID, "in turn")
	u.Seq = 3
	must(t, s.AppendTurn(t.Context(), u, a), "AppendTurn at Seq 3 after the refused ones")
}

// UpdateMessage leaves Source as AppendTurn wrote it, whatever m holds:
// the worker finishing a placeholder, or a checkpoint of a user message,
// does not know or change how the message was made.
func testSourceThenUpdate(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	u, a := newTurn(th.ID, "question")
	u.Source = store.SourceDecision
	must(t, s.AppendTurn(t.Context(), u, a), "AppendTurn")
	for i, src := range []store.MessageSource{store.SourceTyped, store.SourceForm, "bogus"} {
		for _, m := range []store.Message{*u, *a} {
			want := getMessage(t, s, m.ID)
			want.Status, want.OutputTokens, want.UpdatedAt = store.StatusComplete, int64(i+1), at(10+i)
			upd := cloneMessage(want)
			upd.Source = src
			must(t, s.UpdateMessage(t.Context(), &upd), fmt.Sprintf("UpdateMessage with Source %q", src))
			if d := diffMessage(getMessage(t, s, m.ID), want); d != "" {
				t.Errorf("GetMessage of the %s message after UpdateMessage with Source %q: %s", m.Role, src, d)
			}
		}
	}
	if got := listMessages(t, s, th.ID)[0].Source; got != store.SourceDecision {
		t.Errorf("ListMessages: user Source after updates = %q, want %q", got, store.SourceDecision)
	}
}
