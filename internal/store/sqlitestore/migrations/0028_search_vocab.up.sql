-- The search index's words (an fts5vocab table: it stores nothing, it
-- reads the index). A search for a prefix ("migrat*") asks it which words
-- the prefix begins and searches for those words, newest first, when they
-- are few: FTS5 answers a prefix by merging the entries of every such
-- word, in every document, before it can take the newest (at a million
-- sessions, 13 ms for each of a search's two queries; the words and the
-- newest of their entries, a third of that).
CREATE VIRTUAL TABLE search_vocab USING fts5vocab(search, row);
