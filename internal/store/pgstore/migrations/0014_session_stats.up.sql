-- Statistics kept as they change (issue 30): counting every session of a
-- window took seconds at a million sessions. Each write of a session adds
-- the difference it makes to two rollups, in its own transaction:
--
-- session_stats_days: per project, UTC day the session started, and every
-- grouping at once (outcome, blocker, harness, agent, actor, model), for
-- statistics by two groupings neither of which is the day.
--
-- session_stats_hours: per project, one grouping (dimension) and hour the
-- session started: by day in any time zone, by one grouping, or by day and
-- one grouping, with few rows to add up.
--
-- Both sum the sessions, their durations once ended (a running session's
-- is counted when read), tokens and tool calls. A session's token count
-- may be as large as 2^63-1 (it saturates there), so each is added in two
-- parts, count >> 31 (_hi) and count & (2^31-1) (_lo): the sums cannot
-- overflow, and taking a session back out of them is exact. The sum read
-- is _hi * 2^31 + _lo, saturated at 2^63-1. A new sum (cost) is a new
-- column with DEFAULT 0 plus a migration that empties both tables and
-- resets session_stats_backfill, so that the backfill counts it for every
-- session. shard is always 0 on SQLite; on PostgreSQL concurrent writers
-- add to different rows (see sqlstore.Dialect.StatsShardSQL).
CREATE TABLE session_stats_days (
    project          TEXT NOT NULL,
    day              BIGINT NOT NULL, -- days since the Unix epoch, UTC
    outcome          TEXT NOT NULL,
    blocker          TEXT NOT NULL,
    harness          TEXT NOT NULL,
    agent            TEXT NOT NULL,
    actor            TEXT NOT NULL,
    model            TEXT NOT NULL,
    shard            BIGINT NOT NULL,
    sessions         BIGINT NOT NULL,
    duration_seconds BIGINT NOT NULL,
    input_tokens_hi  BIGINT NOT NULL,
    input_tokens_lo  BIGINT NOT NULL,
    output_tokens_hi BIGINT NOT NULL,
    output_tokens_lo BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    PRIMARY KEY (project, day, outcome, blocker, harness, agent, actor, model, shard)
);

CREATE TABLE session_stats_hours (
    project          TEXT NOT NULL,
    dimension        TEXT NOT NULL, -- outcome, blocker, harness, agent, actor or model
    hour             BIGINT NOT NULL, -- hours since the Unix epoch
    value            TEXT NOT NULL,
    shard            BIGINT NOT NULL,
    sessions         BIGINT NOT NULL,
    duration_seconds BIGINT NOT NULL,
    input_tokens_hi  BIGINT NOT NULL,
    input_tokens_lo  BIGINT NOT NULL,
    output_tokens_hi BIGINT NOT NULL,
    output_tokens_lo BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    PRIMARY KEY (project, dimension, hour, value, shard)
);

-- How far the backfill of an existing database has come: sessions with an
-- id up to after_id are counted; done once every one is. Writes count
-- their changes only for counted sessions until then. A new database has
-- nothing to count.
CREATE TABLE session_stats_backfill (
    after_id TEXT NOT NULL,
    done     BOOLEAN NOT NULL
);
INSERT INTO session_stats_backfill (after_id, done) SELECT '', NOT EXISTS (SELECT 1 FROM sessions);

-- The sessions still running, whose durations are counted when read.
CREATE INDEX sessions_project_active ON sessions (project, started_at) WHERE status = 'active';
