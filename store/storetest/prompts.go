package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

// promptCases run only on a store that implements store.SystemPrompts.
var promptCases = withCapability("store.SystemPrompts", []capabilityCase[store.SystemPrompts]{
	{"CreateThenGetRoundTripsAllFields", testPromptRoundTrip},
	{"CreateFillsIDAndTimesAndIsInactive", testPromptCreateFills},
	{"CreateWithoutTextIsInvalid", testPromptWithoutText},
	{"CreateWithTakenIDConflicts", testPromptTakenID},
	{"GetUnknownIsNotFound", testPromptUnknown},
	{"ListNewestCreatedFirstThenByDescendingID", testPromptList},
	{"ActivateSwitchesTheOneActivePrompt", testPromptActivate},
	{"ActivateTheActiveOneChangesNothing", testPromptActivateAgain},
	{"ActivateUnknownIsNotFoundAndChangesNothing", testPromptActivateUnknown},
	{"ActiveIsNotFoundWhenNoneIs", testPromptNoneActive},
	{"DeactivateLeavesNoneActive", testPromptDeactivate},
	{"DeleteRemovesItAndTheActiveOneLeavesNone", testPromptDelete},
	{"ConcurrentActivationsLeaveExactlyOneActiveAtEveryObservation", testPromptConcurrentActivate},
	{"HostileAndModelStringsRoundTrip", testPromptStrings},
	{"CanceledContextFailsEveryMethodAndWritesNothing", testPromptCanceledContext},
})

// promptTick separates two writes whose store-filled times the case
// compares.
const promptTick = 2 * time.Millisecond

func createPrompt(t *testing.T, ps store.SystemPrompts, p store.SystemPrompt) store.SystemPrompt {
	t.Helper()
	must(t, ps.CreateSystemPrompt(t.Context(), &p), "CreateSystemPrompt")
	return p
}

// newPrompt creates an inactive prompt named name, created at created.
func newPrompt(t *testing.T, ps store.SystemPrompts, name string, created time.Time) store.SystemPrompt {
	t.Helper()
	return createPrompt(t, ps, store.SystemPrompt{Name: name, Text: "Answer as " + name + ".",
		CreatedBy: "admin-1", CreatedAt: created, UpdatedAt: created})
}

func getPrompt(t *testing.T, ps store.SystemPrompts, id string) store.SystemPrompt {
	t.Helper()
	p, err := ps.GetSystemPrompt(t.Context(), id)
	must(t, err, "GetSystemPrompt")
	return p
}

func listPrompts(t *testing.T, ps store.SystemPrompts) []store.SystemPrompt {
	t.Helper()
	out, err := ps.ListSystemPrompts(t.Context())
	must(t, err, "ListSystemPrompts")
	return out
}

// diffPrompt describes how got differs from want, or returns "".
func diffPrompt(got, want store.SystemPrompt) string {
	var d []string
	field := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %s, want %s", name, short(g), short(w)))
		}
	}
	field("ID", got.ID, want.ID)
	field("Name", got.Name, want.Name)
	field("Text", got.Text, want.Text)
	field("CreatedBy", got.CreatedBy, want.CreatedBy)
	if got.Active != want.Active {
		d = append(d, fmt.Sprintf("Active = %v, want %v", got.Active, want.Active))
	}
	d = appendTimeDiff(d, "CreatedAt", got.CreatedAt, want.CreatedAt)
	d = appendTimeDiff(d, "UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	return strings.Join(d, "; ")
}

// wantActive fails t unless want is the one active prompt, as stored, by
// ActiveSystemPrompt and by ListSystemPrompts; a zero want means none.
func wantActive(t *testing.T, ps store.SystemPrompts, what string, want store.SystemPrompt) {
	t.Helper()
	got, err := ps.ActiveSystemPrompt(t.Context())
	switch {
	case want.ID == "":
		wantErr(t, err, store.ErrNotFound, what+": ActiveSystemPrompt")
	case err != nil:
		t.Errorf("%s: ActiveSystemPrompt: %v, want %s", what, err, want.ID)
	default:
		if d := diffPrompt(got, want); d != "" {
			t.Errorf("%s: ActiveSystemPrompt: %s", what, d)
		}
	}
	var active []string
	for _, p := range listPrompts(t, ps) {
		if p.Active {
			active = append(active, p.ID)
		}
	}
	if (want.ID == "" && len(active) != 0) || (want.ID != "" && (len(active) != 1 || active[0] != want.ID)) {
		t.Errorf("%s: ListSystemPrompts has %q active, want %q", what, active, want.ID)
	}
}

func testPromptRoundTrip(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	want := store.SystemPrompt{ID: uuid.NewString(), Name: "Support tone", CreatedBy: "admin-1",
		Text:      "You are {assistant_name}, the assistant of {organization}.\nBe brief.",
		CreatedAt: at(1), UpdatedAt: at(2)}
	in := want
	must(t, ps.CreateSystemPrompt(t.Context(), &in), "CreateSystemPrompt")
	if d := diffPrompt(in, want); d != "" {
		t.Errorf("CreateSystemPrompt changed fields it was given: %s", d)
	}
	if d := diffPrompt(getPrompt(t, ps, want.ID), want); d != "" {
		t.Errorf("GetSystemPrompt: %s", d)
	}
	if got := listPrompts(t, ps); len(got) != 1 || diffPrompt(got[0], want) != "" {
		t.Errorf("ListSystemPrompts = %+v, want [%+v]", got, want)
	}
}

// A new prompt is inactive whatever the caller says: only an activation
// changes what every turn is told.
func testPromptCreateFills(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	p := store.SystemPrompt{Name: "n", Text: "t", Active: true}
	must(t, ps.CreateSystemPrompt(t.Context(), &p), "CreateSystemPrompt")
	if !isUUID(p.ID) {
		t.Errorf("CreateSystemPrompt filled ID %q, want a UUID", p.ID)
	}
	if p.Active {
		t.Error("CreateSystemPrompt reported the new prompt active")
	}
	wantNow(t, "CreatedAt", p.CreatedAt)
	wantNow(t, "UpdatedAt", p.UpdatedAt)
	if d := diffPrompt(getPrompt(t, ps, p.ID), p); d != "" {
		t.Errorf("GetSystemPrompt after filling: %s", d)
	}
	wantActive(t, ps, "after creating a prompt marked active", store.SystemPrompt{})
}

func testPromptWithoutText(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	id := uuid.NewString()
	err := ps.CreateSystemPrompt(t.Context(), &store.SystemPrompt{ID: id, Name: "empty"})
	wantErr(t, err, store.ErrInvalid, "CreateSystemPrompt without text")
	_, err = ps.GetSystemPrompt(t.Context(), id)
	wantErr(t, err, store.ErrNotFound, "GetSystemPrompt of the refused prompt")
}

func testPromptTakenID(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	first := newPrompt(t, ps, "first", at(1))
	must(t, ps.ActivateSystemPrompt(t.Context(), first.ID), "ActivateSystemPrompt")
	first = getPrompt(t, ps, first.ID)
	dup := store.SystemPrompt{ID: first.ID, Name: "second", Text: "other", CreatedAt: at(2), UpdatedAt: at(2)}
	wantErr(t, ps.CreateSystemPrompt(t.Context(), &dup), store.ErrConflict, "CreateSystemPrompt with a taken ID")
	if d := diffPrompt(getPrompt(t, ps, first.ID), first); d != "" {
		t.Errorf("the conflicting create changed the first prompt: %s", d)
	}
	wantActive(t, ps, "after the conflicting create", first)
}

func testPromptUnknown(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	newPrompt(t, ps, "one", at(1))
	for _, id := range []string{uuid.NewString(), "", "%", `' OR '1'='1`} {
		_, err := ps.GetSystemPrompt(t.Context(), id)
		wantErr(t, err, store.ErrNotFound, "GetSystemPrompt("+short(id)+")")
	}
}

// Newest created first; prompts created at the same instant by descending
// ID, as ListThreads breaks its ties.
func testPromptList(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	if got := listPrompts(t, ps); len(got) != 0 {
		t.Errorf("ListSystemPrompts of an empty store = %d prompts, want none", len(got))
	}
	b := newPrompt(t, ps, "b", at(2))
	c := newPrompt(t, ps, "c", at(3))
	a := newPrompt(t, ps, "a", at(1))
	tie := func(id string) store.SystemPrompt {
		return createPrompt(t, ps, store.SystemPrompt{ID: id, Name: "tie", Text: "t", CreatedAt: at(2), UpdatedAt: at(2)})
	}
	tieLow := tie("00000000-0000-4000-8000-000000000001")
	tieHigh := tie("ffffffff-ffff-4fff-bfff-ffffffffffff")
	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt") // activation does not reorder
	want := []string{c.ID, tieHigh.ID, b.ID, tieLow.ID, a.ID}
	var got []string
	for _, p := range listPrompts(t, ps) {
		got = append(got, p.ID)
	}
	wantIDs(t, "ListSystemPrompts", got, want)
}

// Activating a prompt deactivates the active one in the same step; both
// get a new UpdatedAt, and nothing else changes.
func testPromptActivate(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	a := newPrompt(t, ps, "a", at(1))
	b := newPrompt(t, ps, "b", at(2))
	c := newPrompt(t, ps, "c", at(3))

	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt(a)")
	gotA := getPrompt(t, ps, a.ID)
	wantNow(t, "UpdatedAt of the activated prompt", gotA.UpdatedAt)
	a.Active, a.UpdatedAt = true, gotA.UpdatedAt
	wantActive(t, ps, "after activating a", a)

	time.Sleep(promptTick)
	must(t, ps.ActivateSystemPrompt(t.Context(), b.ID), "ActivateSystemPrompt(b)")
	gotA, gotB := getPrompt(t, ps, a.ID), getPrompt(t, ps, b.ID)
	if !gotA.UpdatedAt.After(a.UpdatedAt) || !gotB.UpdatedAt.After(a.UpdatedAt) {
		t.Errorf("UpdatedAt of a, b = %v, %v; want both after a's activation %v", gotA.UpdatedAt, gotB.UpdatedAt, a.UpdatedAt)
	}
	a.Active, a.UpdatedAt = false, gotA.UpdatedAt
	b.Active, b.UpdatedAt = true, gotB.UpdatedAt
	if d := diffPrompt(gotA, a); d != "" {
		t.Errorf("the deactivated prompt: %s", d)
	}
	wantActive(t, ps, "after activating b", b)
	if d := diffPrompt(getPrompt(t, ps, c.ID), c); d != "" {
		t.Errorf("a prompt that was never active changed: %s", d)
	}
}

func testPromptActivateAgain(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	a := newPrompt(t, ps, "a", at(1))
	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt")
	a = getPrompt(t, ps, a.ID)
	time.Sleep(promptTick)
	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt again")
	wantActive(t, ps, "after activating the active prompt", a)
}

func testPromptActivateUnknown(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	a := newPrompt(t, ps, "a", at(1))
	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt")
	a = getPrompt(t, ps, a.ID)
	for _, id := range []string{uuid.NewString(), "", "%"} {
		wantErr(t, ps.ActivateSystemPrompt(t.Context(), id), store.ErrNotFound, "ActivateSystemPrompt("+short(id)+")")
	}
	wantActive(t, ps, "after activating unknown prompts", a)
}

func testPromptNoneActive(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	wantActive(t, ps, "an empty store", store.SystemPrompt{})
	newPrompt(t, ps, "a", at(1))
	newPrompt(t, ps, "b", at(2))
	wantActive(t, ps, "with prompts, none activated", store.SystemPrompt{})
}

func testPromptDeactivate(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	a := newPrompt(t, ps, "a", at(1))
	b := newPrompt(t, ps, "b", at(2))
	must(t, ps.DeactivateSystemPrompts(t.Context()), "DeactivateSystemPrompts with none active")
	for _, p := range []store.SystemPrompt{a, b} {
		if d := diffPrompt(getPrompt(t, ps, p.ID), p); d != "" {
			t.Errorf("DeactivateSystemPrompts with none active changed a prompt: %s", d)
		}
	}
	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt")
	activated := getPrompt(t, ps, a.ID)
	time.Sleep(promptTick)
	must(t, ps.DeactivateSystemPrompts(t.Context()), "DeactivateSystemPrompts")
	wantActive(t, ps, "after DeactivateSystemPrompts", store.SystemPrompt{})
	got := getPrompt(t, ps, a.ID)
	if !got.UpdatedAt.After(activated.UpdatedAt) {
		t.Errorf("UpdatedAt of the deactivated prompt = %v, want after its activation %v", got.UpdatedAt, activated.UpdatedAt)
	}
	if d := diffPrompt(getPrompt(t, ps, b.ID), b); d != "" {
		t.Errorf("DeactivateSystemPrompts changed an inactive prompt: %s", d)
	}
	// It can be activated again.
	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt after deactivating")
	wantActive(t, ps, "after activating again", getPrompt(t, ps, a.ID))
}

func testPromptDelete(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	a := newPrompt(t, ps, "a", at(1))
	b := newPrompt(t, ps, "b", at(2))
	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt")
	a = getPrompt(t, ps, a.ID)

	must(t, ps.DeleteSystemPrompt(t.Context(), b.ID), "DeleteSystemPrompt of an inactive prompt")
	_, err := ps.GetSystemPrompt(t.Context(), b.ID)
	wantErr(t, err, store.ErrNotFound, "GetSystemPrompt after delete")
	wantActive(t, ps, "after deleting an inactive prompt", a)

	must(t, ps.DeleteSystemPrompt(t.Context(), a.ID), "DeleteSystemPrompt of the active prompt")
	wantActive(t, ps, "after deleting the active prompt", store.SystemPrompt{})
	if got := listPrompts(t, ps); len(got) != 0 {
		t.Errorf("ListSystemPrompts after deleting both = %d prompts, want none", len(got))
	}
	for _, id := range []string{a.ID, uuid.NewString(), "", "%"} {
		wantErr(t, ps.DeleteSystemPrompt(t.Context(), id), store.ErrNotFound, "DeleteSystemPrompt("+short(id)+")")
	}
	// A new prompt can be activated after the active one was deleted.
	c := newPrompt(t, ps, "c", at(3))
	must(t, ps.ActivateSystemPrompt(t.Context(), c.ID), "ActivateSystemPrompt after deleting the active one")
	wantActive(t, ps, "after activating a new prompt", getPrompt(t, ps, c.ID))
}

// testPromptConcurrentActivate races 32 activations of different prompts,
// as operators on several instances would, against readers. With one
// prompt active before, every read in between must see exactly one active
// (never none, never two) and no activation may fail; after, one is.
func testPromptConcurrentActivate(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	const activators, rounds = 32, 3
	var prompts []store.SystemPrompt
	for i := range activators {
		prompts = append(prompts, newPrompt(t, ps, fmt.Sprint("prompt ", i), at(i)))
	}
	must(t, ps.ActivateSystemPrompt(t.Context(), prompts[0].ID), "ActivateSystemPrompt")

	for round := range rounds {
		errs := make([]error, activators)
		start := make(chan struct{})
		var done atomic.Bool
		var activations, readers sync.WaitGroup
		for i := range activators {
			activations.Go(func() {
				<-start
				errs[i] = ps.ActivateSystemPrompt(t.Context(), prompts[i].ID)
			})
		}
		var seen atomic.Int64
		for range 4 {
			readers.Go(func() {
				<-start
				for !done.Load() {
					if err := observeOneActive(t.Context(), ps); err != nil {
						t.Errorf("round %d, during the activations: %v", round, err)
						return
					}
					seen.Add(1)
				}
			})
		}
		close(start)
		activations.Wait()
		done.Store(true)
		readers.Wait()

		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: ActivateSystemPrompt %d: %v, want nil", round, i, err)
			}
		}
		if err := observeOneActive(t.Context(), ps); err != nil {
			t.Fatalf("round %d, after the activations: %v", round, err)
		}
		t.Logf("round %d: %d reads during the activations", round, seen.Load())
	}
}

// observeOneActive returns why the store does not show exactly one active
// prompt, through both reads, or nil.
func observeOneActive(ctx context.Context, ps store.SystemPrompts) error {
	p, err := ps.ActiveSystemPrompt(ctx)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errors.New("ActiveSystemPrompt found none active")
	case err != nil:
		return fmt.Errorf("ActiveSystemPrompt: %w", err)
	case !p.Active:
		return fmt.Errorf("ActiveSystemPrompt returned %s with Active false", p.ID)
	}
	all, err := ps.ListSystemPrompts(ctx)
	if err != nil {
		return fmt.Errorf("ListSystemPrompts: %w", err)
	}
	var active []string
	for _, p := range all {
		if p.Active {
			active = append(active, p.ID)
		}
	}
	if len(active) != 1 {
		return fmt.Errorf("ListSystemPrompts has %d active (%q), want 1", len(active), active)
	}
	return nil
}

// Name and Text are free text: an operator may paste anything, NUL and
// all. CreatedBy is a key, so it gets the hostile strings without NUL.
func testPromptStrings(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	check := func(i int, by, text string, lenient bool) {
		t.Helper()
		want := createPrompt(t, ps, store.SystemPrompt{Name: text, Text: text, CreatedBy: by,
			CreatedAt: at(i), UpdatedAt: at(i)})
		must(t, ps.ActivateSystemPrompt(t.Context(), want.ID), "ActivateSystemPrompt with "+short(text))
		want.Active = true
		reads := []store.SystemPrompt{getPrompt(t, ps, want.ID)}
		active, err := ps.ActiveSystemPrompt(t.Context())
		must(t, err, "ActiveSystemPrompt")
		reads = append(reads, active)
		for _, p := range listPrompts(t, ps) {
			if p.ID == want.ID {
				reads = append(reads, p)
			}
		}
		if len(reads) != 3 {
			t.Errorf("the prompt with %s is not listed", short(text))
		}
		for _, got := range reads {
			w := want
			w.UpdatedAt = got.UpdatedAt // the activation's
			if lenient {
				for _, p := range []struct{ got, want *string }{{&got.Name, &w.Name}, {&got.Text, &w.Text}} {
					if *p.got != *p.want && *p.got == replaced(*p.want) {
						*p.want = *p.got
					}
				}
			}
			if d := diffPrompt(got, w); d != "" {
				t.Errorf("prompt with %s: %s", short(text), d)
			}
		}
	}
	n := 0
	for _, str := range hostileStrings() {
		by := "admin " + str
		if len(by) > 256 {
			by = "admin of the long text"
		}
		check(n, by, str, false)
		n++
	}
	for _, str := range modelStrings() {
		check(n, "admin-1", str, false)
		n++
	}
	for _, str := range invalidUTF8() {
		check(n, "admin-1", str, true)
		n++
	}
}

func testPromptCanceledContext(t *testing.T, _ store.Store, ps store.SystemPrompts) {
	a := newPrompt(t, ps, "a", at(1))
	b := newPrompt(t, ps, "b", at(2))
	must(t, ps.ActivateSystemPrompt(t.Context(), a.ID), "ActivateSystemPrompt")
	a = getPrompt(t, ps, a.ID)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	newID := uuid.NewString()
	calls := []namedCall{
		{"CreateSystemPrompt", func() error {
			return ps.CreateSystemPrompt(ctx, &store.SystemPrompt{ID: newID, Name: "new", Text: "t"})
		}},
		{"GetSystemPrompt", func() error { _, err := ps.GetSystemPrompt(ctx, a.ID); return err }},
		{"ListSystemPrompts", func() error { _, err := ps.ListSystemPrompts(ctx); return err }},
		{"ActivateSystemPrompt", func() error { return ps.ActivateSystemPrompt(ctx, b.ID) }},
		{"DeactivateSystemPrompts", func() error { return ps.DeactivateSystemPrompts(ctx) }},
		{"ActiveSystemPrompt", func() error { _, err := ps.ActiveSystemPrompt(ctx); return err }},
		{"DeleteSystemPrompt", func() error { return ps.DeleteSystemPrompt(ctx, a.ID) }},
	}
	wantCanceled(t, calls)

	_, err := ps.GetSystemPrompt(t.Context(), newID)
	wantErr(t, err, store.ErrNotFound, "GetSystemPrompt of the prompt created with a canceled context")
	wantActive(t, ps, "after calls with a canceled context", a)
	if d := diffPrompt(getPrompt(t, ps, b.ID), b); d != "" {
		t.Errorf("calls with a canceled context changed a prompt: %s", d)
	}
}
