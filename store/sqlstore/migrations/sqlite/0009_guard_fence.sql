-- Parley store, version 9: a user message the guard found a Medium
-- injection in is replayed fenced in later turns (guard_fence), rather than
-- left out (guard_exclude, now for High and Critical). Messages written
-- before this version read as not fenced.

ALTER TABLE parley_messages ADD COLUMN guard_fence INTEGER NOT NULL DEFAULT 0;
