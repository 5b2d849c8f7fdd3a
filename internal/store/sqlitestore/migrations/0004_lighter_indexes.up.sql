-- Every heartbeat moves last_seen_at, and every index that holds it is
-- rewritten with it. The harness and actor filters do not need it in their
-- index (the list sorts the few matching rows), so they get indexes without
-- it; writes get cheaper, reads stay index scans.
DROP INDEX sessions_project_harness;
DROP INDEX sessions_project_actor;
CREATE INDEX sessions_project_harness ON sessions (project, harness);
CREATE INDEX sessions_project_actor ON sessions (project, actor);

-- logbook why: sessions by the commit they worked on.
CREATE INDEX sessions_head_commit ON sessions (head_commit) WHERE head_commit <> '';
CREATE INDEX entries_commit ON entries (commit_sha) WHERE commit_sha <> '';
