package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/store"
)

// autoApprovalCases run only on a store that implements store.AutoApprovals.
var autoApprovalCases = withCapability("store.AutoApprovals", []capabilityCase[store.AutoApprovals]{
	{"GetWithNoneIsEmpty", testAutoApprovalsNone},
	{"SetThenGetIsSortedWithoutRepeats", testAutoApprovalsRoundTrip},
	{"SetReplacesTheWholeList", testAutoApprovalsReplace},
	{"SetEmptyClears", testAutoApprovalsClear},
	{"SetWithAnEmptyUserOrGrantIsInvalidAndWritesNothing", testAutoApprovalsInvalid},
	{"UsersAreApart", testAutoApprovalsIsolated},
	{"ConcurrentSetsForOneUserLeaveOneWholeList", testAutoApprovalsConcurrent},
	{"HostileStringsRoundTrip", testAutoApprovalsStrings},
	{"CanceledContextFailsEveryMethodAndWritesNothing", testAutoApprovalsCanceledContext},
})

// wantGrants fails t unless userID's grants are want.
func wantGrants(t *testing.T, as store.AutoApprovals, what, userID string, want []string) {
	t.Helper()
	got, err := as.AutoApprovals(t.Context(), userID)
	if err != nil {
		t.Errorf("%s: AutoApprovals(%s): %v", what, short(userID), err)
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: AutoApprovals(%s) = %q, want %q", what, short(userID), got, want)
	}
}

func setGrants(t *testing.T, as store.AutoApprovals, userID string, grants ...string) {
	t.Helper()
	must(t, as.SetAutoApprovals(t.Context(), userID, grants), "SetAutoApprovals")
}

func testAutoApprovalsNone(t *testing.T, _ store.Store, as store.AutoApprovals) {
	wantGrants(t, as, "a user who set none", "user-1", nil)
}

func testAutoApprovalsRoundTrip(t *testing.T, _ store.Store, as store.AutoApprovals) {
	setGrants(t, as, "user-1", "rename_note", "category:notes", "add_note", "rename_note")
	wantGrants(t, as, "after a set", "user-1", []string{"add_note", "category:notes", "rename_note"})
}

func testAutoApprovalsReplace(t *testing.T, _ store.Store, as store.AutoApprovals) {
	setGrants(t, as, "user-1", "add_note", "rename_note")
	setGrants(t, as, "user-1", "archive_note")
	wantGrants(t, as, "after a second set", "user-1", []string{"archive_note"})
}

func testAutoApprovalsClear(t *testing.T, _ store.Store, as store.AutoApprovals) {
	setGrants(t, as, "user-1", "add_note")
	setGrants(t, as, "user-1")
	wantGrants(t, as, "after an empty set", "user-1", nil)
	setGrants(t, as, "user-2") // with none stored
	wantGrants(t, as, "an empty set of a user with none", "user-2", nil)
}

func testAutoApprovalsInvalid(t *testing.T, _ store.Store, as store.AutoApprovals) {
	setGrants(t, as, "user-1", "add_note")
	for _, c := range []struct {
		user   string
		grants []string
	}{{"", []string{"add_note"}}, {"user-1", []string{"rename_note", ""}}} {
		if err := as.SetAutoApprovals(t.Context(), c.user, c.grants); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("SetAutoApprovals(%q, %q) = %v, want ErrInvalid", c.user, c.grants, err)
		}
	}
	wantGrants(t, as, "after invalid sets", "user-1", []string{"add_note"})
	wantGrants(t, as, "after invalid sets", "", nil)
}

func testAutoApprovalsIsolated(t *testing.T, _ store.Store, as store.AutoApprovals) {
	setGrants(t, as, "user-1", "add_note")
	for _, u := range lookalikeUsers[:len(lookalikeUsers)-1] { // the last is "", which is invalid
		wantGrants(t, as, "a lookalike of user-1", u, nil)
	}
	setGrants(t, as, "user-2", "delete_note")
	setGrants(t, as, "user-2")
	wantGrants(t, as, "after another user cleared theirs", "user-1", []string{"add_note"})
}

func testAutoApprovalsConcurrent(t *testing.T, _ store.Store, as store.AutoApprovals) {
	const writers = 16
	setGrants(t, as, "user-2", "other")
	lists := make([][]string, writers)
	errs := make([]error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		for j := range i%4 + 1 {
			lists[i] = append(lists[i], fmt.Sprintf("tool-%02d-%d", i, j))
		}
		wg.Go(func() {
			<-start
			errs[i] = as.SetAutoApprovals(t.Context(), "user-1", lists[i])
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("SetAutoApprovals %d: %v, want nil", i, err)
		}
	}
	got, err := as.AutoApprovals(t.Context(), "user-1")
	must(t, err, "AutoApprovals")
	if !slices.ContainsFunc(lists, func(l []string) bool { return slices.Equal(l, got) }) {
		t.Errorf("stored grants %q are no writer's whole list", got)
	}
	wantGrants(t, as, "the other user", "user-2", []string{"other"})
}

func testAutoApprovalsStrings(t *testing.T, _ store.Store, as store.AutoApprovals) {
	for i, str := range hostileStrings() {
		if len(str) > 256 {
			str = strings.Repeat(`é'"%x `, 32)
		}
		user := fmt.Sprintf("user %d %s", i, str)
		setGrants(t, as, user, "category:"+str, str)
		want := []string{"category:" + str, str}
		slices.Sort(want)
		wantGrants(t, as, "with hostile strings", user, want)
	}
}

func testAutoApprovalsCanceledContext(t *testing.T, _ store.Store, as store.AutoApprovals) {
	setGrants(t, as, "user-1", "add_note")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	wantCanceled(t, []namedCall{
		{"SetAutoApprovals", func() error { return as.SetAutoApprovals(ctx, "user-1", []string{"delete_note"}) }},
		{"SetAutoApprovals of a new user", func() error { return as.SetAutoApprovals(ctx, "user-2", []string{"delete_note"}) }},
		{"AutoApprovals", func() error { _, err := as.AutoApprovals(ctx, "user-1"); return err }},
	})
	wantGrants(t, as, "after calls with a canceled context", "user-1", []string{"add_note"})
	wantGrants(t, as, "after calls with a canceled context", "user-2", nil)
}
