// Package storetest is the conformance suite for store.Store. Every
// implementation runs it, in three lines:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return mystore.New() })
//	}
//
// Run calls newStore once per subtest; each call must return an empty store
// (a fresh database or schema for SQL stores, closed with t.Cleanup).
// Subtests run one after another, never in parallel.
//
// # What it checks
//
// Every method contract in package store, with errors asserted by kind
// (errors.Is against ErrNotFound, ErrConflict, ErrInvalid), grouped as
// below. A group for an optional interface runs only when the store
// implements it.
//
//   - Threads: create/get round trip of every field; generated ids are
//     unique UUIDs and generated times are now; ErrInvalid without an owner,
//     ErrConflict on a taken id (and nothing written); rename; archive keeps
//     its first time; delete takes the messages with it; the cancel flag;
//     ErrNotFound for every method given an unknown thread.
//   - ListThreads: newest updated first, Limit, the default of 50, paging
//     with Before (strictly before), archived threads only on request,
//     owners matched exactly (never as LIKE patterns).
//   - Messages: AppendTurn fills ids, Seq and times, assigns consecutive Seq
//     per thread, bumps the thread, and is atomic: a turn rejected with
//     ErrNotFound, ErrInvalid or ErrConflict writes nothing and reserves no
//     Seq. A non-zero user.Seq is written at that Seq when it is LastSeq+1
//     (the first turn included) and is ErrConflict otherwise, lower or
//     higher, with nothing written; to an unknown thread it is ErrNotFound. UpdateMessage replaces the mutable fields (and only those) and
//     can clear them. Blocks round-trip every field.
//   - Summaries: SetSummary is returned by GetThread and ListThreads, leaves
//     UpdatedAt, LastSeq and the messages alone, and is a compare-and-set
//     on SummaryThrough: over a stale prevThrough (lower, higher, negative)
//     it is ErrConflict and writes nothing; an empty summary through 0
//     clears it, also compared; a negative through, or through 0 with a
//     summary, is ErrInvalid; an unknown thread is ErrNotFound;
//     CreateThread ignores a Summary it is given.
//   - Edits: AppendTurn with user.Replaces supersedes the replaced message
//     and every later one with one SupersededAt, now, changing nothing else
//     (UpdatedAt included), keeps earlier messages current, and appends the
//     new turn after the last message with Replaces; ListMessages and
//     GetMessage return superseded messages; a message superseded by an
//     earlier edit keeps its first SupersededAt; the summary is cleared
//     when the replaced Seq is at or before SummaryThrough and kept when it
//     is after; replacing a message that is not in the thread is
//     ErrNotFound, an assistant's ErrInvalid, a superseded one ErrConflict,
//     and none writes anything; a non-zero user.Seq still makes the edit
//     conditional; UpdateMessage leaves SupersededAt and Replaces alone.
//   - Sources: each of the four MessageSource values (carried tool results
//     with no Content) is written on the user message by AppendTurn, left
//     in the caller's value and read back by GetMessage and ListMessages;
//     an assistant message's Source is stored, and left in the caller's
//     value, empty whatever it was given, a known source or not; a user
//     Source other than the four is ErrInvalid, conditional or not, and
//     writes nothing (no message, no bump, no Seq taken); UpdateMessage
//     never changes a Source, whatever m holds.
//   - Isolation: values cross the boundary by copy, in both directions,
//     a superseded message's SupersededAt included.
//   - Strings: SQL metacharacters, unicode and a 10 KB title round-trip.
//     Text a model can produce round-trips exactly through every free-text
//     and JSON field (title, a thread's summary, content, blocks, model
//     messages, a proposal's call id, summary and Args, audit data) and
//     every method that writes or reads it, AppendTurn, SetSummary and the
//     streaming checkpoint (UpdateMessage) included: U+0000 raw and as the JSON escape \u0000 (in values and
//     keys), every other C0 control, U+FFFD, U+2028, noncharacters, astral
//     characters, lone surrogate escapes (\ud800) and a 140 KB line.
//     Strings that are not UTF-8 are never an error (see below).
//   - Context: every method fails with an already canceled context and
//     writes nothing. Wrapping context.Canceled is preferred, not required.
//   - Concurrency: 16 concurrent AppendTurns on one thread all succeed with
//     unique, gap-free Seqs; of 16 concurrent AppendTurns at the same
//     user.Seq exactly one succeeds; of 16 concurrent edits of one message
//     exactly one succeeds and is the only current turn after it, the
//     others ErrConflict; of 16 concurrent SetSummary calls over the same
//     prevThrough exactly one succeeds; concurrent reads never see a torn
//     message.
//     Run the suite with -race.
//   - Proposals: create/get round trip of every field, with Args byte for
//     byte; CreateProposal fills pending and CreatedAt, and is ErrInvalid
//     without a token, user, thread, tool or expiry or with a status other
//     than pending, ErrNotFound in an unknown thread, ErrConflict on a taken
//     token; DecideProposal applies or declines once (a second decision,
//     either way, is ErrConflict and returns the current state), refuses
//     other statuses (ErrInvalid) and unknown tokens (ErrNotFound), and
//     marks a proposal expired when the decision comes at or after
//     ExpiresAt; 32 concurrent decisions of one token have exactly one
//     winner, whose decision is stored; ReopenProposal moves an applied or
//     declined proposal decided at decidedAt (as given to DecideProposal
//     or as it returned it) back to pending as created, decidable again,
//     and is ErrConflict for another time (a microsecond off included), a
//     pending or an expired proposal, ErrNotFound for an unknown token;
//     concurrent reopens and decisions have one winning reopen and at most
//     one winning decision after it; ListProposals oldest first, none for
//     an unknown thread; ExpireProposals changes only pending proposals at
//     or past expiry; DeleteThread takes the proposals with it; hostile
//     strings, copies and canceled contexts as for the other methods.
//   - Feedback, only for a store that implements store.FeedbackStore (the
//     cases skip, naming it, otherwise): SetFeedback fills ThreadID from the
//     message, over the caller's, and both times with now; setting again
//     replaces rating, category and comment (an empty one too), keeps
//     CreatedAt and moves UpdatedAt forward; 32 concurrent sets of one
//     (message, user) all succeed and leave one row, one writer's whole
//     write, with the CreatedAt every writer reports; two users on one
//     message are two rows; an unknown message is ErrNotFound, a user's
//     message, an empty message or user id and a rating other than up or
//     down are ErrInvalid, and none writes anything; DeleteFeedback removes
//     one row and is ErrNotFound for none; ListFeedback is oldest created
//     first (a replaced row keeps its place), one thread's only, and empty
//     for an unknown thread; DeleteThread takes the feedback with it;
//     hostile and model strings in category and comment, and hostile user
//     ids, round-trip; canceled contexts as for the other methods.
//   - SystemPrompts, only for a store that implements store.SystemPrompts
//     (skipped, naming it, otherwise): create/get/list round trip of every
//     field; CreateSystemPrompt fills a UUID and both times with now and
//     stores the prompt inactive even when Active is set, is ErrInvalid
//     without Text and ErrConflict on a taken id (nothing changed);
//     ListSystemPrompts is newest created first, then by descending ID;
//     ActivateSystemPrompt makes one prompt active and the previous one
//     inactive, moving both UpdatedAt and no other prompt, changes nothing
//     for the active prompt, and is ErrNotFound (nothing changed) for an
//     unknown one; ActiveSystemPrompt is ErrNotFound when none is active;
//     DeactivateSystemPrompts leaves none; deleting the active prompt
//     leaves none, deleting twice or an unknown id is ErrNotFound; with
//     one prompt active, 32 concurrent activations of different prompts
//     all succeed and every read during and after them, through
//     ActiveSystemPrompt and ListSystemPrompts, sees exactly one active;
//     hostile, model and invalid UTF-8 strings in Name and Text, and
//     hostile CreatedBy, round-trip; canceled contexts as for the others.
//   - Preferences, only for a store that implements store.Preferences
//     (skipped, naming it, otherwise): a user without a choice is
//     ErrNotFound; set then get round-trips every field, UpdatedAt as
//     given; setting again replaces connection, model and UpdatedAt; a
//     zero UpdatedAt is stored as now; an empty UserID, Connection or Model
//     is ErrInvalid and changes nothing; ClearModelPreference removes the
//     choice, succeeds with none stored, and the user can choose again;
//     users are isolated (a set, a get and a clear touch only their user,
//     lookalike ids that differ by case, a trailing space, a prefix or a
//     LIKE wildcard included); 32 concurrent sets of one user's choice,
//     first and later ones, all succeed and leave one writer's whole
//     write; hostile user ids, connections and models round-trip;
//     canceled contexts as for the others.
//   - Relay, only for a store that implements store.Relay (skipped,
//     naming it, otherwise, and when Subscribe is errors.ErrUnsupported,
//     which Publish must then be too): every subscriber of a topic gets its
//     payloads in order and no other topic's; payloads round-trip every
//     byte (NUL, bytes that are not UTF-8, MaxRelayPayload of them); a
//     subscription's channel closes when its context ends, and Subscribe
//     with a canceled context fails with it; a topic that is empty, too
//     long or not printable ASCII, or a payload past MaxRelayPayload, is
//     ErrInvalid; a subscriber that never reads is dropped (its channel
//     closed) after at most RelayBuffer payloads while the others get
//     every one and Publish never blocks on it.
//
// # What a store may change
//
// The suite holds a store to what a SQL database can keep:
//
//   - Times are compared with time.Time.Equal, so a store must keep the
//     instant but not the location. Inputs have microsecond precision. Times a
//     store generates must be reported (in the caller's value) exactly as
//     they will be read back, so a store that truncates does so first.
//   - Raw JSON (Block.Data, Message.ModelMessages, AuditEvent.Data) is
//     compared as the value encoding/json decodes: re-encoding is allowed,
//     and a lone surrogate escape may come back as U+FFFD, which is how Go
//     reads it. Empty and null are the same; so are a nil and an empty
//     Blocks slice. The exception is Proposal.Args, kept byte for byte,
//     because ArgsHash is a hash of those bytes.
//   - A string that is not valid UTF-8 (a model never produces one) may
//     come back with each byte that is not part of valid UTF-8 replaced by
//     U+FFFD, as encoding/json replaces them, field by field; it must not
//     be an error. Proposal.Args still come back byte for byte.
//
// # What it leaves open
//
// Whether RenameThread, ArchiveThread or UpdateMessage move a thread's
// UpdatedAt; which of two threads updated at the same instant lists first;
// whether a second RequestCancel replaces the first; AppendTurn on an archived
// thread; whether caller-chosen ids must be UUIDs (the suite only uses UUIDs).
// For proposals: the DecidedAt an expired proposal gets (only that it has
// one), which of two proposals created at the same instant lists first,
// whether Args must be a JSON object, and whether ReopenProposal tells
// apart times closer than a microsecond. For feedback: the order of rows
// created at the same instant, and, of concurrent sets, which one is
// stored (only that it is one whole write). For summaries and edits:
// whether SetSummary accepts a through past LastSeq; whether AppendTurn
// keeps an assistant message's Replaces or a SupersededAt the caller put
// on a new message; and which error an edit gets when its user.Seq is
// stale and its Replaces is wrong as well. For preferences: which of
// concurrent sets is stored (only that it is one whole write), and whether
// a set with an UpdatedAt older than the stored one still replaces it.
package storetest
