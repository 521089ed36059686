// Package sqlstore is a store.Store over database/sql, for SQLite and
// PostgreSQL: the durable store. It takes the host's *sql.DB, which the host
// opens, tunes and closes, and passes the store/storetest conformance suite
// on both dialects.
//
//	db, err := sql.Open("sqlite", "file:parley.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
//	...
//	s, err := sqlstore.New(db, sqlstore.Options{})
//	...
//	if err := s.Migrate(ctx); err != nil { ... } // once, at start
//
// Its tables are named parley_threads, parley_messages, parley_proposals,
// parley_feedback, parley_system_prompts, parley_model_preferences,
// parley_auto_approvals, parley_audit and parley_schema_migrations. A Store
// is also a store.FeedbackStore, a store.SystemPrompts, a
// store.Preferences, a store.AutoApprovals, a store.ThreadBatch and a
// store.ThreadWatcher (on PostgreSQL: triggers NOTIFY the channel
// parley_threads with a thread's id when its cancel request or last message
// changes or it is deleted, and WatchThreads LISTENs on one connection of
// the pool while it runs; give the pool one connection more for it), and a
// store.Relay (on PostgreSQL: Publish is pg_notify on the channel
// parley_relay, and the Store's subscriptions share one LISTEN connection
// of the pool while there are any: one connection more again). NOTIFY
// channels belong to the database, not a schema: Stores in two schemas of
// one database hear each other's relay and watch notifications (harmless
// to correctness, as topics and thread ids are never shared).
//
// # Dialects
//
// New detects the dialect from the driver: modernc.org/sqlite (driver name
// "sqlite"; pure Go, no cgo: the embedded default) is SQLite,
// github.com/jackc/pgx/v5/stdlib ("pgx") is PostgreSQL. Another driver for
// either database needs Options.Dialect; those two are the ones tested.
// The package imports no driver: the host links the one it opens (it does
// import pgx's core package, for WatchThreads' LISTEN on a pgx connection). It needs
// PostgreSQL 11 or later, and SQLite 3.37 or later (UPDATE ... RETURNING,
// STRICT tables), which modernc.org/sqlite bundles.
//
// Ids are text on both (callers may choose ids that are not UUIDs; a
// malformed id is simply not found). JSON (blocks, model messages, guard
// categories, audit data, a proposal's Args) is text on both, kept as
// given: byte for byte, which Args need, since ArgsHash hashes their bytes.
// Every value is bound as a parameter; no SQL is built from input.
//
// On SQLite, open the database with a busy timeout (as above): several
// connections of the pool, or several processes, then wait for one
// another's writes instead of failing with SQLITE_BUSY. WAL lets readers go
// on while one connection writes. An in-memory database (":memory:") is a
// separate database per connection, so give its pool one connection that
// never expires (SetMaxOpenConns(1), SetConnMaxLifetime(0)); it is for
// tests.
//
// # Text
//
// Every string a model can produce is kept exactly, on both dialects: a
// thread's title and summary, a message's content, blocks and model
// messages, a proposal's call id, Args and summary, feedback's category
// and comment, a system prompt's name and text, audit data. That includes
// U+0000,
// raw in a string or as the JSON escape \u0000, and lone surrogate escapes
// such as \ud800, both of which jsonb refuses (that is why JSON is text,
// not jsonb). Blocks and guard categories are stored in their JSON form,
// so bytes in their strings that are not UTF-8 come back as U+FFFD, as
// encoding/json writes them; every other string and JSON value is kept
// byte for byte, UTF-8 or not.
//
// SQLite's TEXT holds any bytes, so values are stored as they are.
// PostgreSQL text holds neither 0x00 nor bytes that are not UTF-8, so there
// free text and JSON are stored escaped, with U+0001 as the escape
// character: U+0000 is written U+0001 '0', U+0001 is U+0001 '1', and a
// byte that is not UTF-8 is U+0001 'x' and its two lowercase hex digits.
// The escape is undone on every read, is exact for every string, and
// leaves any text without U+0000, U+0001 or invalid bytes unchanged, JSON
// (which escapes control characters) included: a host reading the tables
// directly sees plain text and JSON, and can cast a JSON column to json or
// jsonb (jsonb refusing the rows that hold \u0000). The database must use
// the UTF8 encoding. Keys and names (ids, owner and actor ids, kinds, tool
// names, statuses, a user's chosen connection and model) are compared in
// queries and stored as they are: on PostgreSQL one holding U+0000 or a
// byte that is not UTF-8 is store.ErrInvalid.
//
// # Migrations
//
// The schema is embedded, one file per version per dialect, and applied
// only by an explicit Migrate: typically once at start, before serving.
// Migrate is idempotent and safe when several instances start at once
// (PostgreSQL: a transaction-scoped advisory lock per schema; SQLite: the
// write lock, BEGIN IMMEDIATE); each version is applied exactly once, in one
// transaction with the row recording it in parley_schema_migrations, keyed
// by component ("store") so other Parley SQL components can share the
// table. SchemaVersion reports where a database stands.
//
// Version 4 escapes existing free text on PostgreSQL (see Text) and turns
// its jsonb and json columns into text, which rewrites parley_messages and
// parley_audit: on a large database it takes about as long as copying
// them, with those tables locked. Version 5 adds parley_feedback, empty,
// and is quick. Version 6 adds columns with constant defaults to
// parley_threads (the summary) and parley_messages (replaces,
// superseded_at), which rewrites neither, and parley_system_prompts,
// empty: it is quick too. Version 7 adds parley_messages.source (how a
// user message was made) with a constant default, as quickly; messages
// written before it read as typed. Version 8 adds parley_model_preferences
// (each user's model choice), empty: quick.
//
// A database already migrated by a newer Parley is not touched: Migrate
// returns an error wrapping ErrSchemaTooNew. Methods used on a database that
// was never migrated return errors wrapping ErrNotMigrated.
//
// # Time precision
//
// Times are stored in UTC at microsecond precision (PostgreSQL timestamptz;
// on SQLite, TEXT in the fixed-width form 2006-01-02T15:04:05.000000Z, whose
// text order is time order) and read back in UTC: the instant is kept, the
// location is not, and nanoseconds are truncated. Times the store fills in
// (zero CreatedAt/UpdatedAt, AppendTurn's bump) come from Options.Now,
// truncated before they are reported, so the caller's value equals what is
// read back. Years outside 1 to 9999 are store.ErrInvalid.
//
// # Errors
//
// Methods return store.ErrNotFound, store.ErrConflict and store.ErrInvalid
// (wrapped) for the conditions package store documents. Unique violations
// (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_PRIMARYKEY/UNIQUE) are
// ErrConflict; values the database cannot hold (PostgreSQL data exceptions
// such as a NUL character in a key, invalid JSON, times out of range) are
// ErrInvalid. When the context ends, the error wraps ctx.Err(). Anything
// else (a closed pool, a lost connection) is an infrastructure error with the
// driver's error in its chain. A failed method writes nothing: every
// multi-statement write is one transaction, and the caller's values are
// filled in only when the write succeeded.
//
// # Concurrency
//
// A Store is safe for concurrent use, and any number of Stores, in any
// number of processes, may share one database: that is how Parley runs on
// several app instances (use PostgreSQL for that). AppendTurn locks the
// thread's row while it takes the next two Seqs from a counter on that row,
// so concurrent turns on one thread, from anywhere, get distinct, gap-free
// Seqs; a unique (thread_id, seq) constraint backs it. A conditional
// AppendTurn (a non-zero user.Seq) puts the last Seq it expects in that
// same UPDATE, so of turns answering one Seq, from anywhere, one is
// written. A cancel requested through one instance is visible to every
// other on its next GetThread.
//
// DecideProposal is one conditional UPDATE of a pending row, so of any
// number of deciders of one token, anywhere, exactly one wins; the others
// get store.ErrConflict and the decided proposal. ReopenProposal is one
// conditional UPDATE too, matching the decision's stored decided_at
// (microseconds, UTC), so it undoes that decision and no later one.
// SQLite enforces foreign keys only on connections that turned them on,
// so CreateProposal looks
// the thread up in its own transaction rather than rely on the key, and
// DeleteThread and the retention sweep delete proposals and feedback
// explicitly there (PostgreSQL cascades). A proposal's token never appears
// in an error.
//
// SetFeedback is one upsert, INSERT ... SELECT from the message ... ON
// CONFLICT (message_id, user_id) DO UPDATE, keeping created_at: only an
// existing assistant message yields a row, its thread_id comes from the
// message, and concurrent sets of one (message, user), from anywhere,
// leave one row, the last written. When it writes nothing, a read of the
// message tells ErrNotFound (no message) from ErrInvalid (a user's).
//
// SetSummary is one UPDATE conditional on summary_through, so of two
// compactions of one thread, anywhere, one wins. An AppendTurn that
// replaces a message checks it (in the thread, a user's, not superseded)
// and supersedes it and the messages after it in its transaction, after
// locking the thread's row: edits of one message queue there, and of
// concurrent ones, from anywhere, one wins and the others get
// store.ErrConflict.
//
// At most one system prompt is active: a partial unique index on active
// holds it, and ActivateSystemPrompt deactivates the active prompt and
// activates the new one in one transaction, which on PostgreSQL first
// locks the table against other writers (SHARE ROW EXCLUSIVE) so that
// concurrent activations queue instead of failing the index; readers are
// not blocked and see one prompt active, the old or the new.
//
// SetModelPreference is one upsert on the user's primary key, INSERT ...
// ON CONFLICT (user_id) DO UPDATE, so concurrent sets of one user's
// choice, from anywhere, all succeed and leave one row, the last written.
//
// On SQLite one connection writes at a time. A Store queues its own writers
// in process (honouring their contexts) and takes the write lock for each
// transaction up front (BEGIN IMMEDIATE), so a read inside a write never
// goes stale; other processes' writers wait through the busy timeout.
//
// # Retention
//
// DeleteThreadsOlderThan deletes the threads last updated before a cutoff,
// archived or not, with their messages, feedback and proposals, in
// batches of a few hundred, each its own transaction; audit events and
// users' model preferences stay.
// It is for a periodic sweeper that the host (or the example server) runs,
// for instance hourly with a cutoff of now minus N days. The method always deletes: a
// "-1 disables retention" setting is the caller's to honour by not calling
// it. Archiving keeps a thread's rows until the sweep reaches them.
//
// Retention reads updated_at, which AppendTurn and RenameThread set: a
// conversation that is still going on is never swept.
package sqlstore
