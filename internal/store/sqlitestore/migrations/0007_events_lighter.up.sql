-- Followers read events by (project, seq) since 0006; the index by
-- (project, id) serves no query any more, and every event written paid
-- for it.
DROP INDEX events_project_id;
