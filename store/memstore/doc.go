// Package memstore is an in-memory store.Store: for tests, examples and
// single-process deployments that need no history across restarts. It is a
// full implementation and passes the store/storetest conformance suite.
//
// # Concurrency
//
// A Store is safe for concurrent use. One sync.RWMutex guards it: reads
// share it, writes hold it alone, so AppendTurn assigns Seq without gaps or
// duplicates. A Store lives in one process, so a cancel requested through
// it is seen only by that process, and its store.Relay reaches only the
// subscribers of that process (Publish delivers before it returns).
//
// # Copies
//
// Values are deep-copied on the way in and on the way out: the Blocks slice,
// each Block's Data and Meta, ModelMessages, a proposal's Args and the time
// pointers (a Feedback holds nothing shared, so it is copied as a value).
// Mutating a value passed in or returned never changes the store. Every
// string and raw JSON value is kept byte for byte: U+0000, lone surrogate
// escapes and bytes that are not UTF-8 included.
//
// # Choices the contract leaves open
//
// RenameThread sets UpdatedAt to now, since the title is part of the
// thread; ArchiveThread, RequestCancel, ClearCancel and UpdateMessage do
// not. Threads updated at the same instant list by descending ID. A later
// RequestCancel replaces the earlier time. AppendTurn fills an empty
// assistant ThreadID from the user message, rejects a different one with
// store.ErrInvalid and a message ID already taken with store.ErrConflict,
// and changes the caller's messages only when it succeeds. It writes a
// new user message's Replaces but not the assistant's, and never takes a
// SupersededAt from the caller: new messages are the current branch.
//
// A proposal's DecidedAt is the time it left pending: the at of
// DecideProposal, also when that finds it expired, or the before of
// ExpireProposals. CreateProposal ignores a DecidedAt it is given.
// ReopenProposal matches decidedAt with time.Time.Equal, to the nanosecond.
// Proposals created at the same instant list in creation order.
//
// # Feedback
//
// A Store is also a store.FeedbackStore. Feedback is kept with the thread
// of the message it rates, so DeleteThread takes it along; SetFeedback
// fills the caller's value (ThreadID, CreatedAt, UpdatedAt) only when it
// stores it, and ListFeedback of an unknown thread is empty, not an error.
//
// # System prompts
//
// A Store is also a store.SystemPrompts. The write lock makes activation
// one step, so at most one prompt is active at any time. Prompts created
// at the same instant list by descending ID.
//
// # Preferences
//
// A Store is also a store.Preferences: one model choice per user, kept
// as a value under the write lock, so of concurrent sets the last to take
// the lock is the one stored, whole. And a store.AutoApprovals: each
// user's standing approvals, kept the same way.
package memstore
