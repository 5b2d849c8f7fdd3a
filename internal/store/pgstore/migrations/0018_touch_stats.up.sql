-- The dashboard's busiest files added up every touch of a file in the
-- project's last 7 days: 0.5 s at a million sessions (the issue 30 target
-- for the dashboard page is 50 ms). This rollup keeps, per project, file
-- and UTC day a session first touched it on, the sum of its touches
-- (touches.count), changed in the transaction of each touch or deletion,
-- as the sessions' rollups are. The backfill counts every session and its
-- touches again (touch_stats_days with them).
CREATE TABLE touch_stats_days (
    project TEXT NOT NULL,
    day     BIGINT NOT NULL, -- days since the Unix epoch, UTC
    value   TEXT NOT NULL,   -- the file
    shard   BIGINT NOT NULL,
    touches BIGINT NOT NULL,
    PRIMARY KEY (project, day, value, shard)
);

DELETE FROM session_stats_days;
DELETE FROM session_stats_quarters;
UPDATE session_stats_backfill SET after_id = '', done = NOT EXISTS (SELECT 1 FROM sessions);
