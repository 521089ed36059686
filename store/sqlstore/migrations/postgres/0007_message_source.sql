-- Parley store, version 7: how a user message was made.
-- source is one of the store.MessageSource values: '' (typed, and every
-- assistant message), 'decision', 'form' or 'tool_results'. The store
-- checks it, so a new value needs no migration. Messages written before
-- this version read as typed. Adding a column with a constant default does
-- not rewrite the table.

ALTER TABLE parley_messages ADD COLUMN source TEXT NOT NULL DEFAULT '';
