-- Parley store, version 5: users' feedback on assistant messages, one row
-- per (message, user), replaced when the user changes it. thread_id is
-- copied from the message, for listing a thread's feedback. Deleting a
-- thread cascades to its messages, and from them to their feedback; the
-- primary key, which starts with message_id, serves that cascade.
-- category and comment are free text, escaped like the others (see 0004).

CREATE TABLE parley_feedback (
    message_id TEXT        NOT NULL REFERENCES parley_messages (id) ON DELETE CASCADE,
    user_id    TEXT        NOT NULL,
    thread_id  TEXT        NOT NULL,
    rating     TEXT        NOT NULL CHECK (rating IN ('up', 'down')),
    category   TEXT        NOT NULL,
    comment    TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (message_id, user_id)
);

-- ListFeedback: one thread, oldest first.
CREATE INDEX parley_feedback_thread ON parley_feedback (thread_id, created_at, message_id, user_id);
