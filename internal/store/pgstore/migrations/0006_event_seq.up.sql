-- The id a follower sees is the event's seq, given in the order events
-- become visible. On PostgreSQL, where concurrent transactions take ids
-- before they commit, a sequencer numbers committed events afterwards
-- (store.EventSequence), so writers no longer hold a lock through their
-- commit. SQLite, one writer at a time, numbers them as it inserts them.
-- event_counter is the last seq given: it never goes back, even when the
-- newest events are pruned or deleted. Existing events keep their order.
ALTER TABLE events ADD COLUMN seq BIGINT;
UPDATE events SET seq = id;
CREATE TABLE event_counter (n BIGINT NOT NULL);
INSERT INTO event_counter (n) SELECT COALESCE(MAX(id), 0) FROM events;
CREATE INDEX events_project_seq ON events (project, seq) WHERE seq IS NOT NULL;
CREATE INDEX events_unsequenced ON events (id) WHERE seq IS NULL;
