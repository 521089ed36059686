-- Parley store, version 6: a thread's running summary, edited messages,
-- and operators' system prompts.
-- summary is free text, escaped like the others (see 0004); summary_through
-- is the Seq of the last message it covers, 0 with no summary. replaces is
-- the id of the user message a user message replaced ('' for none), and
-- superseded_at is set on the messages an edit took off the current branch.
-- Adding columns with constant defaults does not rewrite the tables.

ALTER TABLE parley_threads ADD COLUMN summary TEXT NOT NULL DEFAULT '';
ALTER TABLE parley_threads ADD COLUMN summary_through INTEGER NOT NULL DEFAULT 0;
ALTER TABLE parley_messages ADD COLUMN replaces TEXT NOT NULL DEFAULT '';
ALTER TABLE parley_messages ADD COLUMN superseded_at TIMESTAMPTZ;

-- name and text are free text, escaped (see 0004). created_by is a user id.
CREATE TABLE parley_system_prompts (
    id         TEXT        NOT NULL PRIMARY KEY,
    name       TEXT        NOT NULL,
    text       TEXT        NOT NULL,
    active     BOOLEAN     NOT NULL,
    created_by TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

-- At most one prompt is active: a second active row is a unique violation.
CREATE UNIQUE INDEX parley_system_prompts_active ON parley_system_prompts (active) WHERE active;
