-- Messages between agents (logbook.Message): addressed to a session, an
-- agent or an actor of a project (exactly one of to_session, to_agent,
-- to_actor is set), delivered once into a live session of the recipient
-- (delivered_at, delivered_to), then read and acknowledged.
CREATE TABLE messages (
    id           TEXT PRIMARY KEY,
    project      TEXT NOT NULL,
    to_session   TEXT NOT NULL DEFAULT '',
    to_agent     TEXT NOT NULL DEFAULT '',
    to_actor     TEXT NOT NULL DEFAULT '',
    from_actor   TEXT NOT NULL,
    from_token   TEXT NOT NULL DEFAULT '',
    from_session TEXT NOT NULL DEFAULT '',
    text         TEXT NOT NULL,
    reply_to     TEXT NOT NULL DEFAULT '',
    thread       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    delivered_at BIGINT,
    delivered_to TEXT NOT NULL DEFAULT '',
    read_at      BIGINT,
    acked_at     BIGINT
);
-- A project's inbox, newest first.
CREATE INDEX messages_project ON messages (project, created_at);
-- What waits for delivery: every hook call of a live session asks, so the
-- index holds only the undelivered messages and stays small.
CREATE INDEX messages_undelivered ON messages (project, created_at) WHERE delivered_at IS NULL;
CREATE INDEX messages_thread ON messages (thread, created_at);
CREATE INDEX messages_delivered_to ON messages (delivered_to) WHERE delivered_to <> '';
CREATE INDEX messages_from_session ON messages (from_session) WHERE from_session <> '';
