-- Parley store, version 11.
-- A thread's cancel request, new message or deletion is notified on the
-- channel parley_threads with the thread's id, from whichever process
-- wrote it: the Engine's one watcher per process LISTENs instead of
-- polling each running turn's thread (store.ThreadWatcher).
CREATE OR REPLACE FUNCTION parley_notify_thread() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF TG_OP = 'DELETE' THEN PERFORM pg_notify('parley_threads', OLD.id); ELSE PERFORM pg_notify('parley_threads', NEW.id); END IF; RETURN NULL; END $$;
CREATE TRIGGER parley_threads_notify_update AFTER UPDATE OF cancel_requested_at, last_seq ON parley_threads FOR EACH ROW WHEN (OLD.cancel_requested_at IS DISTINCT FROM NEW.cancel_requested_at OR OLD.last_seq <> NEW.last_seq) EXECUTE FUNCTION parley_notify_thread();
CREATE TRIGGER parley_threads_notify_delete AFTER DELETE ON parley_threads FOR EACH ROW EXECUTE FUNCTION parley_notify_thread();
