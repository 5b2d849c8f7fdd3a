-- Full-text search (GET /v1/search, logbook search, a list's q).
--
-- logbook cuts text into words itself (logbook.SearchWords: lowercased
-- words, identifiers cut at case changes, CJK text as overlapping pairs of
-- characters) and stores them as a tsvector it writes out word by word, so
-- PostgreSQL's own parser and dictionaries (which depend on the server's
-- locale and drop CJK text under some) never cut them, and SQLite's index
-- holds the same words. GIN indexes answer the searches; no extension is
-- needed.
--
-- A document holds the words of the text with their positions, and words
-- standing for the project, actor, harness, kind and tool, so that the
-- filters are answered by the index too.
CREATE TABLE entry_docs (
    entry_id BIGINT PRIMARY KEY REFERENCES entries (id) ON DELETE CASCADE,
    doc      TSVECTOR NOT NULL
);
CREATE INDEX entry_docs_doc ON entry_docs USING GIN (doc);

-- A session's own title, goal and result.
CREATE TABLE session_docs (
    session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    doc        TSVECTOR NOT NULL
);
CREATE INDEX session_docs_doc ON session_docs USING GIN (doc);

-- What was written before the index existed, for the backfill to index
-- (logbook migrate, or logbook serve in the background): entries up to the
-- newest one now, sessions up to the greatest id now. Later ones are
-- indexed as they are written. *_after is how far the backfill got.
CREATE TABLE search_backfill (
    entries_after  BIGINT NOT NULL,
    entries_upto   BIGINT NOT NULL,
    sessions_after TEXT NOT NULL,
    sessions_upto  TEXT NOT NULL
);
INSERT INTO search_backfill (entries_after, entries_upto, sessions_after, sessions_upto)
    SELECT 0, COALESCE((SELECT MAX(id) FROM entries), 0), '', COALESCE((SELECT MAX(id) FROM sessions), '');
