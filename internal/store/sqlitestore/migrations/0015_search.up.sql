-- Full-text search (GET /v1/search, logbook search, a list's q).
--
-- logbook cuts text into words itself (logbook.SearchWords: lowercased
-- words, identifiers cut at case changes, CJK text as overlapping pairs of
-- characters) and gives the index those words separated by spaces. FTS5's
-- ascii tokenizer splits only at ASCII spaces and punctuation, which those
-- words never hold, so the index keeps each word as logbook made it, and
-- PostgreSQL's index holds the same words.
--
-- One contentless index (the text is not stored a second time): body holds
-- the words of the text, meta words standing for the project, actor,
-- harness, kind and tool, so that the filters are answered by the index
-- too. A row's rowid is its entry's id, or minus the id of its session in
-- session_docs (the session's own title, goal and result).
CREATE VIRTUAL TABLE search USING fts5(body, meta, content = '', contentless_delete = 1, tokenize = 'ascii');

-- A session's number in the index: sessions have text ids, and rowids of
-- tables without an INTEGER PRIMARY KEY may change (VACUUM).
CREATE TABLE session_docs (
    id         INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL UNIQUE REFERENCES sessions (id) ON DELETE CASCADE
);

-- What is deleted leaves the index in the same statement (foreign-key
-- cascades fire these too).
CREATE TRIGGER entries_unindex AFTER DELETE ON entries BEGIN
    DELETE FROM search WHERE rowid = old.id;
END;
CREATE TRIGGER session_docs_unindex AFTER DELETE ON session_docs BEGIN
    DELETE FROM search WHERE rowid = -old.id;
END;

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
