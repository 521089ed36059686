package storetest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/parleyhq/parley/store"
	"github.com/parleyhq/parley/store/memstore"
	"github.com/parleyhq/parley/store/storetest"
)

// A store that implements only store.Store passes the suite: the cases of
// each optional interface skip instead of failing, and the others run.
func TestOptionalGroupsSkipWithoutTheirInterface(t *testing.T) {
	optional := []string{"Feedback", "SystemPrompts", "Preferences", "AutoApprovals", "ThreadBatch", "ThreadWatcher", "Relay"} // groups of optional interfaces
	var (
		mu               sync.Mutex
		skipped          = map[string]int{}
		ran              int
		notSkipped, gone []string
	)
	storetest.Run(t, func(t *testing.T) store.Store {
		t.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			group := ""
			for _, g := range optional {
				if strings.Contains(t.Name(), "/"+g+"/") {
					group = g
				}
			}
			switch {
			case group != "" && t.Skipped():
				skipped[group]++
			case group != "":
				notSkipped = append(notSkipped, t.Name())
			case t.Skipped():
				gone = append(gone, t.Name())
			default:
				ran++
			}
		})
		return struct{ store.Store }{memstore.New()} // hides the optional interfaces
	})
	bare := any(struct{ store.Store }{})
	if _, ok := bare.(store.FeedbackStore); ok {
		t.Fatal("the wrapper implements store.FeedbackStore; the test means nothing")
	}
	if _, ok := bare.(store.SystemPrompts); ok {
		t.Fatal("the wrapper implements store.SystemPrompts; the test means nothing")
	}
	if _, ok := bare.(store.Preferences); ok {
		t.Fatal("the wrapper implements store.Preferences; the test means nothing")
	}
	if _, ok := bare.(store.AutoApprovals); ok {
		t.Fatal("the wrapper implements store.AutoApprovals; the test means nothing")
	}
	for _, g := range optional {
		if skipped[g] == 0 {
			t.Errorf("%s cases: none skipped", g)
		}
	}
	if len(notSkipped) > 0 {
		t.Errorf("cases of optional interfaces that did not skip: %v", notSkipped)
	}
	if ran == 0 || len(gone) > 0 {
		t.Errorf("other cases: %d ran, these skipped: %v", ran, gone)
	}
}
