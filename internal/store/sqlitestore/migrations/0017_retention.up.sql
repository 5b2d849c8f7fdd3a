-- A project's retention (logbook.Retention), in days after a session
-- ended; 0 keeps for ever. The admin sets it; the sweeper enforces it.
ALTER TABLE projects ADD COLUMN retention_sessions_days BIGINT NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN retention_payloads_days BIGINT NOT NULL DEFAULT 0;

-- When payload retention trimmed a session's entries. The sweeper walks
-- a project's ended sessions not trimmed yet, oldest first: once trimmed,
-- a session leaves this index, so the walk costs what it finds to do.
ALTER TABLE sessions ADD COLUMN trimmed_at BIGINT;
CREATE INDEX sessions_untrimmed ON sessions (project, closed_at) WHERE status = 'ended' AND trimmed_at IS NULL;
