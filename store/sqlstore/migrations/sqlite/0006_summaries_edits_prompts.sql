-- Parley store, version 6: a thread's running summary, edited messages,
-- and operators' system prompts.
-- summary_through is the Seq of the last message the summary covers, 0
-- with no summary. replaces is the id of the user message a user message
-- replaced ('' for none), and superseded_at is set on the messages an edit
-- took off the current branch.

ALTER TABLE parley_threads ADD COLUMN summary TEXT NOT NULL DEFAULT '';
ALTER TABLE parley_threads ADD COLUMN summary_through INTEGER NOT NULL DEFAULT 0;
ALTER TABLE parley_messages ADD COLUMN replaces TEXT NOT NULL DEFAULT '';
ALTER TABLE parley_messages ADD COLUMN superseded_at TEXT;

-- active is 0 or 1.
CREATE TABLE parley_system_prompts (
    id         TEXT    NOT NULL PRIMARY KEY,
    name       TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    active     INTEGER NOT NULL CHECK (active IN (0, 1)),
    created_by TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
) STRICT;

-- At most one prompt is active: a second active row is a unique violation.
CREATE UNIQUE INDEX parley_system_prompts_active ON parley_system_prompts (active) WHERE active = 1;
