-- Keys logbook makes for itself, once per database, by name: the key of
-- the keyed hash that tags secrets redacted from identifiers, so that a
-- redacted harness session id or idempotency key stays the same on every
-- replica and after a restart, and different ones stay apart.
CREATE TABLE keys (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
