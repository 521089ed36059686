package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/store"
)

// batchCases run only on a store that implements store.ThreadBatch.
var batchCases = withCapability("store.ThreadBatch", []capabilityCase[store.ThreadBatch]{
	{"GetThreadsReturnsTheExistingOnesAsGetThreadDoes", testGetThreads},
	{"GetThreadsOfNoIDsIsEmpty", testGetThreadsEmpty},
	{"GetThreadsOfManyIDs", testGetThreadsMany},
	{"CanceledContextFailsGetThreads", testGetThreadsCanceled},
})

// watchCases run only on a store that implements store.ThreadWatcher, and
// skip when it does not support watching its database.
var watchCases = withCapability("store.ThreadWatcher", []capabilityCase[store.ThreadWatcher]{
	{"WatchSeesCancelNewMessageAndDeleteAndEndsWithContext", testWatchThreads},
})

func testGetThreads(t *testing.T, s store.Store, b store.ThreadBatch) {
	a := newThread(t, s, "alice", at(1))
	c := newThread(t, s, "carol", at(2))
	appendTurn(t, s, a.ID, "q")
	must(t, s.RequestCancel(t.Context(), c.ID, at(3)), "RequestCancel")
	gone := newThread(t, s, "bob", at(4))
	must(t, s.DeleteThread(t.Context(), gone.ID), "DeleteThread")
	got, err := b.GetThreads(t.Context(), []string{a.ID, gone.ID, c.ID, "no-such-thread", a.ID})
	must(t, err, "GetThreads")
	if len(got) != 2 {
		t.Fatalf("GetThreads returned %d threads, want 2 (the existing ones): %+v", len(got), got)
	}
	for _, id := range []string{a.ID, c.ID} {
		if d := diffThread(got[id], getThread(t, s, id)); d != "" {
			t.Errorf("GetThreads[%s] differs from GetThread: %s", id, d)
		}
	}
	if got[a.ID].LastSeq != 2 || got[c.ID].CancelRequestedAt == nil {
		t.Errorf("GetThreads: LastSeq %d, cancel %v; want 2 and the request", got[a.ID].LastSeq, got[c.ID].CancelRequestedAt)
	}
}

func testGetThreadsEmpty(t *testing.T, _ store.Store, b store.ThreadBatch) {
	got, err := b.GetThreads(t.Context(), nil)
	if err != nil || len(got) != 0 {
		t.Errorf("GetThreads(nil) = %v, %v; want empty", got, err)
	}
}

func testGetThreadsMany(t *testing.T, s store.Store, b store.ThreadBatch) {
	var ids []string
	for range 3 {
		ids = append(ids, newThread(t, s, "alice", at(1)).ID)
	}
	for range 1200 { // past any one query's bound on parameters
		ids = append(ids, "missing")
	}
	ids = append(ids, ids[0])
	got, err := b.GetThreads(t.Context(), ids)
	if err != nil || len(got) != 3 {
		t.Errorf("GetThreads of %d ids = %d threads, %v; want 3", len(ids), len(got), err)
	}
}

func testGetThreadsCanceled(t *testing.T, s store.Store, b store.ThreadBatch) {
	th := newThread(t, s, "alice", at(1))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := b.GetThreads(ctx, []string{th.ID}); !errors.Is(err, context.Canceled) {
		t.Errorf("GetThreads on a canceled context: %v, want context.Canceled", err)
	}
}

// watchWait bounds each wait for a notification: generous, it only keeps a
// broken store from hanging the suite.
const watchWait = 30 * time.Second

// watchLog collects what WatchThreads reports.
type watchLog struct {
	mu   sync.Mutex
	seen map[string]bool
	note chan struct{}
}

func (w *watchLog) changed(id string) {
	w.mu.Lock()
	w.seen[id] = true
	w.mu.Unlock()
	select {
	case w.note <- struct{}{}:
	default:
	}
}

// wait waits until id is reported, or the watch ends (returning its error).
func (w *watchLog) wait(t *testing.T, id, what string, ended <-chan error) {
	t.Helper()
	timeout := time.After(watchWait)
	for {
		w.mu.Lock()
		ok := w.seen[id]
		w.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-w.note:
		case err := <-ended:
			if errors.Is(err, errors.ErrUnsupported) && id == "" {
				t.Skipf("the store does not support watching: %v", err)
			}
			t.Fatalf("WatchThreads returned %v before reporting %s", err, what)
		case <-timeout:
			t.Fatalf("WatchThreads did not report %s within %v", what, watchWait)
		}
	}
}

func testWatchThreads(t *testing.T, s store.Store, wt store.ThreadWatcher) {
	cancelled := newThread(t, s, "alice", at(1))
	appended := newThread(t, s, "alice", at(2))
	deleted := newThread(t, s, "alice", at(3))
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	w := &watchLog{seen: map[string]bool{}, note: make(chan struct{}, 1)}
	ended := make(chan error, 1)
	go func() { ended <- wt.WatchThreads(ctx, w.changed) }()
	w.wait(t, "", "its connection (\"\")", ended)
	must(t, s.RequestCancel(t.Context(), cancelled.ID, at(4)), "RequestCancel")
	w.wait(t, cancelled.ID, "a cancel request", ended)
	appendTurn(t, s, appended.ID, "q")
	w.wait(t, appended.ID, "a new message", ended)
	must(t, s.DeleteThread(t.Context(), deleted.ID), "DeleteThread")
	w.wait(t, deleted.ID, "a deletion", ended)
	stop()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("WatchThreads returned %v when its context ended, want context.Canceled", err)
		}
	case <-time.After(watchWait):
		t.Fatalf("WatchThreads did not return within %v of its context ending", watchWait)
	}
}
