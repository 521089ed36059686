package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/store"
)

// preferenceCases run only on a store that implements store.Preferences.
var preferenceCases = withCapability("store.Preferences", []capabilityCase[store.Preferences]{
	{"GetMissingIsNotFound", testPreferenceMissing},
	{"SetThenGetRoundTripsAllFields", testPreferenceRoundTrip},
	{"SetAgainReplacesTheChoice", testPreferenceReplace},
	{"SetFillsAZeroUpdatedAtWithNow", testPreferenceFills},
	{"SetWithAnEmptyFieldIsInvalidAndWritesNothing", testPreferenceInvalid},
	{"ClearRemovesTheChoice", testPreferenceClear},
	{"ClearWithNoneStoredSucceeds", testPreferenceClearMissing},
	{"SetLeavesOtherUsersAlone", testPreferenceSetIsolated},
	{"GetNeverReturnsAnotherUsersChoice", testPreferenceGetIsolated},
	{"ClearLeavesOtherUsersAlone", testPreferenceClearIsolated},
	{"ConcurrentSetsForOneUserLeaveOneWholeWrite", testPreferenceConcurrent},
	{"HostileStringsRoundTrip", testPreferenceStrings},
	{"CanceledContextFailsEveryMethodAndWritesNothing", testPreferenceCanceledContext},
})

// lookalikeUsers differ from "user-1" only in ways a careless store
// conflates: case, a trailing space, LIKE wildcards, a prefix.
var lookalikeUsers = []string{"USER-1", "user-1 ", "user_1", "user%", "user-", "user-10", ""}

func choice(user, connection, model string, updated time.Time) store.ModelPreference {
	return store.ModelPreference{UserID: user, Connection: connection, Model: model, UpdatedAt: updated}
}

func setPreference(t *testing.T, ps store.Preferences, p store.ModelPreference) {
	t.Helper()
	must(t, ps.SetModelPreference(t.Context(), p), "SetModelPreference")
}

// diffPreference describes how got differs from want, or returns "".
func diffPreference(got, want store.ModelPreference) string {
	var d []string
	field := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %s, want %s", name, short(g), short(w)))
		}
	}
	field("UserID", got.UserID, want.UserID)
	field("Connection", got.Connection, want.Connection)
	field("Model", got.Model, want.Model)
	d = appendTimeDiff(d, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	return strings.Join(d, "; ")
}

// wantPreference fails t unless userID's stored choice is want.
func wantPreference(t *testing.T, ps store.Preferences, what string, want store.ModelPreference) {
	t.Helper()
	got, err := ps.ModelPreference(t.Context(), want.UserID)
	if err != nil {
		t.Errorf("%s: ModelPreference(%s): %v, want %s/%s", what, short(want.UserID), err, want.Connection, want.Model)
		return
	}
	if d := diffPreference(got, want); d != "" {
		t.Errorf("%s: ModelPreference(%s): %s", what, short(want.UserID), d)
	}
}

// wantNoPreference fails t unless userID has no stored choice.
func wantNoPreference(t *testing.T, ps store.Preferences, what, userID string) {
	t.Helper()
	got, err := ps.ModelPreference(t.Context(), userID)
	if err == nil {
		t.Errorf("%s: ModelPreference(%s) = %s/%s of %s, want ErrNotFound",
			what, short(userID), got.Connection, got.Model, short(got.UserID))
		return
	}
	wantErr(t, err, store.ErrNotFound, what+": ModelPreference("+short(userID)+")")
}

func testPreferenceMissing(t *testing.T, _ store.Store, ps store.Preferences) {
	for _, user := range append([]string{"user-1", `' OR '1'='1`}, lookalikeUsers...) {
		wantNoPreference(t, ps, "an empty store", user)
	}
}

func testPreferenceRoundTrip(t *testing.T, _ store.Store, ps store.Preferences) {
	want := choice("user-1", "openai-prod", "gpt-4o-mini", at(1))
	setPreference(t, ps, want)
	wantPreference(t, ps, "after SetModelPreference", want)
}

// The last choice wins: connection and model both change, and so does
// UpdatedAt, whether given or filled.
func testPreferenceReplace(t *testing.T, _ store.Store, ps store.Preferences) {
	setPreference(t, ps, choice("user-1", "openai-prod", "gpt-4o-mini", at(1)))
	second := choice("user-1", "local-ollama", "llama3.1:8b", at(2))
	setPreference(t, ps, second)
	wantPreference(t, ps, "after choosing again", second)

	third := choice("user-1", "anthropic", "claude-sonnet", time.Time{})
	setPreference(t, ps, third)
	got, err := ps.ModelPreference(t.Context(), "user-1")
	must(t, err, "ModelPreference")
	wantNow(t, "UpdatedAt of a choice replaced with a zero UpdatedAt", got.UpdatedAt)
	third.UpdatedAt = got.UpdatedAt
	if d := diffPreference(got, third); d != "" {
		t.Errorf("after choosing a third time: %s", d)
	}
}

func testPreferenceFills(t *testing.T, _ store.Store, ps store.Preferences) {
	setPreference(t, ps, choice("user-1", "openai-prod", "gpt-4o-mini", time.Time{}))
	got, err := ps.ModelPreference(t.Context(), "user-1")
	must(t, err, "ModelPreference")
	wantNow(t, "UpdatedAt", got.UpdatedAt)
	want := choice("user-1", "openai-prod", "gpt-4o-mini", got.UpdatedAt)
	if d := diffPreference(got, want); d != "" {
		t.Errorf("ModelPreference: %s", d)
	}
}

// An empty user, connection or model is ErrInvalid, for a user with a
// stored choice (which stays) as for one without (who still has none).
func testPreferenceInvalid(t *testing.T, _ store.Store, ps store.Preferences) {
	kept := choice("user-1", "openai-prod", "gpt-4o-mini", at(1))
	setPreference(t, ps, kept)
	for _, user := range []string{"user-1", "user-2"} {
		for _, p := range []store.ModelPreference{
			choice(user, "", "llama3.1:8b", at(2)),
			choice(user, "local-ollama", "", at(2)),
			choice(user, "", "", at(2)),
			choice(user, "", "", time.Time{}),
		} {
			what := fmt.Sprintf("SetModelPreference(%s, connection %q, model %q)", user, p.Connection, p.Model)
			wantErr(t, ps.SetModelPreference(t.Context(), p), store.ErrInvalid, what)
		}
	}
	wantErr(t, ps.SetModelPreference(t.Context(), choice("", "local-ollama", "llama3.1:8b", at(2))),
		store.ErrInvalid, "SetModelPreference without a user")
	wantPreference(t, ps, "after the refused sets", kept)
	wantNoPreference(t, ps, "after the refused sets", "user-2")
	wantNoPreference(t, ps, "after the refused set without a user", "")
}

func testPreferenceClear(t *testing.T, _ store.Store, ps store.Preferences) {
	setPreference(t, ps, choice("user-1", "openai-prod", "gpt-4o-mini", at(1)))
	must(t, ps.ClearModelPreference(t.Context(), "user-1"), "ClearModelPreference")
	wantNoPreference(t, ps, "after ClearModelPreference", "user-1")
	must(t, ps.ClearModelPreference(t.Context(), "user-1"), "ClearModelPreference a second time")
	// The user can choose again.
	again := choice("user-1", "local-ollama", "llama3.1:8b", at(2))
	setPreference(t, ps, again)
	wantPreference(t, ps, "after choosing again", again)
}

func testPreferenceClearMissing(t *testing.T, _ store.Store, ps store.Preferences) {
	for _, user := range append([]string{"user-1", `' OR '1'='1`}, lookalikeUsers...) {
		if err := ps.ClearModelPreference(t.Context(), user); err != nil {
			t.Errorf("ClearModelPreference(%s) with none stored: %v, want nil", short(user), err)
		}
	}
	wantNoPreference(t, ps, "after clearing none", "user-1")
}

// otherUsers stores a choice for user-2 and for each lookalike of user-1
// (but the empty one, which cannot have one) and returns them.
func otherUsers(t *testing.T, ps store.Preferences) []store.ModelPreference {
	t.Helper()
	others := []store.ModelPreference{choice("user-2", "anthropic", "claude-sonnet", at(10))}
	for i, user := range lookalikeUsers {
		if user != "" {
			others = append(others, choice(user, fmt.Sprint("conn-", i), fmt.Sprint("model-", i), at(20+i)))
		}
	}
	for _, p := range others {
		setPreference(t, ps, p)
	}
	return others
}

// A user's set changes no other user's choice, whether set before or after.
func testPreferenceSetIsolated(t *testing.T, _ store.Store, ps store.Preferences) {
	others := otherUsers(t, ps)
	mine := choice("user-1", "openai-prod", "gpt-4o-mini", at(1))
	setPreference(t, ps, mine)
	wantPreference(t, ps, "after user-1's set", mine)
	for _, p := range others {
		wantPreference(t, ps, "after user-1's set", p)
	}
	mine = choice("user-1", "local-ollama", "llama3.1:8b", at(2))
	setPreference(t, ps, mine)
	wantPreference(t, ps, "after user-1's second set", mine)
	for _, p := range others {
		wantPreference(t, ps, "after user-1's second set", p)
	}
}

// A user without a choice has none, whoever else has one.
func testPreferenceGetIsolated(t *testing.T, _ store.Store, ps store.Preferences) {
	setPreference(t, ps, choice("user-1", "openai-prod", "gpt-4o-mini", at(1)))
	for _, user := range append([]string{"user-2"}, lookalikeUsers...) {
		wantNoPreference(t, ps, "with only user-1's choice stored", user)
	}
}

// Clearing one user's choice leaves everyone else's.
func testPreferenceClearIsolated(t *testing.T, _ store.Store, ps store.Preferences) {
	others := otherUsers(t, ps)
	setPreference(t, ps, choice("user-1", "openai-prod", "gpt-4o-mini", at(1)))
	must(t, ps.ClearModelPreference(t.Context(), "user-1"), "ClearModelPreference")
	wantNoPreference(t, ps, "after clearing user-1's choice", "user-1")
	for _, p := range others {
		wantPreference(t, ps, "after clearing user-1's choice", p)
	}
	// Clearing a user with none leaves the others too.
	must(t, ps.ClearModelPreference(t.Context(), "user-3"), "ClearModelPreference with none stored")
	for _, p := range others {
		wantPreference(t, ps, "after clearing a user with none", p)
	}
}

// testPreferenceConcurrent races 32 sets of one user's choice, as the
// user's devices on several instances would, first with none stored and
// then over a stored one. Every set succeeds, and the stored choice is one
// writer's whole write: its connection, its model and its UpdatedAt.
func testPreferenceConcurrent(t *testing.T, _ store.Store, ps store.Preferences) {
	const writers = 32
	other := choice("user-2", "anthropic", "claude-sonnet", at(0))
	setPreference(t, ps, other)
	for round := range 2 {
		written := make([]store.ModelPreference, writers)
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			written[i] = choice("user-1", fmt.Sprintf("conn-%d-%d", round, i), fmt.Sprintf("model-%d-%d", round, i),
				at(100*round+i+1))
			wg.Go(func() {
				<-start
				errs[i] = ps.SetModelPreference(t.Context(), written[i])
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: SetModelPreference %d: %v, want nil", round, i, err)
			}
		}
		got, err := ps.ModelPreference(t.Context(), "user-1")
		must(t, err, fmt.Sprintf("round %d: ModelPreference", round))
		whole := false
		for _, w := range written {
			if diffPreference(got, w) == "" {
				whole = true
			}
		}
		if !whole {
			t.Errorf("round %d: stored choice %s/%s at %v is no writer's whole write",
				round, got.Connection, got.Model, got.UpdatedAt)
		}
		wantPreference(t, ps, fmt.Sprintf("round %d: the other user", round), other)
	}
}

// User ids, connections and models are keys and names: hostile ones are
// bound, never spliced, and kept byte for byte.
func testPreferenceStrings(t *testing.T, _ store.Store, ps store.Preferences) {
	var stored []store.ModelPreference
	for i, str := range hostileStrings() {
		if len(str) > 256 {
			str = strings.Repeat(`é'"%x `, 32) // keys: 10 KB ones are not realistic
		}
		p := choice("user "+str, "conn "+str, str, at(i))
		setPreference(t, ps, p)
		stored = append(stored, p)
	}
	for _, p := range stored {
		wantPreference(t, ps, "with hostile strings", p)
	}
	for _, p := range stored {
		must(t, ps.ClearModelPreference(t.Context(), p.UserID), "ClearModelPreference with "+short(p.Model))
		wantNoPreference(t, ps, "after clearing", p.UserID)
	}
}

func testPreferenceCanceledContext(t *testing.T, _ store.Store, ps store.Preferences) {
	kept := choice("user-1", "openai-prod", "gpt-4o-mini", at(1))
	setPreference(t, ps, kept)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	calls := []namedCall{
		{"SetModelPreference", func() error {
			return ps.SetModelPreference(ctx, choice("user-1", "local-ollama", "llama3.1:8b", at(2)))
		}},
		{"SetModelPreference of a new user", func() error {
			return ps.SetModelPreference(ctx, choice("user-2", "local-ollama", "llama3.1:8b", at(2)))
		}},
		{"ModelPreference", func() error { _, err := ps.ModelPreference(ctx, "user-1"); return err }},
		{"ClearModelPreference", func() error { return ps.ClearModelPreference(ctx, "user-1") }},
	}
	wantCanceled(t, calls)

	wantPreference(t, ps, "after calls with a canceled context", kept)
	wantNoPreference(t, ps, "after calls with a canceled context", "user-2")
}
