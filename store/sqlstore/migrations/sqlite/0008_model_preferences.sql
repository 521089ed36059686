-- Parley store, version 8: each user's model choice, one row per user,
-- replaced when the user chooses again. The primary key serves every
-- query.

CREATE TABLE parley_model_preferences (
    user_id    TEXT NOT NULL PRIMARY KEY,
    connection TEXT NOT NULL,
    model      TEXT NOT NULL,
    updated_at TEXT NOT NULL
) STRICT;
