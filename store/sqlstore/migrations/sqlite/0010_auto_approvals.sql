-- Parley store, version 10: each user's standing approvals, one row per
-- grant (a tool's name or "category:<name>"), replaced whole when the user
-- changes them. The primary key serves every query.

CREATE TABLE parley_auto_approvals (
    user_id TEXT NOT NULL,
    grant_name TEXT NOT NULL,
    PRIMARY KEY (user_id, grant_name)
) STRICT;
