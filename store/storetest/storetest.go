package storetest

import (
	"testing"

	"github.com/parleyhq/parley/store"
)

// Run runs the conformance suite against the stores newStore returns. Every
// subtest calls newStore once and gets a store of its own, which must be
// empty: the suite asserts on everything a store lists. newStore may use t
// for cleanup (t.Cleanup) and fail it (t.Fatal) if the store cannot be made.
//
// Subtests run sequentially, so a newStore that shares one database among
// them only has to hand out an empty one each time.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	groups := []struct {
		name  string
		cases []testCase
	}{
		{"Threads", threadCases},
		{"ListThreads", listCases},
		{"Messages", messageCases},
		{"Summaries", summaryCases},
		{"Edits", editCases},
		{"Sources", sourceCases},
		{"Isolation", isolationCases},
		{"Strings", stringCases},
		{"Context", contextCases},
		{"Concurrency", concurrencyCases},
		{"Audit", auditCases},
		{"Proposals", proposalCases},
		{"Feedback", feedbackCases},
		{"SystemPrompts", promptCases},
		{"Preferences", preferenceCases},
		{"AutoApprovals", autoApprovalCases},
		{"ThreadBatch", batchCases},
		{"ThreadWatcher", watchCases},
		{"Relay", relayCases},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					s := newStore(t)
					if s == nil {
						t.Fatal("newStore returned nil")
					}
					c.run(t, s)
				})
			}
		})
	}
}

type testCase struct {
	name string
	run  func(t *testing.T, s store.Store)
}

// capabilityCase is a case of a group that needs an optional interface C
// (such as store.FeedbackStore) besides store.Store.
type capabilityCase[C any] struct {
	name string
	run  func(t *testing.T, s store.Store, c C)
}

// withCapability turns the cases of an optional interface, named name, into
// ordinary cases that skip, naming the interface, when the store under
// test does not implement it.
func withCapability[C any](name string, cases []capabilityCase[C]) []testCase {
	out := make([]testCase, len(cases))
	for i, c := range cases {
		out[i] = testCase{c.name, func(t *testing.T, s store.Store) {
			impl, ok := s.(C)
			if !ok {
				t.Skipf("the store does not implement %s", name)
			}
			c.run(t, s, impl)
		}}
	}
	return out
}
