-- Entries partitioned by time: a range partition per UTC month of the
-- session's start, so that retention drops a month's entries whole
-- (sqlstore: EntryPartitionDropDue) instead of deleting them row by row.
--
-- The partition key is session_id. Session ids are UUIDs version 7
-- (logbook.NewID), whose first 48 bits are the Unix time in milliseconds
-- when the session was created, so their text sorts by that time, and a
-- month is the range of ids from the id of its first millisecond to the
-- next month's. Partitioning by the session rather than by each entry's
-- own time keeps every uniqueness PostgreSQL must enforce inside one
-- partition (a unique index on a partitioned table has to contain the
-- partition key): (session_id, seq) keeps numbering gapless and unique,
-- (session_id, key) keeps idempotent batches idempotent, with the same
-- INSERT … ON CONFLICT (session_id, key) on both engines. A session's
-- entries all lie in one partition, so reading a transcript reads one
-- partition, and a long-running agent session never spreads over many.
--
-- The existing table is taken over, not copied: it becomes the partition
-- entries_legacy for every id below the start of next month (the months
-- after it get partitions of their own, made ahead by the server and the
-- sweeper, EntryPartitionsEnsure). Attaching it builds the new primary key
-- (id, session_id) and checks its rows once; no row moves. entries_legacy
-- is dropped, like a month, once every session in it is due.
-- entries_default takes any id outside the months made so far, so an
-- insert never fails for a missing partition.
--
-- entry_docs.entry_id can no longer reference entries (id alone is not a
-- key of a partitioned table): a statement trigger takes the documents of
-- deleted entries away instead, as the cascade did.

-- logbook_month_id returns the smallest session id of the UTC month that
-- starts at t's month: its first millisecond, in hexadecimal, and zeros.
CREATE FUNCTION logbook_month_id(t TIMESTAMPTZ) RETURNS TEXT LANGUAGE SQL IMMUTABLE AS $$
    SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-0000-0000-000000000000'
    FROM (SELECT lpad(to_hex((extract(EPOCH FROM date_trunc('month', t AT TIME ZONE 'UTC')) * 1000)::BIGINT), 12, '0') AS h) AS month
$$;

ALTER TABLE entry_docs DROP CONSTRAINT entry_docs_entry_id_fkey;

ALTER TABLE entries DROP CONSTRAINT entries_pkey;
ALTER TABLE entries RENAME CONSTRAINT entries_session_id_fkey TO entries_legacy_session_id_fkey;
ALTER TABLE entries ALTER COLUMN id DROP IDENTITY;
ALTER TABLE entries RENAME TO entries_legacy;
ALTER INDEX entries_session_seq RENAME TO entries_legacy_session_seq;
ALTER INDEX entries_session_key RENAME TO entries_legacy_session_key;
ALTER INDEX entries_commit RENAME TO entries_legacy_commit;
ALTER INDEX entries_skills RENAME TO entries_legacy_skills;
ALTER INDEX entries_tool_call_ids RENAME TO entries_legacy_tool_call_ids;
ALTER INDEX entries_tool_call_tools RENAME TO entries_legacy_tool_call_tools;
ALTER INDEX entries_tool_notes RENAME TO entries_legacy_tool_notes;
ALTER INDEX entries_tool_results RENAME TO entries_legacy_tool_results;

-- The same columns as the old table, whatever migrations added to it.
CREATE TABLE entries (
    LIKE entries_legacy INCLUDING DEFAULTS,
    CONSTRAINT entries_pkey PRIMARY KEY (id, session_id),
    CONSTRAINT entries_session_id_fkey FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE
) PARTITION BY RANGE (session_id);
ALTER TABLE entries ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
CREATE UNIQUE INDEX entries_session_seq ON entries (session_id, seq);
CREATE UNIQUE INDEX entries_session_key ON entries (session_id, key) WHERE key IS NOT NULL;
CREATE INDEX entries_commit ON entries (commit_sha) WHERE commit_sha <> '';
CREATE INDEX entries_skills ON entries (session_id) WHERE kind = 'skill';
CREATE INDEX entries_tool_call_ids ON entries (id) WHERE kind = 'tool_call';
CREATE INDEX entries_tool_call_tools ON entries (tool, id) WHERE kind = 'tool_call';
CREATE INDEX entries_tool_notes ON entries (session_id, tool_call_id) WHERE kind = 'note' AND tool_call_id <> '';
CREATE INDEX entries_tool_results ON entries (session_id, tool_call_id) WHERE kind = 'tool_result' AND tool_call_id <> '';

-- New ids go on from the old table's.
SELECT setval(pg_get_serial_sequence('entries', 'id'), COALESCE((SELECT MAX(id) FROM entries_legacy), 0) + 1, false);

-- The old rows: every id below next month. Ids from the future (a clock
-- set wrong) would not fit; then the old table takes every id, and new
-- months get no partition of their own until an operator moves them.
DO $$
DECLARE
    upto TEXT := logbook_month_id(now() + INTERVAL '1 month');
BEGIN
    IF EXISTS (SELECT 1 FROM entries_legacy WHERE session_id >= upto) THEN
        ALTER TABLE entries ATTACH PARTITION entries_legacy FOR VALUES FROM (MINVALUE) TO (MAXVALUE);
    ELSE
        EXECUTE format('ALTER TABLE entries ATTACH PARTITION entries_legacy FOR VALUES FROM (MINVALUE) TO (%L)', upto);
        CREATE TABLE entries_default PARTITION OF entries DEFAULT;
    END IF;
END
$$;

CREATE FUNCTION entries_unindex() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entry_docs WHERE entry_id IN (SELECT id FROM gone);
    RETURN NULL;
END
$$;
CREATE TRIGGER entries_unindex AFTER DELETE ON entries REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION entries_unindex();
