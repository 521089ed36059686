-- Parley store, version 3: tool calls waiting for a human's approval.
-- The token is the key callers use; n orders proposals created at the same
-- instant. args is the exact JSON text (ArgsHash hashes those bytes).
-- SQLite enforces the foreign key only on connections that turned foreign
-- keys on, so the store also deletes proposals with their thread itself.

CREATE TABLE parley_proposals (
    n          INTEGER NOT NULL PRIMARY KEY,
    token      TEXT    NOT NULL UNIQUE,
    user_id    TEXT    NOT NULL,
    thread_id  TEXT    NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    message_id TEXT    NOT NULL,
    call_id    TEXT    NOT NULL,
    tool       TEXT    NOT NULL,
    args       TEXT,
    args_hash  TEXT    NOT NULL,
    summary    TEXT    NOT NULL,
    status     TEXT    NOT NULL CHECK (status IN ('pending', 'applied', 'declined', 'expired')),
    created_at TEXT    NOT NULL,
    expires_at TEXT    NOT NULL,
    decided_at TEXT
) STRICT;

-- ListProposals: one thread, oldest first.
CREATE INDEX parley_proposals_thread ON parley_proposals (thread_id, created_at, n);
-- ExpireProposals: the pending proposals, by expiry.
CREATE INDEX parley_proposals_pending ON parley_proposals (expires_at) WHERE status = 'pending';
