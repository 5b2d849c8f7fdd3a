-- Cost (issue 28). Each model call's cost is fixed when it is recorded, in
-- millionths of a US dollar (integers: sums stay exact): the harness's own
-- figure when it reports one, else its tokens priced by the project's
-- price table (logbook.DefaultPrices with the project's own prices). An
-- entry keeps the cache tokens it was priced by and the model called when
-- not the session's; a session sums its entries' costs, as it sums their
-- tokens.
ALTER TABLE entries ADD COLUMN cache_read_tokens BIGINT;
ALTER TABLE entries ADD COLUMN cache_write_tokens BIGINT;
ALTER TABLE entries ADD COLUMN usage_model TEXT;
ALTER TABLE entries ADD COLUMN cost_micros BIGINT;
ALTER TABLE sessions ADD COLUMN cost_micros BIGINT NOT NULL DEFAULT 0;

-- A project's own prices (a JSON object of model name to logbook.Price),
-- set by the admin; '' for none.
ALTER TABLE projects ADD COLUMN prices TEXT NOT NULL DEFAULT '';

-- The statistics' rollups (migrations 0014, 0016, 0019) gain the cost, in
-- two parts as the tokens (a session's cost saturates at 2^63-1), and
-- top_level: 1 for a session with no parent, 0 for a subagent, so that the
-- dashboard counts the sessions people started apart from the subagents
-- they ran. The rollups are made again and the backfill counts every
-- session (and its touches) into them.
DROP TABLE session_stats_days;
DROP TABLE session_stats_quarters;
DROP TABLE session_stats_dimension_days;

CREATE TABLE session_stats_days (
    project          TEXT NOT NULL,
    day              BIGINT NOT NULL, -- days since the Unix epoch, UTC
    outcome          TEXT NOT NULL,
    blocker          TEXT NOT NULL,
    harness          TEXT NOT NULL,
    agent            TEXT NOT NULL,
    actor            TEXT NOT NULL,
    model            TEXT NOT NULL,
    top_level        BIGINT NOT NULL, -- 1: no parent; 0: a subagent
    shard            BIGINT NOT NULL,
    sessions         BIGINT NOT NULL,
    duration_seconds BIGINT NOT NULL,
    input_tokens_hi  BIGINT NOT NULL,
    input_tokens_lo  BIGINT NOT NULL,
    output_tokens_hi BIGINT NOT NULL,
    output_tokens_lo BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    cost_micros_hi   BIGINT NOT NULL,
    cost_micros_lo   BIGINT NOT NULL,
    PRIMARY KEY (project, day, outcome, blocker, harness, agent, actor, model, top_level, shard)
);

CREATE TABLE session_stats_quarters (
    project          TEXT NOT NULL,
    dimension        TEXT NOT NULL, -- outcome, blocker, harness, agent, actor or model
    quarter          BIGINT NOT NULL, -- quarter hours since the Unix epoch
    value            TEXT NOT NULL,
    top_level        BIGINT NOT NULL,
    shard            BIGINT NOT NULL,
    sessions         BIGINT NOT NULL,
    duration_seconds BIGINT NOT NULL,
    input_tokens_hi  BIGINT NOT NULL,
    input_tokens_lo  BIGINT NOT NULL,
    output_tokens_hi BIGINT NOT NULL,
    output_tokens_lo BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    cost_micros_hi   BIGINT NOT NULL,
    cost_micros_lo   BIGINT NOT NULL,
    PRIMARY KEY (project, dimension, quarter, value, top_level, shard)
);

CREATE TABLE session_stats_dimension_days (
    project          TEXT NOT NULL,
    dimension        TEXT NOT NULL, -- outcome, blocker, harness, agent, actor or model
    day              BIGINT NOT NULL, -- days since the Unix epoch, UTC
    value            TEXT NOT NULL,
    top_level        BIGINT NOT NULL,
    shard            BIGINT NOT NULL,
    sessions         BIGINT NOT NULL,
    duration_seconds BIGINT NOT NULL,
    input_tokens_hi  BIGINT NOT NULL,
    input_tokens_lo  BIGINT NOT NULL,
    output_tokens_hi BIGINT NOT NULL,
    output_tokens_lo BIGINT NOT NULL,
    tool_calls       BIGINT NOT NULL,
    cost_micros_hi   BIGINT NOT NULL,
    cost_micros_lo   BIGINT NOT NULL,
    PRIMARY KEY (project, dimension, day, value, top_level, shard)
);

DELETE FROM touch_stats_days;
UPDATE session_stats_backfill SET after_id = '', done = NOT EXISTS (SELECT 1 FROM sessions);
