-- A claim the claims gate took for a session's first write to a file (the
-- project's auto claims), rather than one the session asked for: 1, else 0.
-- A number rather than a boolean, so that an export moves it between the
-- engines as it is (SQLite keeps booleans as numbers).
ALTER TABLE claims ADD COLUMN auto BIGINT NOT NULL DEFAULT 0;
