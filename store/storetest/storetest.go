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
		{"Isolation", isolationCases},
		{"Strings", stringCases},
		{"Context", contextCases},
		{"Concurrency", concurrencyCases},
		{"Audit", auditCases},
		{"Proposals", proposalCases},
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
