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
// # Optional interfaces
//
// A Store may implement more than Store: FeedbackStore keeps users'
// ratings of assistant messages (one per user per message, changeable,
// deleted with the thread); SystemPrompts keeps operators' instructions,
// at most one of them active; Preferences keeps each user's model choice
// (one per user, replaced by the next). The Engine checks with a type
// assertion, as io/fs does for fs.ReadFileFS, so a Store without them is
// still a Store. ThreadBatch (many threads in one read) and ThreadWatcher
// (thread changes pushed from other processes) serve the Engine's one
// watcher of its running turns. Relay (short messages between processes)
// lets assistant/httpapi follow, on one instance, a stream running on
// another. memstore and sqlstore implement the first three, ThreadBatch
// and Relay (memstore within its process; sqlstore on PostgreSQL only);
// sqlstore also implements ThreadWatcher, which it supports on PostgreSQL
// only. storetest checks each when it is
// there and skips its cases, naming it, when it is not.
//
// # Errors
//
// Methods return ErrNotFound, ErrConflict or ErrInvalid (possibly wrapped)
// for the conditions their documentation names; callers use errors.Is.
// Other errors are infrastructure failures.
//
// # Text
//
// A Store keeps any string a model can produce. Free text (a thread's
// Title and Summary, a message's Content and Blocks, a proposal's CallID
// and Summary, a Feedback's Category and Comment, a SystemPrompt's Name
// and Text) reads back exactly when it is valid UTF-8, whatever it
// holds: U+0000, other control characters, U+FFFD, U+2028 and U+2029,
// noncharacters, astral characters, lines of any length. So does raw JSON
// (ModelMessages, Block.Data, AuditEvent.Data, Proposal.Args) that holds
// the escape \u0000 or lone surrogate escapes such as \ud800. A store may
// re-encode raw JSON if it keeps the value encoding/json decodes from it
// (which reads \ud800 as U+FFFD), except Proposal.Args, which are kept
// byte for byte because ArgsHash hashes their bytes.
//
// Providers decode JSON, so the strings they produce are valid UTF-8. A
// string that is not is still never an error: it reads back as written or
// with each byte that is not part of valid UTF-8 replaced by U+FFFD, as
// encoding/json and a range loop replace them. Proposal.Args are the
// exception again: byte for byte, UTF-8 or not.
//
// Keys and names (ids, a message's Replaces and Source, OwnerID, ActorID, a
// Feedback's UserID, a SystemPrompt's CreatedBy, a ModelPreference's
// UserID, Connection and Model, Kind, Tool, statuses, ratings and guard
// verdicts) are chosen by the host and the Engine, not by a model; a
// store may refuse one it cannot hold with ErrInvalid (store/sqlstore
// refuses a NUL in one on PostgreSQL).
//
// # Concurrency
//
// Implementations must be safe for concurrent use. Values are copied at the
// boundary: a caller mutating a returned Message must not change the store.
package store
