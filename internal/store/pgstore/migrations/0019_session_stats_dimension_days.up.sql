-- Statistics by one grouping over 30 days added up 2,880 quarter hours of
-- rows per value (20,000 rows by blocker at a million sessions: 18 ms on a
-- quiet machine, 50-60 ms on a busy one). This rollup keeps the same sums
-- per UTC day: a window adds up its whole UTC days here and the quarter
-- hours before the first of them in session_stats_quarters. The backfill
-- counts every session (and its touches) again into every rollup.
CREATE TABLE session_stats_dimension_days (
    project          TEXT NOT NULL,
    dimension        TEXT NOT NULL, -- outcome, blocker, harness, agent, actor or model
    day              BIGINT NOT NULL, -- days since the Unix epoch, UTC
    value            TEXT NOT NULL,
    shard            BIGINT NOT NULL,
    sessions         BIGINT NOT NULL,
    duration_seconds BIGINT NOT NULL,
    input_tokens_hi  BIGINT NOT NULL,
    input_tokens_lo  BIGINT NOT NULL,
    output_tokens_hi BIGINT NOT NULL,
    output_tokens_lo BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    PRIMARY KEY (project, dimension, day, value, shard)
);

DELETE FROM session_stats_days;
DELETE FROM session_stats_quarters;
DELETE FROM touch_stats_days;
UPDATE session_stats_backfill SET after_id = '', done = NOT EXISTS (SELECT 1 FROM sessions);
