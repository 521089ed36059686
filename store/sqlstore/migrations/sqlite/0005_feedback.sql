-- Parley store, version 5: users' feedback on assistant messages, one row
-- per (message, user), replaced when the user changes it. thread_id is
-- copied from the message, for listing a thread's feedback.
-- SQLite enforces the foreign key only on connections that turned foreign
-- keys on, so the store also deletes feedback with its thread itself.

CREATE TABLE parley_feedback (
    message_id TEXT NOT NULL REFERENCES parley_messages (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    thread_id  TEXT NOT NULL,
    rating     TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    category   TEXT NOT NULL,
    comment    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (message_id, user_id)
) STRICT;

-- ListFeedback: one thread, oldest first.
CREATE INDEX parley_feedback_thread ON parley_feedback (thread_id, created_at, message_id, user_id);
