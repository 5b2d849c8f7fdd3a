-- A note sent to a session from outside it (POST /v1/notes) records who
-- wrote it: the actor and the id of the token it came with. Entries the
-- session's owner writes leave both NULL.
ALTER TABLE entries ADD COLUMN author TEXT;
ALTER TABLE entries ADD COLUMN author_token TEXT;
