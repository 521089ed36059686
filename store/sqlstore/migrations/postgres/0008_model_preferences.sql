-- Parley store, version 8: each user's model choice, one row per user,
-- replaced when the user chooses again. user_id, connection and model are
-- keys and names chosen by the host and the Engine, stored as they are
-- (not escaped; see 0004). The primary key serves every query.

CREATE TABLE parley_model_preferences (
    user_id    TEXT        NOT NULL PRIMARY KEY,
    connection TEXT        NOT NULL,
    model      TEXT        NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
