package store

import "context"

// ThreadBatch reads many threads in one round trip. It is optional: the
// Engine's one cancel watcher per process uses it, when the Store has it,
// to check all of its running turns' threads with one read instead of one
// read per turn.
//
// Implementations must be safe for concurrent use.
type ThreadBatch interface {
	// GetThreads returns the threads among ids that exist, keyed by id, as
	// GetThread would return each; a missing (or deleted) thread is absent
	// from the map, not an error. Duplicate ids are allowed; an empty ids
	// returns an empty map.
	GetThreads(ctx context.Context, ids []string) (map[string]Thread, error)
}

// ThreadWatcher pushes changes of threads, so a process need not poll to
// learn of a cancel or a newer message requested by another process
// sharing the store. It is optional, and a Store may implement it but not
// support it for its database (store/sqlstore supports it on PostgreSQL
// only), in which case WatchThreads returns an error wrapping
// errors.ErrUnsupported at once.
//
// Implementations must be safe for concurrent use.
type ThreadWatcher interface {
	// WatchThreads calls changed, from one goroutine, with the id of each
	// thread whose cancel was requested, that got a new message or that
	// was deleted, by any process sharing the store, until ctx ends; it
	// then returns ctx's error. changed("") means any thread may have
	// changed unseen: WatchThreads calls it each time it (re)connects,
	// after which it sees every change again. It may call changed for a
	// thread that did not change (a cleared cancel, another store sharing
	// the database). It reconnects on its own after losing the
	// connection, so it returns before ctx ends only when watching is not
	// supported (errors.ErrUnsupported).
	WatchThreads(ctx context.Context, changed func(threadID string)) error
}
