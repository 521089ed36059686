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
// an optional interface skip instead of failing, and the others run.
func TestOptionalGroupsSkipWithoutTheirInterface(t *testing.T) {
	var (
		mu               sync.Mutex
		skipped, ran     int
		notSkipped, gone []string
	)
	storetest.Run(t, func(t *testing.T) store.Store {
		t.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			switch feedback := strings.Contains(t.Name(), "/Feedback/"); {
			case feedback && t.Skipped():
				skipped++
			case feedback:
				notSkipped = append(notSkipped, t.Name())
			case t.Skipped():
				gone = append(gone, t.Name())
			default:
				ran++
			}
		})
		return struct{ store.Store }{memstore.New()} // hides FeedbackStore
	})
	if _, ok := any(struct{ store.Store }{}).(store.FeedbackStore); ok {
		t.Fatal("the wrapper implements store.FeedbackStore; the test means nothing")
	}
	if skipped == 0 || len(notSkipped) > 0 {
		t.Errorf("Feedback cases: %d skipped, these not: %v", skipped, notSkipped)
	}
	if ran == 0 || len(gone) > 0 {
		t.Errorf("other cases: %d ran, these skipped: %v", ran, gone)
	}
}
