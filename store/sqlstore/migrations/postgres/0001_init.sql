-- Parley store, version 1: threads, messages, audit events.
-- Ids are text, not uuid: callers may choose ids that are not UUIDs, and a
-- malformed id must read as "not found", not as a type error.

CREATE TABLE parley_threads (
    id                  TEXT        NOT NULL PRIMARY KEY,
    owner_id            TEXT        NOT NULL,
    title               TEXT        NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL,
    updated_at          TIMESTAMPTZ NOT NULL,
    archived_at         TIMESTAMPTZ,
    cancel_requested_at TIMESTAMPTZ,
    last_seq            INTEGER     NOT NULL DEFAULT 0
);

-- ListThreads: one owner, newest first, paged by updated_at.
CREATE INDEX parley_threads_owner_updated ON parley_threads (owner_id, updated_at DESC, id DESC);
-- The retention sweep: threads last updated before a cutoff.
CREATE INDEX parley_threads_updated ON parley_threads (updated_at);

CREATE TABLE parley_messages (
    id               TEXT        NOT NULL PRIMARY KEY,
    thread_id        TEXT        NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    seq              INTEGER     NOT NULL,
    role             TEXT        NOT NULL CHECK (role IN ('user', 'assistant')),
    status           TEXT        NOT NULL,
    content          TEXT        NOT NULL,
    blocks           JSONB,
    model_messages   JSONB,
    input_tokens     BIGINT      NOT NULL,
    output_tokens    BIGINT      NOT NULL,
    guard_action     TEXT        NOT NULL,
    guard_severity   TEXT        NOT NULL,
    guard_categories JSONB,
    guard_exclude    BOOLEAN     NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL,
    UNIQUE (thread_id, seq)
);

-- Audit events have no foreign key: they outlive the threads they name.
CREATE TABLE parley_audit (
    n          BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT        NOT NULL UNIQUE,
    kind       TEXT        NOT NULL,
    actor_id   TEXT        NOT NULL,
    thread_id  TEXT        NOT NULL,
    data       JSONB,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE INDEX parley_audit_created ON parley_audit (created_at DESC, n DESC);
CREATE INDEX parley_audit_actor ON parley_audit (actor_id, created_at DESC, n DESC);
CREATE INDEX parley_audit_thread ON parley_audit (thread_id, created_at DESC, n DESC);
