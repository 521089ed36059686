-- Parley store, version 7: how a user message was made.
-- source is one of the store.MessageSource values: '' (typed, and every
-- assistant message), 'decision', 'form' or 'tool_results'. The store
-- checks it, so a new value needs no migration. Messages written before
-- this version read as typed.

ALTER TABLE parley_messages ADD COLUMN source TEXT NOT NULL DEFAULT '';
