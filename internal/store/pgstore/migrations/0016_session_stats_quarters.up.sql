-- Statistics by day in a zone whose days start on the half or quarter hour
-- (India +05:30, Nepal +05:45) read the hours a day starts inside from the
-- sessions: at a million sessions over 30 days, 30 such hours hold about
-- 40,000 sessions. Every zone in use starts its days on a quarter hour, so the
-- rollup by grouping is kept per quarter hour instead of per hour. The
-- backfill counts every session again into both rollups (as a migration
-- that adds a sum, such as cost, would).
DROP TABLE session_stats_hours;

CREATE TABLE session_stats_quarters (
    project          TEXT NOT NULL,
    dimension        TEXT NOT NULL, -- outcome, blocker, harness, agent, actor or model
    quarter          BIGINT NOT NULL, -- quarter hours since the Unix epoch
    value            TEXT NOT NULL,
    shard            BIGINT NOT NULL,
    sessions         BIGINT NOT NULL,
    duration_seconds BIGINT NOT NULL,
    input_tokens_hi  BIGINT NOT NULL,
    input_tokens_lo  BIGINT NOT NULL,
    output_tokens_hi BIGINT NOT NULL,
    output_tokens_lo BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    PRIMARY KEY (project, dimension, quarter, value, shard)
);

DELETE FROM session_stats_days;
UPDATE session_stats_backfill SET after_id = '', done = NOT EXISTS (SELECT 1 FROM sessions);
