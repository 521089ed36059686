-- Parley store, version 1: threads, messages, audit events.
-- Times are TEXT in the fixed-width UTC form 2006-01-02T15:04:05.000000Z,
-- so text order is time order. JSON columns are TEXT holding one JSON value.

CREATE TABLE parley_threads (
    id                  TEXT    NOT NULL PRIMARY KEY,
    owner_id            TEXT    NOT NULL,
    title               TEXT    NOT NULL,
    created_at          TEXT    NOT NULL,
    updated_at          TEXT    NOT NULL,
    archived_at         TEXT,
    cancel_requested_at TEXT,
    last_seq            INTEGER NOT NULL DEFAULT 0
) STRICT;

-- ListThreads: one owner, newest first, paged by updated_at.
CREATE INDEX parley_threads_owner_updated ON parley_threads (owner_id, updated_at DESC, id DESC);
-- The retention sweep: threads last updated before a cutoff.
CREATE INDEX parley_threads_updated ON parley_threads (updated_at);

CREATE TABLE parley_messages (
    id               TEXT    NOT NULL PRIMARY KEY,
    thread_id        TEXT    NOT NULL REFERENCES parley_threads (id) ON DELETE CASCADE,
    seq              INTEGER NOT NULL,
    role             TEXT    NOT NULL CHECK (role IN ('user', 'assistant')),
    status           TEXT    NOT NULL,
    content          TEXT    NOT NULL,
    blocks           TEXT,
    model_messages   TEXT,
    input_tokens     INTEGER NOT NULL,
    output_tokens    INTEGER NOT NULL,
    guard_action     TEXT    NOT NULL,
    guard_severity   TEXT    NOT NULL,
    guard_categories TEXT,
    guard_exclude    INTEGER NOT NULL,
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    UNIQUE (thread_id, seq)
) STRICT;

-- Audit events have no foreign key: they outlive the threads they name.
CREATE TABLE parley_audit (
    n          INTEGER NOT NULL PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    kind       TEXT    NOT NULL,
    actor_id   TEXT    NOT NULL,
    thread_id  TEXT    NOT NULL,
    data       TEXT,
    created_at TEXT    NOT NULL
) STRICT;

CREATE INDEX parley_audit_created ON parley_audit (created_at DESC, n DESC);
CREATE INDEX parley_audit_actor ON parley_audit (actor_id, created_at DESC, n DESC);
CREATE INDEX parley_audit_thread ON parley_audit (thread_id, created_at DESC, n DESC);
