package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/parleyhq/parley/store"
)

var proposalCases = []testCase{
	{"CreateThenGetRoundTripsAllFields", testProposalRoundTrip},
	{"CreateFillsPendingAndCreatedAt", testProposalFills},
	{"CreateWithoutRequiredFieldOrNotPendingIsInvalid", testProposalInvalid},
	{"CreateInUnknownThreadIsNotFound", testProposalUnknownThread},
	{"CreateWithTakenTokenConflicts", testProposalTakenToken},
	{"GetUnknownIsNotFound", testProposalGetUnknown},
	{"DecideAppliesOrDeclines", testProposalDecide},
	{"DecideTwiceConflictsWithCurrentState", testProposalDecideTwice},
	{"DecideWithStatusNotAppliedOrDeclinedIsInvalid", testProposalDecideInvalid},
	{"DecideUnknownIsNotFound", testProposalDecideUnknown},
	{"DecideAtOrAfterExpiryMarksExpiredAndConflicts", testProposalDecideExpired},
	{"ConcurrentDecisionsHaveExactlyOneWinner", testProposalConcurrentDecide},
	{"ReopenMovesAppliedOrDeclinedBackToPending", testProposalReopen},
	{"ReopenDecidedAtAnotherTimeConflicts", testProposalReopenOtherTime},
	{"ReopenPendingOrExpiredConflicts", testProposalReopenNotDecided},
	{"ReopenUnknownIsNotFound", testProposalReopenUnknown},
	{"ConcurrentReopenAndDecisionsHaveOneWinnerEach", testProposalConcurrentReopen},
	{"ListOldestFirstAndEmptyForUnknownThread", testProposalList},
	{"ExpireChangesOnlyPendingPastExpiry", testProposalExpire},
	{"DeleteThreadRemovesItsProposals", testProposalDeleteThread},
	{"HostileStringsRoundTrip", testProposalHostileStrings},
	{"ValuesCrossTheBoundaryByCopy", testProposalIsolation},
	{"CanceledContextFailsEveryMethodAndWritesNothing", testProposalCanceledContext},
}

// proposalArgs is a JSON object as a tool call's arguments arrive: spacing,
// key order and number spelling that a re-encoding would change. ArgsHash
// is a hash of these bytes, so a store must keep them exactly.
const proposalArgs = "{ \"vm\" : \"vm-1\",\n  \"force\": true, \"delay\": 1.50, \"a\": [ ] }"

func hashArgs(args []byte) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// newProposal returns a pending proposal in threadID with every field set
// except DecidedAt, created at(created) and expiring at(expires).
func newProposal(threadID, userID string, created, expires int) store.Proposal {
	args := json.RawMessage(proposalArgs)
	return store.Proposal{
		Token:     "tok-" + uuid.NewString(),
		UserID:    userID,
		ThreadID:  threadID,
		MessageID: uuid.NewString(),
		CallID:    "call_" + uuid.NewString()[:8],
		Tool:      "reboot_vm",
		Args:      args,
		ArgsHash:  hashArgs(args),
		Summary:   "Reboot vm-1 now",
		Status:    store.ProposalPending,
		CreatedAt: at(created),
		ExpiresAt: at(expires),
	}
}

// createProposal stores a new proposal (see newProposal) and returns it as
// filled in by the store.
func createProposal(t *testing.T, s store.Store, threadID string, created, expires int) store.Proposal {
	t.Helper()
	p := newProposal(threadID, "user-1", created, expires)
	must(t, s.CreateProposal(t.Context(), &p), "CreateProposal")
	return p
}

func getProposal(t *testing.T, s store.Store, token string) store.Proposal {
	t.Helper()
	p, err := s.GetProposal(t.Context(), token)
	must(t, err, "GetProposal")
	return p
}

func listProposals(t *testing.T, s store.Store, threadID string) []store.Proposal {
	t.Helper()
	ps, err := s.ListProposals(t.Context(), threadID)
	must(t, err, "ListProposals")
	return ps
}

// diffProposal describes how got differs from want, or returns "". Args
// are compared byte for byte: ArgsHash is a hash of them.
func diffProposal(got, want store.Proposal) string {
	var d []string
	field := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %s, want %s", name, short(g), short(w)))
		}
	}
	field("Token", got.Token, want.Token)
	field("UserID", got.UserID, want.UserID)
	field("ThreadID", got.ThreadID, want.ThreadID)
	field("MessageID", got.MessageID, want.MessageID)
	field("CallID", got.CallID, want.CallID)
	field("Tool", got.Tool, want.Tool)
	field("Args", string(got.Args), string(want.Args))
	field("ArgsHash", got.ArgsHash, want.ArgsHash)
	field("Summary", got.Summary, want.Summary)
	field("Status", string(got.Status), string(want.Status))
	d = appendTimeDiff(d, "CreatedAt", got.CreatedAt, want.CreatedAt)
	d = appendTimeDiff(d, "ExpiresAt", got.ExpiresAt, want.ExpiresAt)
	d = appendTimePtrDiff(d, "DecidedAt", got.DecidedAt, want.DecidedAt)
	return strings.Join(d, "; ")
}

// decided returns p as DecideProposal reports it after a decision at when.
func decided(p store.Proposal, status store.ProposalStatus, when time.Time) store.Proposal {
	p.Status, p.DecidedAt = status, &when
	return p
}

func testProposalRoundTrip(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	want := newProposal(th.ID, "user-1", 1, 30)
	in := want
	must(t, s.CreateProposal(t.Context(), &in), "CreateProposal")
	if d := diffProposal(in, want); d != "" {
		t.Errorf("CreateProposal changed fields it was given: %s", d)
	}
	got := getProposal(t, s, want.Token)
	if d := diffProposal(got, want); d != "" {
		t.Errorf("GetProposal: %s", d)
	}
	if h := hashArgs(got.Args); h != got.ArgsHash {
		t.Errorf("the stored Args no longer hash to ArgsHash: %s, want %s", h, got.ArgsHash)
	}
}

func testProposalFills(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	p := newProposal(th.ID, "user-1", 0, 30)
	p.Status, p.CreatedAt = "", time.Time{}
	must(t, s.CreateProposal(t.Context(), &p), "CreateProposal")
	if p.Status != store.ProposalPending {
		t.Errorf("CreateProposal set Status %q, want %q", p.Status, store.ProposalPending)
	}
	wantNow(t, "CreatedAt", p.CreatedAt)
	// The filled values are the stored ones (a SQL store must truncate
	// before it reports them).
	if d := diffProposal(getProposal(t, s, p.Token), p); d != "" {
		t.Errorf("GetProposal after filling: %s", d)
	}

	// Pending means undecided: a DecidedAt given at creation is not kept.
	q := newProposal(th.ID, "user-1", 1, 30)
	q.DecidedAt = ptr(at(2))
	must(t, s.CreateProposal(t.Context(), &q), "CreateProposal with DecidedAt")
	if got := getProposal(t, s, q.Token); got.Status != store.ProposalPending || got.DecidedAt != nil {
		t.Errorf("created with DecidedAt: Status %q, DecidedAt %v; want pending, nil",
			got.Status, fmtTimePtr(got.DecidedAt))
	}
}

func testProposalInvalid(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	for _, c := range []struct {
		name  string
		unset func(*store.Proposal)
	}{
		{"no token", func(p *store.Proposal) { p.Token = "" }},
		{"no user", func(p *store.Proposal) { p.UserID = "" }},
		{"no thread", func(p *store.Proposal) { p.ThreadID = "" }},
		{"no tool", func(p *store.Proposal) { p.Tool = "" }},
		{"no expiry", func(p *store.Proposal) { p.ExpiresAt = time.Time{} }},
		{"status applied", func(p *store.Proposal) { p.Status = store.ProposalApplied }},
		{"status declined", func(p *store.Proposal) { p.Status = store.ProposalDeclined }},
		{"status expired", func(p *store.Proposal) { p.Status = store.ProposalExpired }},
		{"status unknown", func(p *store.Proposal) { p.Status = "approved" }},
	} {
		p := newProposal(th.ID, "user-1", 1, 30)
		c.unset(&p)
		wantErr(t, s.CreateProposal(t.Context(), &p), store.ErrInvalid, "CreateProposal with "+c.name)
		if p.Token != "" {
			_, err := s.GetProposal(t.Context(), p.Token)
			wantErr(t, err, store.ErrNotFound, "GetProposal of the proposal rejected for "+c.name)
		}
	}
	if ps := listProposals(t, s, th.ID); len(ps) != 0 {
		t.Errorf("invalid proposals were stored: %d listed", len(ps))
	}
}

func testProposalUnknownThread(t *testing.T, s store.Store) {
	newThread(t, s, "user-1", at(0))
	p := newProposal(uuid.NewString(), "user-1", 1, 30)
	wantErr(t, s.CreateProposal(t.Context(), &p), store.ErrNotFound, "CreateProposal in an unknown thread")
	_, err := s.GetProposal(t.Context(), p.Token)
	wantErr(t, err, store.ErrNotFound, "GetProposal of the rejected proposal")
}

func testProposalTakenToken(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	other := newThread(t, s, "user-2", at(1))
	first := createProposal(t, s, th.ID, 1, 30)
	dup := newProposal(other.ID, "user-2", 2, 40)
	dup.Token = first.Token
	wantErr(t, s.CreateProposal(t.Context(), &dup), store.ErrConflict, "CreateProposal with a taken token")
	if d := diffProposal(getProposal(t, s, first.Token), first); d != "" {
		t.Errorf("the conflicting create changed the first proposal: %s", d)
	}
	if ps := listProposals(t, s, other.ID); len(ps) != 0 {
		t.Errorf("the conflicting proposal was listed in its thread")
	}
}

func testProposalGetUnknown(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	p := createProposal(t, s, th.ID, 1, 30)
	// Tokens are matched exactly: not by prefix, pattern or case.
	for _, token := range []string{"tok-" + uuid.NewString(), "", p.Token[:len(p.Token)-1], p.Token + " ",
		strings.ToUpper(p.Token), "tok-%", `' OR '1'='1`} {
		_, err := s.GetProposal(t.Context(), token)
		wantErr(t, err, store.ErrNotFound, "GetProposal("+short(token)+")")
	}
}

func testProposalDecide(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	applied := createProposal(t, s, th.ID, 1, 30)
	declined := createProposal(t, s, th.ID, 2, 30)
	untouched := createProposal(t, s, th.ID, 3, 30)
	for _, c := range []struct {
		p      store.Proposal
		status store.ProposalStatus
		when   time.Time
	}{
		{applied, store.ProposalApplied, at(5)},
		{declined, store.ProposalDeclined, at(6)},
	} {
		want := decided(c.p, c.status, c.when)
		got, err := s.DecideProposal(t.Context(), c.p.Token, c.status, c.when)
		must(t, err, "DecideProposal "+string(c.status))
		if d := diffProposal(got, want); d != "" {
			t.Errorf("DecideProposal %s returned: %s", c.status, d)
		}
		if d := diffProposal(getProposal(t, s, c.p.Token), want); d != "" {
			t.Errorf("GetProposal after DecideProposal %s: %s", c.status, d)
		}
	}
	if d := diffProposal(getProposal(t, s, untouched.Token), untouched); d != "" {
		t.Errorf("deciding other proposals changed this one: %s", d)
	}
}

// Deciding the same way twice is the double apply the token must prevent.
func testProposalDecideTwice(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	for _, first := range []store.ProposalStatus{store.ProposalApplied, store.ProposalDeclined} {
		p := createProposal(t, s, th.ID, 1, 30)
		_, err := s.DecideProposal(t.Context(), p.Token, first, at(5))
		must(t, err, "DecideProposal")
		want := decided(p, first, at(5))
		for _, again := range []store.ProposalStatus{store.ProposalApplied, store.ProposalDeclined} {
			got, err := s.DecideProposal(t.Context(), p.Token, again, at(6))
			wantErr(t, err, store.ErrConflict, fmt.Sprintf("DecideProposal %s after %s", again, first))
			if d := diffProposal(got, want); d != "" {
				t.Errorf("DecideProposal %s after %s returned, want the current state: %s", again, first, d)
			}
		}
		if d := diffProposal(getProposal(t, s, p.Token), want); d != "" {
			t.Errorf("GetProposal after deciding %s and again: %s", first, d)
		}
	}
}

func testProposalDecideInvalid(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	p := createProposal(t, s, th.ID, 1, 30)
	for _, status := range []store.ProposalStatus{store.ProposalPending, store.ProposalExpired, "", "approved", "APPLIED"} {
		_, err := s.DecideProposal(t.Context(), p.Token, status, at(5))
		wantErr(t, err, store.ErrInvalid, fmt.Sprintf("DecideProposal(%q)", status))
	}
	if d := diffProposal(getProposal(t, s, p.Token), p); d != "" {
		t.Errorf("invalid decisions changed the proposal: %s", d)
	}
}

func testProposalDecideUnknown(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	p := createProposal(t, s, th.ID, 1, 30)
	for _, token := range []string{"tok-" + uuid.NewString(), "", p.Token + "x", "tok-%"} {
		_, err := s.DecideProposal(t.Context(), token, store.ProposalApplied, at(5))
		wantErr(t, err, store.ErrNotFound, "DecideProposal("+short(token)+")")
	}
	if d := diffProposal(getProposal(t, s, p.Token), p); d != "" {
		t.Errorf("deciding unknown tokens changed another proposal: %s", d)
	}
}

func testProposalDecideExpired(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	const expires = 10
	for _, c := range []struct {
		name string
		when time.Time
	}{
		{"at ExpiresAt", at(expires)},
		{"after ExpiresAt", at(expires + 1)},
	} {
		for _, status := range []store.ProposalStatus{store.ProposalApplied, store.ProposalDeclined} {
			op := fmt.Sprintf("DecideProposal %s %s", status, c.name)
			p := createProposal(t, s, th.ID, 1, expires)
			got, err := s.DecideProposal(t.Context(), p.Token, status, c.when)
			wantErr(t, err, store.ErrConflict, op)
			if got.Status != store.ProposalExpired || got.Token != p.Token {
				t.Errorf("%s returned Status %q for token %s, want expired for %s", op, got.Status, short(got.Token), short(p.Token))
			}
			stored := getProposal(t, s, p.Token)
			if stored.Status != store.ProposalExpired || stored.DecidedAt == nil {
				t.Errorf("after %s: Status %q, DecidedAt %v; want expired with a time", op, stored.Status, fmtTimePtr(stored.DecidedAt))
			}
			// Expired is final, like any decision.
			_, err = s.DecideProposal(t.Context(), p.Token, status, at(0))
			wantErr(t, err, store.ErrConflict, op+", then again before ExpiresAt")
			if got := getProposal(t, s, p.Token); got.Status != store.ProposalExpired {
				t.Errorf("deciding an expired proposal moved it to %q", got.Status)
			}
		}
	}

	// One microsecond before ExpiresAt is still in time.
	p := createProposal(t, s, th.ID, 1, expires)
	when := at(expires).Add(-time.Microsecond)
	got, err := s.DecideProposal(t.Context(), p.Token, store.ProposalApplied, when)
	must(t, err, "DecideProposal just before ExpiresAt")
	if d := diffProposal(got, decided(p, store.ProposalApplied, when)); d != "" {
		t.Errorf("DecideProposal just before ExpiresAt returned: %s", d)
	}
}

// testProposalConcurrentDecide races deciders of one token, half approving
// and half declining, several times over: exactly one may win, or a tool
// runs twice (or runs although declined).
func testProposalConcurrentDecide(t *testing.T, s store.Store) {
	const deciders, rounds = 32, 4
	th := newThread(t, s, "user-1", at(0))
	for round := range rounds {
		p := createProposal(t, s, th.ID, 1, 60)
		type result struct {
			status store.ProposalStatus
			when   time.Time
			got    store.Proposal
			err    error
		}
		results := make([]result, deciders)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range results {
			r := &results[i]
			r.status = store.ProposalApplied
			if i%2 == 1 {
				r.status = store.ProposalDeclined
			}
			r.when = at(2).Add(time.Duration(i) * time.Second) // tells the winner's write apart
			wg.Go(func() {
				<-start
				r.got, r.err = s.DecideProposal(t.Context(), p.Token, r.status, r.when)
			})
		}
		close(start)
		wg.Wait()

		var winners []int
		for i, r := range results {
			switch {
			case r.err == nil:
				winners = append(winners, i)
			case !errors.Is(r.err, store.ErrConflict):
				t.Errorf("round %d: decider %d: err = %v, want nil or %v", round, i, r.err, store.ErrConflict)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d of %d concurrent decisions succeeded (deciders %v), want exactly 1",
				round, len(winners), deciders, winners)
		}
		w := results[winners[0]]
		want := decided(p, w.status, w.when)
		if d := diffProposal(w.got, want); d != "" {
			t.Errorf("round %d: the winner got: %s", round, d)
		}
		if d := diffProposal(getProposal(t, s, p.Token), want); d != "" {
			t.Errorf("round %d: the stored proposal is not the winner's decision: %s", round, d)
		}
		for i, r := range results {
			if r.err != nil {
				if d := diffProposal(r.got, want); d != "" {
					t.Errorf("round %d: loser %d got, want the winner's decision: %s", round, i, d)
					break
				}
			}
		}
	}
}

// testProposalReopen pins the undo of a decision that could not be
// carried out: back to pending, as created, and decidable again.
func testProposalReopen(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	for _, c := range []struct {
		first, then store.ProposalStatus
		returned    bool // reopen with the DecidedAt DecideProposal returned, else with the time it was given
	}{
		{store.ProposalApplied, store.ProposalDeclined, true},
		{store.ProposalDeclined, store.ProposalApplied, true},
		{store.ProposalApplied, store.ProposalApplied, false},
	} {
		op := fmt.Sprintf("ReopenProposal after %s", c.first)
		p := createProposal(t, s, th.ID, 1, 30)
		got, err := s.DecideProposal(t.Context(), p.Token, c.first, at(5))
		must(t, err, "DecideProposal "+string(c.first))
		decidedAt := at(5)
		if c.returned {
			if got.DecidedAt == nil {
				t.Fatalf("DecideProposal %s returned no DecidedAt", c.first)
			}
			decidedAt = *got.DecidedAt
		}
		must(t, s.ReopenProposal(t.Context(), p.Token, decidedAt), op)
		if d := diffProposal(getProposal(t, s, p.Token), p); d != "" {
			t.Errorf("GetProposal after %s, want it as created: %s", op, d)
		}
		if ps := listProposals(t, s, th.ID); len(ps) == 0 || diffProposal(ps[len(ps)-1], p) != "" {
			t.Errorf("ListProposals after %s does not list it as created", op)
		}

		// Pending again: decided once more, at another time, either way.
		want := decided(p, c.then, at(7))
		got, err = s.DecideProposal(t.Context(), p.Token, c.then, at(7))
		must(t, err, fmt.Sprintf("DecideProposal %s after %s", c.then, op))
		if d := diffProposal(got, want); d != "" {
			t.Errorf("DecideProposal %s after %s returned: %s", c.then, op, d)
		}
		if d := diffProposal(getProposal(t, s, p.Token), want); d != "" {
			t.Errorf("GetProposal after deciding %s once more: %s", c.then, d)
		}
		// And reopened once more, at its new time only.
		wantErr(t, s.ReopenProposal(t.Context(), p.Token, decidedAt), store.ErrConflict, op+" with the first decision's time")
		must(t, s.ReopenProposal(t.Context(), p.Token, at(7)), op+" a second time")
		if got := getProposal(t, s, p.Token); got.Status != store.ProposalPending || got.DecidedAt != nil {
			t.Errorf("after the second reopen: Status %q, DecidedAt %v; want pending, nil", got.Status, fmtTimePtr(got.DecidedAt))
		}
	}
}

// testProposalReopenOtherTime pins what makes a reopen safe across
// processes: only the decision made at decidedAt can be undone, never a
// later one by someone else.
func testProposalReopenOtherTime(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	p := createProposal(t, s, th.ID, 1, 30)
	_, err := s.DecideProposal(t.Context(), p.Token, store.ProposalApplied, at(5))
	must(t, err, "DecideProposal")
	want := decided(p, store.ProposalApplied, at(5))
	for _, c := range []struct {
		name string
		when time.Time
	}{
		{"a minute later", at(6)},
		{"a minute earlier", at(4)},
		{"a microsecond later", at(5).Add(time.Microsecond)},
		{"a microsecond earlier", at(5).Add(-time.Microsecond)},
		{"the creation time", p.CreatedAt},
		{"the zero time", time.Time{}},
	} {
		wantErr(t, s.ReopenProposal(t.Context(), p.Token, c.when), store.ErrConflict, "ReopenProposal at "+c.name)
	}
	if d := diffProposal(getProposal(t, s, p.Token), want); d != "" {
		t.Errorf("refused reopens changed the proposal: %s", d)
	}
	// The same instant in another zone is the same time.
	must(t, s.ReopenProposal(t.Context(), p.Token, at(5).UTC()), "ReopenProposal at the decision's time in UTC")
}

func testProposalReopenNotDecided(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	pending := createProposal(t, s, th.ID, 1, 30)
	for _, when := range []time.Time{at(5), pending.CreatedAt, time.Time{}} {
		wantErr(t, s.ReopenProposal(t.Context(), pending.Token, when), store.ErrConflict, "ReopenProposal of a pending proposal")
	}
	if d := diffProposal(getProposal(t, s, pending.Token), pending); d != "" {
		t.Errorf("reopening a pending proposal changed it: %s", d)
	}

	// Expired by a late decision, and by the sweep: final, with its time.
	late := createProposal(t, s, th.ID, 1, 5)
	got, err := s.DecideProposal(t.Context(), late.Token, store.ProposalApplied, at(6))
	wantErr(t, err, store.ErrConflict, "DecideProposal after expiry")
	swept := createProposal(t, s, th.ID, 1, 5)
	_, err = s.ExpireProposals(t.Context(), at(8))
	must(t, err, "ExpireProposals")
	for _, p := range []store.Proposal{late, swept} {
		stored := getProposal(t, s, p.Token)
		if stored.Status != store.ProposalExpired || stored.DecidedAt == nil {
			t.Fatalf("Status %q, DecidedAt %v; want expired with a time", stored.Status, fmtTimePtr(stored.DecidedAt))
		}
		for _, when := range []time.Time{*stored.DecidedAt, at(6), at(8)} {
			wantErr(t, s.ReopenProposal(t.Context(), p.Token, when), store.ErrConflict, "ReopenProposal of an expired proposal")
		}
		if d := diffProposal(getProposal(t, s, p.Token), stored); d != "" {
			t.Errorf("reopening an expired proposal changed it: %s", d)
		}
	}
	if got.DecidedAt != nil {
		wantErr(t, s.ReopenProposal(t.Context(), late.Token, *got.DecidedAt), store.ErrConflict,
			"ReopenProposal of an expired proposal with the DecidedAt DecideProposal returned")
	}
}

func testProposalReopenUnknown(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	p := createProposal(t, s, th.ID, 1, 30)
	_, err := s.DecideProposal(t.Context(), p.Token, store.ProposalDeclined, at(5))
	must(t, err, "DecideProposal")
	for _, token := range []string{"tok-" + uuid.NewString(), "", p.Token + "x", strings.ToUpper(p.Token), "tok-%"} {
		wantErr(t, s.ReopenProposal(t.Context(), token, at(5)), store.ErrNotFound, "ReopenProposal("+short(token)+")")
	}
	if d := diffProposal(getProposal(t, s, p.Token), decided(p, store.ProposalDeclined, at(5))); d != "" {
		t.Errorf("reopening unknown tokens changed another proposal: %s", d)
	}
}

// testProposalConcurrentReopen races reopeners of a decision made at at(5)
// against deciders, several times over. Whatever the order, one reopen
// wins (nothing else can move the proposal while it is decided at at(5)),
// and at most one decision wins, after it: two winning decisions would
// run the tool twice.
func testProposalConcurrentReopen(t *testing.T, s store.Store) {
	const reopeners, deciders, rounds = 8, 8, 4
	th := newThread(t, s, "user-1", at(0))
	for round := range rounds {
		p := createProposal(t, s, th.ID, 1, 60)
		_, err := s.DecideProposal(t.Context(), p.Token, store.ProposalApplied, at(5))
		must(t, err, "DecideProposal")

		reopenErrs := make([]error, reopeners)
		type decision struct {
			status store.ProposalStatus
			when   time.Time
			got    store.Proposal
			err    error
		}
		decisions := make([]decision, deciders)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range reopenErrs {
			wg.Go(func() {
				<-start
				reopenErrs[i] = s.ReopenProposal(t.Context(), p.Token, at(5))
			})
		}
		for i := range decisions {
			d := &decisions[i]
			d.status = store.ProposalApplied
			if i%2 == 1 {
				d.status = store.ProposalDeclined
			}
			d.when = at(6).Add(time.Duration(i) * time.Second) // tells the winner's write apart
			wg.Go(func() {
				<-start
				d.got, d.err = s.DecideProposal(t.Context(), p.Token, d.status, d.when)
			})
		}
		close(start)
		wg.Wait()

		reopened := 0
		for i, err := range reopenErrs {
			switch {
			case err == nil:
				reopened++
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("round %d: reopener %d: err = %v, want nil or %v", round, i, err, store.ErrConflict)
			}
		}
		var winners []int
		for i, d := range decisions {
			switch {
			case d.err == nil:
				winners = append(winners, i)
			case !errors.Is(d.err, store.ErrConflict):
				t.Errorf("round %d: decider %d: err = %v, want nil or %v", round, i, d.err, store.ErrConflict)
			}
		}
		if reopened != 1 || len(winners) > 1 {
			t.Fatalf("round %d: %d reopens and %d decisions (deciders %v) succeeded, want 1 and at most 1",
				round, reopened, len(winners), winners)
		}
		want := p // reopened, and no decision came after
		if len(winners) == 1 {
			w := decisions[winners[0]]
			want = decided(p, w.status, w.when)
			if d := diffProposal(w.got, want); d != "" {
				t.Errorf("round %d: the winning decision got: %s", round, d)
			}
		}
		if d := diffProposal(getProposal(t, s, p.Token), want); d != "" {
			t.Errorf("round %d: the stored proposal: %s", round, d)
		}
	}
}

func testProposalList(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	other := newThread(t, s, "user-1", at(1))
	empty := newThread(t, s, "user-1", at(2))
	// Created out of time order: the list is by CreatedAt, oldest first.
	third := createProposal(t, s, th.ID, 3, 30)
	first := createProposal(t, s, th.ID, 1, 30)
	createProposal(t, s, other.ID, 2, 30)
	second := createProposal(t, s, th.ID, 2, 30)
	_, err := s.DecideProposal(t.Context(), second.Token, store.ProposalDeclined, at(4))
	must(t, err, "DecideProposal")
	second = decided(second, store.ProposalDeclined, at(4))

	got := listProposals(t, s, th.ID)
	want := []store.Proposal{first, second, third}
	if len(got) != len(want) {
		t.Fatalf("ListProposals returned %d proposals, want %d", len(got), len(want))
	}
	for i := range want {
		if d := diffProposal(got[i], want[i]); d != "" {
			t.Errorf("ListProposals[%d]: %s", i, d)
		}
	}
	for _, id := range []string{empty.ID, uuid.NewString(), "", "%"} {
		if ps := listProposals(t, s, id); len(ps) != 0 {
			t.Errorf("ListProposals(%s) = %d proposals, want none", short(id), len(ps))
		}
	}
}

func testProposalExpire(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	const cutoff = 10
	past := createProposal(t, s, th.ID, 1, 5)
	atCutoff := createProposal(t, s, th.ID, 1, cutoff) // not after the cutoff: expires
	future := createProposal(t, s, th.ID, 1, cutoff+1)
	applied := createProposal(t, s, th.ID, 1, 5)
	declined := createProposal(t, s, th.ID, 1, 5)
	for _, c := range []struct {
		p      *store.Proposal
		status store.ProposalStatus
	}{{&applied, store.ProposalApplied}, {&declined, store.ProposalDeclined}} {
		_, err := s.DecideProposal(t.Context(), c.p.Token, c.status, at(2))
		must(t, err, "DecideProposal")
		*c.p = decided(*c.p, c.status, at(2))
	}

	n, err := s.ExpireProposals(t.Context(), at(cutoff))
	must(t, err, "ExpireProposals")
	if n != 2 {
		t.Errorf("ExpireProposals = %d, want 2 (the pending ones expiring at or before the cutoff)", n)
	}
	for _, p := range []store.Proposal{past, atCutoff} {
		got := getProposal(t, s, p.Token)
		if got.Status != store.ProposalExpired || got.DecidedAt == nil {
			t.Errorf("expiring at %v: Status %q, DecidedAt %v; want expired with a time",
				p.ExpiresAt, got.Status, fmtTimePtr(got.DecidedAt))
		}
		// The rest of it is as created.
		got.Status, got.DecidedAt = p.Status, p.DecidedAt
		if d := diffProposal(got, p); d != "" {
			t.Errorf("ExpireProposals changed more than Status and DecidedAt: %s", d)
		}
	}
	for _, p := range []store.Proposal{future, applied, declined} {
		if d := diffProposal(getProposal(t, s, p.Token), p); d != "" {
			t.Errorf("ExpireProposals changed a %s proposal expiring at %v: %s", p.Status, p.ExpiresAt, d)
		}
	}
	n, err = s.ExpireProposals(t.Context(), at(cutoff))
	must(t, err, "ExpireProposals again")
	if n != 0 {
		t.Errorf("ExpireProposals again = %d, want 0", n)
	}
	_, err = s.DecideProposal(t.Context(), past.Token, store.ProposalApplied, at(3))
	wantErr(t, err, store.ErrConflict, "DecideProposal of an expired proposal, before its ExpiresAt")
}

func testProposalDeleteThread(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	keep := newThread(t, s, "user-1", at(1))
	gone := []store.Proposal{createProposal(t, s, th.ID, 1, 30), createProposal(t, s, th.ID, 2, 30)}
	_, err := s.DecideProposal(t.Context(), gone[1].Token, store.ProposalApplied, at(3))
	must(t, err, "DecideProposal")
	kept := createProposal(t, s, keep.ID, 1, 30)

	must(t, s.DeleteThread(t.Context(), th.ID), "DeleteThread")
	for _, p := range gone {
		_, err := s.GetProposal(t.Context(), p.Token)
		wantErr(t, err, store.ErrNotFound, "GetProposal of a deleted thread's proposal")
		_, err = s.DecideProposal(t.Context(), p.Token, store.ProposalApplied, at(4))
		wantErr(t, err, store.ErrNotFound, "DecideProposal of a deleted thread's proposal")
		wantErr(t, s.ReopenProposal(t.Context(), p.Token, at(3)), store.ErrNotFound,
			"ReopenProposal of a deleted thread's proposal")
	}
	if ps := listProposals(t, s, th.ID); len(ps) != 0 {
		t.Errorf("ListProposals of the deleted thread = %d proposals, want none", len(ps))
	}
	if n, err := s.ExpireProposals(t.Context(), at(100)); err != nil || n != 1 {
		t.Errorf("ExpireProposals after the delete = %d, %v; want 1 (only the other thread's)", n, err)
	}
	if ps := listProposals(t, s, keep.ID); len(ps) != 1 || ps[0].Token != kept.Token {
		t.Errorf("another thread's proposals after the delete = %d, want its 1", len(ps))
	}
}

func testProposalHostileStrings(t *testing.T, s store.Store) {
	for i, str := range hostileStrings() {
		key := str // tokens and ids are keys; 10 KB ones are not realistic
		if len(key) > 256 {
			key = fmt.Sprint("long key ", i)
		}
		th := newThread(t, s, "user "+key, at(0))
		args, err := json.Marshal(map[string]string{"s": str})
		must(t, err, "json.Marshal")
		p := store.Proposal{Token: "tok " + key, UserID: "user " + key, ThreadID: th.ID, MessageID: key,
			CallID: key, Tool: "tool " + key, Args: args, ArgsHash: str, Summary: str,
			CreatedAt: at(i), ExpiresAt: at(i + 30)}
		must(t, s.CreateProposal(t.Context(), &p), "CreateProposal with "+short(str))
		if d := diffProposal(getProposal(t, s, p.Token), p); d != "" {
			t.Errorf("GetProposal with %s: %s", short(str), d)
		}
		if ps := listProposals(t, s, th.ID); len(ps) != 1 || ps[0].Token != p.Token {
			t.Errorf("ListProposals with %s: %d proposals, want the one", short(str), len(ps))
		}
		got, err := s.DecideProposal(t.Context(), p.Token, store.ProposalDeclined, at(i+1))
		must(t, err, "DecideProposal with "+short(str))
		if d := diffProposal(got, decided(p, store.ProposalDeclined, at(i+1))); d != "" {
			t.Errorf("DecideProposal with %s: %s", short(str), d)
		}
		must(t, s.ReopenProposal(t.Context(), p.Token, at(i+1)), "ReopenProposal with "+short(str))
		if d := diffProposal(getProposal(t, s, p.Token), p); d != "" {
			t.Errorf("GetProposal after ReopenProposal with %s: %s", short(str), d)
		}
	}
}

func testProposalIsolation(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	in := newProposal(th.ID, "user-1", 1, 30)
	in.Args = []byte(proposalArgs) // a backing array of the test's own
	must(t, s.CreateProposal(t.Context(), &in), "CreateProposal")
	want := in
	want.Args = json.RawMessage(proposalArgs)
	for i := range in.Args {
		in.Args[i] = ' '
	}
	in.Summary = "scribbled"
	if d := diffProposal(getProposal(t, s, want.Token), want); d != "" {
		t.Errorf("mutating the created proposal changed the store: %s", d)
	}

	got, err := s.DecideProposal(t.Context(), in.Token, store.ProposalApplied, at(5))
	must(t, err, "DecideProposal")
	want = decided(want, store.ProposalApplied, at(5))
	scribbleProposal := func(p *store.Proposal) {
		for i := range p.Args {
			p.Args[i] = ' '
		}
		if p.DecidedAt != nil {
			*p.DecidedAt = at(50)
		}
	}
	scribbleProposal(&got)
	g := getProposal(t, s, want.Token)
	scribbleProposal(&g)
	for _, p := range listProposals(t, s, th.ID) {
		scribbleProposal(&p)
	}
	if d := diffProposal(getProposal(t, s, want.Token), want); d != "" {
		t.Errorf("mutating returned proposals changed the store: %s", d)
	}
}

func testProposalCanceledContext(t *testing.T, s store.Store) {
	th := newThread(t, s, "user-1", at(0))
	p := createProposal(t, s, th.ID, 1, 5)
	decidedP := createProposal(t, s, th.ID, 1, 5)
	_, err := s.DecideProposal(t.Context(), decidedP.Token, store.ProposalApplied, at(2))
	must(t, err, "DecideProposal")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()

	fresh := newProposal(th.ID, "user-1", 2, 30)
	calls := []namedCall{
		{"CreateProposal", func() error { return s.CreateProposal(ctx, &fresh) }},
		{"GetProposal", func() error { _, err := s.GetProposal(ctx, p.Token); return err }},
		{"DecideProposal", func() error {
			_, err := s.DecideProposal(ctx, p.Token, store.ProposalApplied, at(2))
			return err
		}},
		{"ReopenProposal", func() error { return s.ReopenProposal(ctx, decidedP.Token, at(2)) }},
		{"ListProposals", func() error { _, err := s.ListProposals(ctx, th.ID); return err }},
		{"ExpireProposals", func() error { _, err := s.ExpireProposals(ctx, at(10)); return err }},
	}
	wantCanceled(t, calls)

	_, err = s.GetProposal(t.Context(), fresh.Token)
	wantErr(t, err, store.ErrNotFound, "GetProposal of the proposal created with a canceled context")
	if d := diffProposal(getProposal(t, s, p.Token), p); d != "" {
		t.Errorf("calls with a canceled context changed the proposal: %s", d)
	}
	if d := diffProposal(getProposal(t, s, decidedP.Token), decided(decidedP, store.ProposalApplied, at(2))); d != "" {
		t.Errorf("calls with a canceled context changed the decided proposal: %s", d)
	}
}
