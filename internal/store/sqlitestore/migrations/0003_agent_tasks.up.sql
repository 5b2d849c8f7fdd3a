-- Agent tasks that follow rotation, the rotation log, and rotation policy.

ALTER TABLE agents ADD COLUMN rotate_max_age_seconds BIGINT NOT NULL DEFAULT 0;
ALTER TABLE agents ADD COLUMN rotate_max_input_tokens BIGINT NOT NULL DEFAULT 0;

CREATE TABLE agent_tasks (
    project           TEXT NOT NULL,
    task_id           TEXT NOT NULL,
    agent             TEXT NOT NULL,
    title             TEXT NOT NULL DEFAULT '',
    text              TEXT NOT NULL DEFAULT '',
    active_session_id TEXT NOT NULL DEFAULT '',
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL,
    PRIMARY KEY (project, task_id)
);
CREATE INDEX agent_tasks_agent ON agent_tasks (project, agent);

-- Every session a task has lived in, in order.
CREATE TABLE task_sessions (
    project    TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    since      BIGINT NOT NULL,
    PRIMARY KEY (project, task_id, session_id)
);

CREATE TABLE agent_rotations (
    project         TEXT NOT NULL,
    agent           TEXT NOT NULL,
    at              BIGINT NOT NULL,
    reason          TEXT NOT NULL,
    from_session_id TEXT NOT NULL DEFAULT '',
    to_session_id   TEXT NOT NULL
);
CREATE INDEX agent_rotations_agent ON agent_rotations (project, agent, at);

CREATE INDEX entries_skills ON entries (session_id) WHERE kind = 'skill';
CREATE INDEX sessions_root ON sessions (root_id) WHERE root_id <> '';
CREATE INDEX events_session ON events (session_id) WHERE session_id <> '';
