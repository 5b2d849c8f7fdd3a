-- The ledger core: projects, tokens, sessions, entries, plans, agents.
-- Times are Unix microseconds (BIGINT) in both engines, so one set of
-- queries serves both.

CREATE TABLE projects (
    name       TEXT PRIMARY KEY,
    policy     TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);

CREATE TABLE tokens (
    id         TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE,
    project    TEXT NOT NULL DEFAULT '',
    actor      TEXT NOT NULL,
    admin      BOOLEAN NOT NULL DEFAULT FALSE,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);

CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    project            TEXT NOT NULL,
    actor              TEXT NOT NULL,
    harness            TEXT NOT NULL DEFAULT '',
    harness_session_id TEXT NOT NULL DEFAULT '',
    parent_id          TEXT NOT NULL DEFAULT '',
    agent              TEXT NOT NULL DEFAULT '',
    title              TEXT NOT NULL DEFAULT '',
    given_title        TEXT NOT NULL DEFAULT '',
    goal               TEXT NOT NULL DEFAULT '',
    task               TEXT NOT NULL DEFAULT '',
    prompt             TEXT NOT NULL DEFAULT '',
    model              TEXT NOT NULL DEFAULT '',
    agent_type         TEXT NOT NULL DEFAULT '',
    issue              TEXT NOT NULL DEFAULT '',
    pull               TEXT NOT NULL DEFAULT '',
    branch             TEXT NOT NULL DEFAULT '',
    head_commit        TEXT NOT NULL DEFAULT '',
    subject            TEXT NOT NULL DEFAULT '',
    status             TEXT NOT NULL,
    outcome            TEXT NOT NULL DEFAULT '',
    blocker            TEXT NOT NULL DEFAULT '',
    end_reason         TEXT NOT NULL DEFAULT '',
    result             TEXT NOT NULL DEFAULT '',
    started_at         BIGINT NOT NULL,
    last_seen_at       BIGINT NOT NULL,
    closed_at          BIGINT,
    entry_count        BIGINT NOT NULL DEFAULT 0,
    message_count      BIGINT NOT NULL DEFAULT 0,
    tool_call_count    BIGINT NOT NULL DEFAULT 0,
    input_tokens       BIGINT NOT NULL DEFAULT 0,
    output_tokens      BIGINT NOT NULL DEFAULT 0,
    first_assistant    TEXT NOT NULL DEFAULT '',
    last_assistant     TEXT NOT NULL DEFAULT ''
);

-- One session per harness session id: what makes a repeated start idempotent.
CREATE UNIQUE INDEX sessions_harness_key ON sessions (project, actor, harness, harness_session_id)
    WHERE harness_session_id <> '';
CREATE INDEX sessions_project_started ON sessions (project, started_at DESC, id DESC);
CREATE INDEX sessions_parent ON sessions (parent_id) WHERE parent_id <> '';
CREATE INDEX sessions_active_seen ON sessions (last_seen_at) WHERE status = 'active';

CREATE TABLE entries (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq           BIGINT NOT NULL,
    at            BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    role          TEXT NOT NULL DEFAULT '',
    text          TEXT NOT NULL DEFAULT '',
    tool          TEXT NOT NULL DEFAULT '',
    tool_call_id  TEXT NOT NULL DEFAULT '',
    payload       TEXT,
    commit_sha    TEXT NOT NULL DEFAULT '',
    key           TEXT,
    input_tokens  BIGINT,
    output_tokens BIGINT,
    superseded_at BIGINT
);

-- Gapless numbering is the service's job; these keep it honest.
CREATE UNIQUE INDEX entries_session_seq ON entries (session_id, seq);
CREATE UNIQUE INDEX entries_session_key ON entries (session_id, key) WHERE key IS NOT NULL;

CREATE TABLE plan_steps (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    n          BIGINT NOT NULL,
    text       TEXT NOT NULL,
    status     TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, n)
);

CREATE TABLE agents (
    project            TEXT NOT NULL,
    name               TEXT NOT NULL,
    current_session_id TEXT NOT NULL DEFAULT '',
    generation         BIGINT NOT NULL DEFAULT 0,
    created_at         BIGINT NOT NULL,
    PRIMARY KEY (project, name)
);
