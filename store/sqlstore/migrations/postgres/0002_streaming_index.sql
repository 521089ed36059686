-- Turns still streaming, by last update: what InterruptStale scans for
-- placeholders whose worker died.
CREATE INDEX parley_messages_streaming ON parley_messages (updated_at) WHERE status = 'streaming';
