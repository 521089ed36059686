-- Parley store, version 3: tool calls waiting for a human's approval.
-- The token is the key callers use; n orders proposals created at the same
-- instant. args is json, not jsonb: json keeps the exact text, and ArgsHash
-- hashes those bytes; jsonb would reorder keys and respace them.

CREATE TABLE parley_proposals (
    n          BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token      TEXT        NOT NULL UNIQUE,
    user_id    TEXT        NOT NULL,
    thread_id  TEXT        NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    message_id TEXT        NOT NULL,
    call_id    TEXT        NOT NULL,
    tool       TEXT        NOT NULL,
    args       JSON,
    args_hash  TEXT        NOT NULL,
    summary    TEXT        NOT NULL,
    status     TEXT        NOT NULL CHECK (status IN ('pending', 'applied', 'declined', 'expired')),
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    decided_at TIMESTAMPTZ
);

-- ListProposals: one thread, oldest first. It also serves the foreign key's
-- cascade when a thread is deleted.
CREATE INDEX parley_proposals_thread ON parley_proposals (thread_id, created_at, n);
-- ExpireProposals: the pending proposals, by expiry.
CREATE INDEX parley_proposals_pending ON parley_proposals (expires_at) WHERE status = 'pending';
