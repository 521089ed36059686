-- Parley store, version 4: text PostgreSQL could not hold as given.
-- A model may write U+0000, which text refuses, as jsonb refuses the JSON
-- escape \u0000; a Go string may hold bytes that are not UTF-8. From this
-- version the store escapes free text (titles, contents, summaries, call
-- ids) and JSON on PostgreSQL, with U+0001 as the escape character:
-- U+0000 is U+0001 '0', U+0001 is U+0001 '1', a byte that is not UTF-8 is
-- U+0001 'x' and two lowercase hex digits (escape.go). So existing free
-- text gets its U+0001 escaped here; nothing else in it changes.
-- The JSON columns become text: jsonb refuses \u0000, and json re-checks
-- every write. Existing JSON holds no raw U+0001 (JSON escapes control
-- characters), so it is kept: json exactly, jsonb in its canonical form.
-- Changing a column's type rewrites its table: on a large database this
-- takes about as long as copying parley_messages and parley_audit.

UPDATE parley_threads SET title = replace(title, chr(1), chr(1) || '1')
    WHERE strpos(title, chr(1)) > 0;
UPDATE parley_messages SET content = replace(content, chr(1), chr(1) || '1')
    WHERE strpos(content, chr(1)) > 0;
UPDATE parley_proposals SET summary = replace(summary, chr(1), chr(1) || '1'),
    call_id = replace(call_id, chr(1), chr(1) || '1')
    WHERE strpos(summary, chr(1)) > 0 OR strpos(call_id, chr(1)) > 0;
ALTER TABLE parley_messages
    ALTER COLUMN blocks TYPE TEXT USING blocks::text,
    ALTER COLUMN model_messages TYPE TEXT USING model_messages::text,
    ALTER COLUMN guard_categories TYPE TEXT USING guard_categories::text;
ALTER TABLE parley_audit ALTER COLUMN data TYPE TEXT USING data::text;
ALTER TABLE parley_proposals ALTER COLUMN args TYPE TEXT USING args::text;
