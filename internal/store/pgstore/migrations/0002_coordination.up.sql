-- Coordination and audit: claims, touches, links, the event outbox, and
-- indexes for the filtered session list. Additive only: new tables, new
-- columns with defaults that are right for existing rows.

-- root_id is the top of a subagent's tree; '' for a top-level session,
-- which is its own root (so no backfill is needed).
ALTER TABLE sessions ADD COLUMN root_id TEXT NOT NULL DEFAULT '';
-- When the session last emitted session.progressed (throttling), microseconds.
ALTER TABLE sessions ADD COLUMN progressed_at BIGINT NOT NULL DEFAULT 0;

CREATE INDEX sessions_project_seen ON sessions (project, last_seen_at DESC, id DESC);
CREATE INDEX sessions_project_outcome ON sessions (project, outcome, last_seen_at DESC) WHERE outcome <> '';
CREATE INDEX sessions_project_blocker ON sessions (project, blocker, last_seen_at DESC) WHERE blocker <> '';
CREATE INDEX sessions_project_harness ON sessions (project, harness, last_seen_at DESC);
CREATE INDEX sessions_project_actor ON sessions (project, actor, last_seen_at DESC);
CREATE INDEX sessions_project_agent ON sessions (project, agent, last_seen_at DESC) WHERE agent <> '';
CREATE INDEX sessions_project_subject ON sessions (project, subject) WHERE subject <> '';
CREATE INDEX sessions_project_branch ON sessions (project, branch) WHERE branch <> '';
CREATE INDEX sessions_project_pull ON sessions (project, pull) WHERE pull <> '';
CREATE INDEX sessions_project_closed ON sessions (project, closed_at) WHERE closed_at IS NOT NULL;

CREATE TABLE claims (
    id             TEXT PRIMARY KEY,
    project        TEXT NOT NULL,
    session_id     TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    actor          TEXT NOT NULL,
    subject        TEXT NOT NULL,
    ttl_seconds    BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    released_at    BIGINT,
    release_reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX claims_active_subject ON claims (project, subject) WHERE released_at IS NULL;
CREATE INDEX claims_active_session ON claims (session_id) WHERE released_at IS NULL;
CREATE INDEX claims_active_expiry ON claims (expires_at) WHERE released_at IS NULL;

CREATE TABLE touches (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    project    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    value      TEXT NOT NULL,
    first_at   BIGINT NOT NULL,
    count      BIGINT NOT NULL DEFAULT 1,
    PRIMARY KEY (session_id, kind, value)
);
CREATE INDEX touches_project_value ON touches (project, kind, value);

CREATE TABLE links (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    project    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    ref        TEXT NOT NULL,
    via        TEXT NOT NULL,
    PRIMARY KEY (session_id, kind, ref, via)
);
CREATE INDEX links_project_ref ON links (project, kind, ref);

-- The outbox: every change worth following, in the transaction that made it.
CREATE TABLE events (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project    TEXT NOT NULL,
    type       TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    at         BIGINT NOT NULL,
    data       TEXT NOT NULL
);
CREATE INDEX events_project_id ON events (project, id);
CREATE INDEX events_at ON events (at);

-- Pairing tool calls with their results.
CREATE INDEX entries_tool_call_id ON entries (session_id, tool_call_id) WHERE tool_call_id <> '';
CREATE INDEX entries_tool_calls ON entries (kind, at) WHERE kind = 'tool_call';
