-- session.appended is emitted at most every logbook.AppendedEvery per
-- session: unannounced counts the entries appended since the session's
-- last session.appended, announced_at is when that was. Entries counted
-- here are announced by the next append after the interval, by the
-- service's flush within the interval, or when the session ends.
ALTER TABLE sessions ADD COLUMN unannounced BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN announced_at BIGINT NOT NULL DEFAULT 0;
