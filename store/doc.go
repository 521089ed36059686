// Package store defines how Parley persists conversations: Threads and their
// Messages. A Store is the union of those interfaces.
//
// store/memstore is the in-memory implementation; store/storetest is the
// conformance suite every implementation passes:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return mystore.New(...) })
//	}
//
// # Errors
//
// Methods return ErrNotFound, ErrConflict or ErrInvalid (possibly wrapped)
// for the conditions their documentation names; callers use errors.Is.
// Other errors are infrastructure failures.
//
// # Concurrency
//
// Implementations must be safe for concurrent use. Values are copied at the
// boundary: a caller mutating a returned Message must not change the store.
package store
