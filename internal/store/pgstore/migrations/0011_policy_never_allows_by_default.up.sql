-- Policies stored before the defer decision were stored whole: every
-- class, the defaults included, so read_only and workspace_write read
-- "allow" in every stored policy whether or not a person chose it. Allow
-- skips the user's own permission prompt, so it must be a project's
-- explicit choice: drop those two allows. A project that wants them sets
-- them again. Decisions stricter than the new defaults (ask) are kept.
UPDATE projects SET policy = (policy::jsonb - 'read_only')::text
 WHERE policy <> '' AND policy::jsonb ->> 'read_only' = 'allow';
UPDATE projects SET policy = (policy::jsonb - 'workspace_write')::text
 WHERE policy <> '' AND policy::jsonb ->> 'workspace_write' = 'allow';
