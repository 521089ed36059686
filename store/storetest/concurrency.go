package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/parleyhq/parley/blocks"
	"github.com/parleyhq/parley/store"
)

var concurrencyCases = []testCase{
	{"ConcurrentAppendTurnsGetUniqueGapFreeSeqs", testConcurrentAppend},
	{"ConcurrentConditionalAppendsHaveExactlyOneWinner", testConcurrentConditionalAppend},
	{"ConcurrentReadsAndUpdatesSeeWholeValues", testConcurrentReadWrite},
	{"ConcurrentReplacementsOfOneMessageHaveExactlyOneWinner", testConcurrentReplace},
	{"ConcurrentSetSummariesHaveExactlyOneWinner", testConcurrentSetSummary},
}

// testConcurrentReplace races edits of one user message, as two browser
// tabs (or two instances) submit them: exactly one is written, the others
// are ErrConflict and write nothing, and the winner's turn is the only
// current one after the replaced message.
func testConcurrentReplace(t *testing.T, s store.Store) {
	const n = 16
	th, msgs := threadWithTurns(t, s, "user-1", 2)
	replaced := msgs[2]
	type turn struct{ u, a *store.Message }
	turns := make([]turn, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		u, a := newTurn(th.ID, fmt.Sprint("edit ", i))
		u.Replaces = replaced.ID
		turns[i] = turn{u, a}
		wg.Go(func() {
			<-start
			errs[i] = s.AppendTurn(t.Context(), u, a)
		})
	}
	close(start)
	wg.Wait()

	var winners []int
	for i, err := range errs {
		switch {
		case err == nil:
			winners = append(winners, i)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("edit %d: err = %v, want nil or %v", i, err, store.ErrConflict)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d of %d concurrent edits of one message succeeded (edits %v), want exactly 1", len(winners), n, winners)
	}
	w := turns[winners[0]]
	ms := listMessages(t, s, th.ID)
	if len(ms) != 6 {
		t.Fatalf("ListMessages = %d messages, want 6 (the thread's 4 and the winner's 2)", len(ms))
	}
	for _, m := range ms {
		current := m.Seq < replaced.Seq || m.ID == w.u.ID || m.ID == w.a.ID
		if (m.SupersededAt == nil) != current {
			t.Errorf("message %d (%s): SupersededAt = %v, want current %v", m.Seq, m.ID, fmtTimePtr(m.SupersededAt), current)
		}
	}
	if w.u.Seq != 5 || w.a.Seq != 6 {
		t.Errorf("the winning edit got Seq %d, %d; want 5, 6", w.u.Seq, w.a.Seq)
	}
}

// testConcurrentSetSummary races compactions of one thread that all read
// SummaryThrough 0: exactly one summary is stored, whole.
func testConcurrentSetSummary(t *testing.T, s store.Store) {
	const n = 16
	th, _ := threadWithTurns(t, s, "user-1", 2)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = s.SetSummary(t.Context(), th.ID, fmt.Sprint("summary ", i), 1+i%4, 0)
		})
	}
	close(start)
	wg.Wait()

	var winners []int
	for i, err := range errs {
		switch {
		case err == nil:
			winners = append(winners, i)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("SetSummary %d: err = %v, want nil or %v", i, err, store.ErrConflict)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d of %d concurrent SetSummary calls over 0 succeeded (%v), want exactly 1", len(winners), n, winners)
	}
	w := winners[0]
	wantSummary(t, s, th.ID, "after the race", fmt.Sprint("summary ", w), 1+w%4)
}

// testConcurrentConditionalAppend races turns that all answer the thread's
// last turn (the same user.Seq), several times over, starting from an empty
// thread: exactly one may be written, or the turn is answered twice.
func testConcurrentConditionalAppend(t *testing.T, s store.Store) {
	const n, rounds = 16, 4
	th := newThread(t, s, "user-1", at(0))
	var want []string // message ids in Seq order
	for round := range rounds {
		seq := 2*round + 1
		type turn struct{ u, a *store.Message }
		turns := make([]turn, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			u, a := newTurn(th.ID, fmt.Sprint("round ", round, " turn ", i))
			u.Seq = seq
			turns[i] = turn{u, a}
			wg.Go(func() {
				<-start
				errs[i] = s.AppendTurn(t.Context(), u, a)
			})
		}
		close(start)
		wg.Wait()

		var winners []int
		for i, err := range errs {
			switch {
			case err == nil:
				winners = append(winners, i)
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("round %d: AppendTurn %d: err = %v, want nil or %v", round, i, err, store.ErrConflict)
			}
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d of %d conditional appends at Seq %d succeeded (turns %v), want exactly 1",
				round, len(winners), n, seq, winners)
		}
		w := turns[winners[0]]
		if w.u.Seq != seq || w.a.Seq != seq+1 {
			t.Errorf("round %d: the winner got Seq %d, %d, want %d, %d", round, w.u.Seq, w.a.Seq, seq, seq+1)
		}
		want = append(want, w.u.ID, w.a.ID)
		if got := getThread(t, s, th.ID).LastSeq; got != seq+1 {
			t.Errorf("round %d: LastSeq = %d, want %d", round, got, seq+1)
		}
	}
	ms := listMessages(t, s, th.ID)
	if len(ms) != len(want) {
		t.Fatalf("ListMessages returned %d messages, want %d (one turn per round)", len(ms), len(want))
	}
	for i, m := range ms {
		if m.ID != want[i] || m.Seq != i+1 {
			t.Errorf("ListMessages[%d] = %s seq %d, want the winner's %s seq %d", i, m.ID, m.Seq, want[i], i+1)
		}
	}
}

func testConcurrentAppend(t *testing.T, s store.Store) {
	const n = 16
	th := newThread(t, s, "user-1", at(0))
	type turn struct{ u, a *store.Message }
	turns := make([]turn, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		u, a := newTurn(th.ID, fmt.Sprint("turn ", i))
		turns[i] = turn{u, a}
		wg.Go(func() {
			<-start
			errs[i] = s.AppendTurn(t.Context(), u, a)
		})
	}
	close(start)
	wg.Wait()

	for i, err := range errs {
		if err != nil {
			t.Errorf("AppendTurn %d: %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	seen := map[int]bool{}
	for i, tr := range turns {
		if tr.u.Seq%2 != 1 || tr.a.Seq != tr.u.Seq+1 {
			t.Errorf("turn %d got Seq %d, %d, want an odd Seq and the next one", i, tr.u.Seq, tr.a.Seq)
		}
		for _, seq := range []int{tr.u.Seq, tr.a.Seq} {
			if seen[seq] {
				t.Errorf("Seq %d assigned twice", seq)
			}
			seen[seq] = true
		}
	}
	byID := map[string]*store.Message{}
	for _, tr := range turns {
		byID[tr.u.ID], byID[tr.a.ID] = tr.u, tr.a
	}
	ms := listMessages(t, s, th.ID)
	if len(ms) != 2*n {
		t.Fatalf("ListMessages returned %d messages, want %d", len(ms), 2*n)
	}
	for i, m := range ms {
		if m.Seq != i+1 {
			t.Errorf("ListMessages[%d].Seq = %d, want %d", i, m.Seq, i+1)
		}
		if in, ok := byID[m.ID]; !ok || in.Seq != m.Seq {
			t.Errorf("ListMessages[%d] = %s (seq %d) was not reported by AppendTurn with that Seq", i, m.ID, m.Seq)
		}
	}
}

// testConcurrentReadWrite races readers against writers of one message. Run
// under -race it finds unsynchronized stores; without, it still finds torn
// values: every read must be one of the written states, whole.
func testConcurrentReadWrite(t *testing.T, s store.Store) {
	const writers, readers, rounds = 4, 4, 25
	th := newThread(t, s, "user-1", at(0))
	_, a := appendTurn(t, s, th.ID, "q")

	// State k: k blocks whose content names k, and k input tokens.
	state := func(k int) store.Message {
		m := cloneMessage(a)
		m.Blocks = nil
		for range k {
			m.Blocks = append(m.Blocks, blocks.Block{Kind: blocks.Markdown, Content: fmt.Sprint("state ", k)})
		}
		m.InputTokens = int64(k)
		m.UpdatedAt = at(k)
		return m
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				m := state(1 + (w*rounds+r)%5)
				if err := s.UpdateMessage(t.Context(), &m); err != nil {
					t.Errorf("UpdateMessage: %v", err)
					return
				}
			}
		})
	}
	check := func(m store.Message) {
		k := int(m.InputTokens)
		if k == 0 { // not written yet
			return
		}
		if d := diffMessage(m, state(k)); d != "" {
			t.Errorf("read a torn message: %s", d)
		}
	}
	for range readers {
		wg.Go(func() {
			for range rounds {
				m, err := s.GetMessage(t.Context(), a.ID)
				if err != nil {
					t.Errorf("GetMessage: %v", err)
					return
				}
				check(m)
				ms, err := s.ListMessages(t.Context(), th.ID)
				if err != nil || len(ms) != 2 {
					t.Errorf("ListMessages = %d messages, %v; want 2", len(ms), err)
					return
				}
				check(ms[1])
				if _, err := s.ListThreads(t.Context(), "user-1", store.ListOptions{}); err != nil {
					t.Errorf("ListThreads: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}
