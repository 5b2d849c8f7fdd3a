package sqlstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// The search index. Every entry has a document (the words of
// logbook.EntrySearchText) and every session one (the words of its title,
// goal and result), written in the transaction that writes the entry or
// changes those fields, and gone with them (SQLite: triggers; PostgreSQL:
// foreign keys). logbook cuts the words (logbook.SearchWords); the engine
// keeps and searches them with its own machinery, as its SearchIndex says.
//
// A project's documents stand apart (SearchIndex.scope): on SQLite every
// word starts with its project's tag (projectTag: "3f9a0c1e" + "login"),
// so a project's searches read its own words only and no condition on
// the project joins them (FTS5 finds "a rare word AND a word in every
// document" slowly); on PostgreSQL a meta word stands for the project
// (GIN skips through a common word's entries) and the words stay short.
// Besides, a document holds meta words for its actor and harness and, for
// an entry, its kind and tool, which a search with those filters asks
// for, so the index narrows to them too. The rows a search answers are
// read back and checked against the project and the filters, so a word
// standing for two values (a hash clash) changes nothing.
//
// The engines find the newest documents that match; ranking them is
// logbook.SearchScore's, on the text of each, the same on both engines.

// SearchIndex is how an engine keeps the search index: FTS5 (SQLite) or
// TSVector (PostgreSQL). Both hold the same words.
type SearchIndex interface {
	// writeEntries stores entries' documents, as mode says.
	writeEntries(ctx context.Context, e executor, docs []entryDoc, mode writeMode) error
	// writeSession stores (or replaces) a session's document.
	writeSession(ctx context.Context, e executor, sessionID string, d searchDoc, backfill bool) error
	// entryCandidates is a query of the ids of the entries whose
	// documents match m and that pass where, a condition on entries e and
	// their sessions s (joined only when where is not empty), newest
	// first, at most limit: among the newest documents only when newest
	// is not empty, else among the entries after the id after (newest,
	// after and limit are placeholders; an index that walks newest first
	// is never given newest).
	entryCandidates(q *query, m searchMatch, where, newest, after, limit string) string
	// sessionCandidates is the same for sessions s, among the newest
	// documents only when newest (a placeholder) is not empty; an index
	// that walks newest first has no need of it.
	sessionCandidates(q *query, m searchMatch, columns, where, newest, limit string) string
	// newestFirst reports whether the index walks its matches newest
	// first, stopping after limit (FTS5), or finds them all before they
	// are ordered (GIN).
	newestFirst() bool
	// scope says how a project's documents stand apart: a tag before
	// every word, or meta words.
	scope(project string) (tag string, meta []string)
	// newestShare is a query of the share of the newest limit documents
	// of entries that hold the meta word (a placeholder), from 0 to 1.
	newestShare(q *query, word, limit string) string
	// writeKept writes the documents of the entries a transaction
	// inserted, kept until it commits (see txDocs): the last one of each
	// entry, by id, of the entries still there as they were then.
	writeKept(ctx context.Context, e executor, kept map[int64]pendingDoc) error
	// sessionsMatching is a condition on the session s: its document
	// matches m, answered by reading every matching session first.
	sessionsMatching(q *query, m searchMatch) string
	// sessionMatches is the same condition, checked for each session s.
	sessionMatches(q *query, m searchMatch) string
	// sessionsCount is a query of how many sessions' documents match m,
	// up to limit (a placeholder).
	sessionsCount(q *query, m searchMatch, limit string) string
	// sessionsTotal is a query of about how many sessions' documents the
	// index holds, in every project (a float).
	sessionsTotal() string
	// clear empties the index.
	clear(ctx context.Context, e executor) error
	// expand gives m the words its prefixes begin (searchMatch.whole)
	// when the engine finds those words faster than the prefixes, and
	// returns m as it is otherwise.
	expand(ctx context.Context, e executor, m searchMatch) (searchMatch, error)
}

// writeMode says what documents written are to the index.
type writeMode int

const (
	// newDocs are documents of rows just written.
	newDocs writeMode = iota
	// backfillDocs are documents of rows written before the index, which
	// a live write may have indexed since (with the same words).
	backfillDocs
	// changedDocs replace the documents of rows that changed.
	changedDocs
)

// searchDoc is a document: its words in order (positions), then the
// words found only whole, each after its project's tag; and its meta
// words.
type searchDoc struct {
	words []string
	meta  []string
}

// entryDoc is an entry's document.
type entryDoc struct {
	id  int64
	doc searchDoc
}

// searchMatch is what a search asks of documents: every term, its words
// after the project's tag, and every meta word. whole, when not nil, holds
// for each term that ends in a prefix the (tagged) words of the index the
// prefix begins, for an engine to search for instead (SearchIndex.expand).
//
// apart are meta words every document found must hold too, checked on
// each one read rather than asked of the index (see projectApart).
type searchMatch struct {
	tag   string
	terms []logbook.SearchTerm
	meta  []string
	whole [][]string
	apart []string
}

// projectTag is what every word of a project's documents starts with: 8
// hex digits of a hash of the project's name. logbook's words are
// lowercase letters and digits, so tag and word read as one word to both
// engines, and a prefix of a word is a prefix of the tagged word.
func projectTag(project string) string {
	sum := sha256.Sum256([]byte("project\x00" + project))
	return hex.EncodeToString(sum[:4])
}

// metaWord stands for a value of a field (project, actor, harness, kind,
// tool) in the index: the field's initial, a 0, and 8 hex digits of a
// hash of both (a document holds five of them: they are kept short). A
// meta word has a column of its own (FTS5) or no position (PostgreSQL),
// and a text's word of that shape (the field's initial, 0 and hex) meets
// it only by chance; rows are checked anyway.
func metaWord(field, value string) string {
	sum := sha256.Sum256([]byte(field + "\x00" + value))
	return field[:1] + "0" + hex.EncodeToString(sum[:4])
}

// docContext is what a session gives each of its documents: its project's
// tag and its meta words.
type docContext struct {
	tag  string
	meta []string
}

func sessionContext(idx SearchIndex, project, actor, harness string) docContext {
	tag, meta := idx.scope(project)
	return docContext{tag: tag, meta: append(meta, metaWord("actor", actor), metaWord("harness", harness))}
}

// projectMatch is a search of a project's documents for terms.
func projectMatch(idx SearchIndex, project string, terms []logbook.SearchTerm) searchMatch {
	tag, meta := idx.scope(project)
	return searchMatch{tag: tag, terms: terms, meta: meta}
}

// newDoc cuts text into a document of a session's, with more meta words.
func newDoc(text string, c docContext, meta ...string) searchDoc {
	words, extra := logbook.SearchWords(text)
	d := searchDoc{words: make([]string, 0, len(words)+len(extra)), meta: append(slices.Clip(c.meta), meta...)}
	for _, w := range words {
		d.words = append(d.words, c.tag+w.Word)
	}
	for _, w := range extra {
		d.words = append(d.words, c.tag+w.Word)
	}
	return d
}

// sessionDoc is a session's document.
func sessionDoc(idx SearchIndex, s *logbook.Session) searchDoc {
	return newDoc(logbook.SessionSearchText(*s), sessionContext(idx, s.Project, s.Actor, s.Harness))
}

// entryDocOf is an entry's document in its session's context.
func entryDocOf(en *logbook.Entry, c docContext) searchDoc {
	meta := []string{metaWord("kind", string(en.Kind))}
	if en.Tool != "" {
		meta = append(meta, metaWord("tool", en.Tool))
	}
	return newDoc(logbook.EntrySearchText(*en), c, meta...)
}

// searchChanged reports whether an update changes what a session's
// document holds.
func searchChanged(s, was *logbook.Session) bool {
	return was == nil || s.Title != was.Title || s.Goal != was.Goal || s.Result != was.Result
}

// indexSession writes a session's document.
func (e executor) indexSession(ctx context.Context, s *logbook.Session) error {
	return e.d.Search.writeSession(ctx, e.writingOther(), s.ID, sessionDoc(e.d.Search, s), false)
}

// indexEntries writes the documents of entries just inserted, whose ids
// are given by session and seq.
func (e executor) indexEntries(ctx context.Context, entries []logbook.Entry, ids map[entryKey]int64, mode writeMode) error {
	contexts := map[string]docContext{}
	docs := make([]entryDoc, 0, len(ids))
	for i := range entries {
		en := &entries[i]
		id, ok := ids[entryKey{en.SessionID, en.Seq}]
		if !ok {
			continue // skipped: its key was there already
		}
		c, ok := contexts[en.SessionID]
		if !ok {
			var err error
			if c, err = e.sessionDocContext(ctx, en.SessionID); err != nil {
				return err
			}
			contexts[en.SessionID] = c
		}
		docs = append(docs, entryDoc{id, entryDocOf(en, c)})
	}
	if len(docs) == 0 {
		return nil
	}
	if mode == newDocs && e.docs != nil {
		e.docs.add(docs, ids)
		return nil
	}
	return e.d.Search.writeEntries(ctx, e, docs, mode)
}

// txDocs are the documents of the entries a transaction inserted, kept
// until it commits. FTS5 writes what it was given to the database at every
// savepoint, and the group committer runs each request under one: written
// as each request inserts its entry, the index would gain a segment per
// request and spend its writes merging them (`logbook bench`: a fifth
// fewer entries a second). On PostgreSQL each write is a round trip, and
// a group of requests one statement instead of one each. Kept, they are
// one write at the commit; a savepoint rolled back takes its documents
// back, and an entry taken back or deleted in the same transaction loses
// its document then.
type txDocs struct {
	docs  []pendingDoc
	marks []int // len(docs) at each open savepoint
	// beforeMark: documents added now belong before the latest savepoint
	// (held entries written before it was sent; see heldWrites.write).
	beforeMark bool
}

// pendingDoc is an entry's document and the entry it is for.
type pendingDoc struct {
	key entryKey
	doc entryDoc
}

func (t *txDocs) add(docs []entryDoc, ids map[entryKey]int64) {
	byID := make(map[int64]entryKey, len(ids))
	for k, id := range ids {
		byID[id] = k
	}
	add := make([]pendingDoc, len(docs))
	for i, d := range docs {
		add[i] = pendingDoc{byID[d.id], d}
	}
	if !t.beforeMark || len(t.marks) == 0 {
		t.docs = append(t.docs, add...)
		return
	}
	at := t.marks[len(t.marks)-1]
	t.docs = slices.Insert(t.docs, at, add...)
	t.marks[len(t.marks)-1] += len(add)
}

func (t *txDocs) savepoint() {
	if t != nil {
		t.marks = append(t.marks, len(t.docs))
	}
}

func (t *txDocs) rollbackToSavepoint() {
	if t != nil && len(t.marks) > 0 {
		t.docs = t.docs[:t.marks[len(t.marks)-1]]
	}
}

func (t *txDocs) releaseSavepoint() {
	if t != nil && len(t.marks) > 0 {
		t.marks = t.marks[:len(t.marks)-1]
	}
}

// flushDocs writes the documents kept for the commit: the last one of each
// entry, of the entries that are still there as they were (see
// SearchIndex.writeKept).
func (t *txStore) flushDocs(ctx context.Context) error {
	if len(t.docs.docs) == 0 {
		return nil
	}
	last := map[int64]pendingDoc{}
	for _, d := range t.docs.docs {
		last[d.doc.id] = d
	}
	t.docs.docs = nil
	return t.d.Search.writeKept(ctx, t.executor, last)
}

// writeKept reads which of the entries are still there as they were (a
// taken-back entry's rowid may have gone to a new one), then writes their
// documents.
func (fts5Index) writeKept(ctx context.Context, t executor, last map[int64]pendingDoc) error {
	const chunk = 500
	ids := slices.Sorted(maps.Keys(last))
	var docs []entryDoc
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		q := &query{}
		list := make([]string, len(part))
		for i, id := range part {
			list[i] = q.arg(id)
		}
		rows, err := t.query(ctx, `SELECT id, session_id, seq FROM entries WHERE id IN (`+strings.Join(list, ", ")+`)`, q.args...)
		if err != nil {
			return t.interpretError(err, "indexing entries")
		}
		for rows.Next() {
			var id int64
			var k entryKey
			if err := rows.Scan(&id, &k.session, &k.seq); err != nil {
				rows.Close()
				return t.interpretError(err, "indexing entries")
			}
			if d := last[id]; d.key == k {
				docs = append(docs, d.doc)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return t.interpretError(err, "indexing entries")
		}
	}
	return fts5Index{}.writeEntries(ctx, t, docs, newDocs)
}

// entryKey names an entry by its session and number.
type entryKey struct {
	session string
	seq     int64
}

// sessionDocContext reads what a session gives its entries' documents.
func (e executor) sessionDocContext(ctx context.Context, id string) (docContext, error) {
	if s, ok := e.txRows.get(id); ok {
		return sessionContext(e.d.Search, s.Project, s.Actor, s.Harness), nil
	}
	if o, ok := e.owners[id]; ok {
		return sessionContext(e.d.Search, o.project, o.actor, o.harness), nil
	}
	var project, actor, harness string
	err := e.queryRow(ctx, `SELECT project, actor, harness FROM sessions WHERE id = $1`, id).Scan(&project, &actor, &harness)
	if err != nil {
		return docContext{}, e.interpretError(err, "reading the session of entries to index")
	}
	return sessionContext(e.d.Search, project, actor, harness), nil
}

// Search finds what matches a query; see store.Executor. The engine finds
// the newest matching documents (their text clipped to
// logbook.MaxSearchScored), logbook.SearchScore ranks them, and the rows
// of the page asked for are read whole.
func (e executor) Search(ctx context.Context, p store.SearchParams) (store.SearchResult, error) {
	e = e.forReadAcross(ctx)
	terms, err := logbook.ParseSearch(p.Query)
	if err != nil {
		return store.SearchResult{}, err
	}
	f := p.Filter
	m, err := e.d.Search.expand(ctx, e, projectMatch(e.d.Search, p.Project, terms))
	if err != nil {
		return store.SearchResult{}, err
	}
	for _, eq := range []struct{ field, value string }{{"actor", f.Actor}, {"harness", f.Harness}} {
		if eq.value != "" {
			m.meta = append(m.meta, metaWord(eq.field, eq.value))
		}
	}
	type candidate struct {
		score   float64
		entry   int64
		session string
	}
	var found []candidate
	res := store.SearchResult{}
	if f.Kind != logbook.KindSession {
		em := m
		em.meta = slices.Clone(m.meta)
		if f.Kind != "" {
			em.meta = append(em.meta, metaWord("kind", string(f.Kind)))
		}
		if f.Tool != "" {
			em.meta = append(em.meta, metaWord("tool", f.Tool))
		}
		entries, capped, err := e.entryCandidates(ctx, p, em)
		if err != nil {
			return res, err
		}
		for _, en := range entries {
			found = append(found, candidate{score: logbook.SearchScore(logbook.EntrySearchText(en), terms), entry: en.ID})
		}
		res.Capped = capped
	}
	if (f.Kind == "" || f.Kind == logbook.KindSession) && f.Tool == "" {
		sessions, capped, err := e.sessionCandidates(ctx, p, m)
		if err != nil {
			return res, err
		}
		for _, s := range sessions {
			// A session's own words say what it was about: they weigh twice.
			found = append(found, candidate{score: 2 * logbook.SearchScore(logbook.SessionSearchText(s), terms), session: s.ID})
		}
		res.Capped = res.Capped || capped
	}
	// Best first; among equals, entries newest first, then sessions.
	slices.SortStableFunc(found, func(a, b candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.entry, a.entry); c != 0 {
			return c
		}
		return strings.Compare(b.session, a.session)
	})
	res.Ranked = len(found)
	page := found[min(p.Offset, len(found)):min(p.Offset+p.Limit, len(found))]
	var entryIDs []int64
	var sessionIDs []string
	for _, c := range page {
		if c.session != "" {
			sessionIDs = append(sessionIDs, c.session)
		} else {
			entryIDs = append(entryIDs, c.entry)
		}
	}
	entries, err := e.entriesByID(ctx, entryIDs)
	if err != nil {
		return res, err
	}
	for _, en := range entries {
		sessionIDs = append(sessionIDs, en.SessionID)
	}
	sessions, err := e.sessionsByID(ctx, sessionIDs)
	if err != nil {
		return res, err
	}
	for _, c := range page {
		hit := store.SearchHit{Score: c.score}
		if c.session == "" {
			en, ok := entries[c.entry]
			if !ok {
				continue // deleted since it was found
			}
			hit.Entry = &en
			c.session = en.SessionID
		}
		s, ok := sessions[c.session]
		if !ok || s.Project != p.Project || f.Actor != "" && s.Actor != f.Actor || f.Harness != "" && s.Harness != f.Harness ||
			hit.Entry != nil && (f.Kind != "" && hit.Entry.Kind != f.Kind || f.Tool != "" && hit.Entry.Tool != f.Tool) {
			continue // a hash clash of the project's tag or a meta word
		}
		hit.Session = s
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
}

// entryCandidates reads the p.Candidates newest entries whose documents
// match m and that pass p.Filter's outcome and since, newest first, with
// what SearchScore reads of them (their kind, tool, and text and payload
// clipped to logbook.MaxSearchScored), and says whether there were more.
//
// An engine whose index finds matches in no order (PostgreSQL's GIN) is
// asked first about the newest 16·p.Candidates documents only, tested one
// by one: enough when the words are common ("the"). When those hold too
// few matches, it is asked about windows of the newest entry ids, the
// first as wide as the matches found there say is needed, growing until
// they hold enough matches or every entry: the matches it reads are about
// those of the last window, not every match of the words. (At a million
// sessions, "connection refused" matches 15,500 entries, 71 of the newest
// 8,000.)
func (e executor) entryCandidates(ctx context.Context, p store.SearchParams, m searchMatch) ([]logbook.Entry, bool, error) {
	find := func(m searchMatch, newest, after int64) ([]int64, error) {
		q := &query{}
		newestArg, afterArg := "", ""
		if newest > 0 {
			newestArg = q.arg(newest)
		} else {
			afterArg = q.arg(after)
		}
		if p.Filter.Outcome != "" {
			q.and("s.outcome = " + q.arg(string(p.Filter.Outcome)))
		}
		if !p.Filter.Since.IsZero() {
			q.and("e.at >= " + q.arg(micros(p.Filter.Since)))
		}
		var ids []int64
		_, err := e.scanCandidates(ctx, e.d.Search.entryCandidates(q, m, q.whereSQL(), newestArg, afterArg, q.arg(p.Candidates)), q.args,
			func(rows *sql.Rows) error {
				var id int64
				err := rows.Scan(&id)
				ids = append(ids, id)
				return err
			})
		return ids, err
	}
	found := func(ids []int64) ([]logbook.Entry, bool, error) {
		// What SearchScore reads of them is read apart: joined in the
		// queries above, it led PostgreSQL's planner to walk every entry.
		entries, err := e.entryTexts(ctx, ids)
		return entries, len(ids) >= p.Candidates, err
	}
	if e.d.Search.newestFirst() {
		ids, err := find(m, 0, 0)
		if err != nil {
			return nil, false, err
		}
		return found(ids)
	}

	tested := int64(16 * p.Candidates)
	ids, err := find(m, tested, 0)
	if err != nil {
		return nil, false, err
	}
	if len(ids) >= p.Candidates {
		return found(ids)
	}
	var newest int64
	if err := e.queryRow(ctx, `SELECT COALESCE(MAX(id), 0) FROM entries`).Scan(&newest); err != nil {
		return nil, false, e.interpretError(err, "searching")
	}
	m, err = e.projectApart(ctx, p.Project, m)
	if err != nil {
		return nil, false, err
	}
	// The first window: as wide as the matches among the newest documents
	// say is needed, and half as much again, or 16 times as wide when
	// there were none.
	span := 16 * tested
	if len(ids) > 0 {
		span = max(2*tested, tested*int64(3*p.Candidates)/int64(2*len(ids)))
	}
	for {
		lo := newest - span
		if span >= newest/4 {
			// A window of a quarter of the entries or more reads about
			// as many rows as every match: one question, not two.
			lo = 0
		}
		ids, err := find(m, 0, lo)
		if err != nil {
			return nil, false, err
		}
		if len(ids) < p.Candidates && lo > 0 {
			// A wider window: as much wider as the matches found say is
			// needed, and half as much again, or 16 times when it found
			// none.
			grow := int64(16)
			if len(ids) > 0 {
				grow = max(4, int64(3*p.Candidates/(2*len(ids)))+1)
			}
			span *= grow
			continue
		}
		return found(ids)
	}
}

// projectApart returns m with its project's word checked on each row
// read instead of asked of the index (searchMatch.apart) when the
// project wrote at least half of the newest documents: the index then
// reads most of that word's long list of documents to answer a window of
// a few hundred matches (11 ms of a search's 13 at a million sessions in
// one project), and a row of another project is seldom read. A project
// that wrote less keeps its word in the index's question, so a search of
// a small project does not read the matches of the others.
func (e executor) projectApart(ctx context.Context, project string, m searchMatch) (searchMatch, error) {
	_, words := e.d.Search.scope(project)
	if len(words) != 1 {
		return m, nil // the project is in the words' tag
	}
	q := &query{}
	var share float64
	if err := e.queryRow(ctx, e.d.Search.newestShare(q, words[0], q.arg(1000)), q.args...).Scan(&share); err != nil {
		return m, e.interpretError(err, "searching")
	}
	if share < 0.5 {
		return m, nil
	}
	apart := m
	apart.meta = slices.DeleteFunc(slices.Clone(m.meta), func(w string) bool { return w == words[0] })
	apart.apart = append(slices.Clone(m.apart), words[0])
	return apart, nil
}

// sessionCandidates reads the p.Candidates newest sessions whose documents
// match m and that pass p.Filter's outcome and since, with what
// SearchScore reads of them, and says whether there were more.
//
// An engine whose index finds matches in no order (PostgreSQL's GIN) is
// asked first about the newest 16·p.Candidates documents only, tested one
// by one: enough when the words are common. When they hold too few
// matches, the index finds every match, few by then, and they are sorted.
// (Walking every document backwards took 1.2 s for a rare word at a
// million sessions; sorting every match of "the" 0.8 s.)
func (e executor) sessionCandidates(ctx context.Context, p store.SearchParams, m searchMatch) ([]logbook.Session, bool, error) {
	for _, newestOnly := range []bool{!e.d.Search.newestFirst(), false} {
		q := &query{}
		q.and("s.id <> ''") // so the conditions are never empty
		if p.Filter.Outcome != "" {
			q.and("s.outcome = " + q.arg(string(p.Filter.Outcome)))
		}
		if !p.Filter.Since.IsZero() {
			q.and("s.last_seen_at >= " + q.arg(micros(p.Filter.Since)))
		}
		newest := ""
		if newestOnly {
			newest = q.arg(16 * p.Candidates)
		}
		var sessions []logbook.Session
		stmt := e.d.Search.sessionCandidates(q, m, "s.id, s.title, s.goal, s.result", q.whereSQL(), newest, q.arg(p.Candidates))
		n, err := e.scanCandidates(ctx, stmt, q.args, func(rows *sql.Rows) error {
			var s logbook.Session
			err := rows.Scan(&s.ID, &s.Title, &s.Goal, &s.Result)
			sessions = append(sessions, s)
			return err
		})
		if err != nil {
			return nil, false, err
		}
		if newestOnly && n < p.Candidates {
			continue
		}
		return sessions, n >= p.Candidates, nil
	}
	panic("unreachable: the last pass returns")
}

// entryTexts reads the entries of ids, newest first, as entryCandidates
// gives them.
func (e executor) entryTexts(ctx context.Context, ids []int64) ([]logbook.Entry, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	clip := func(column string) string {
		return "SUBSTR(" + column + ", 1, " + strconv.Itoa(logbook.MaxSearchScored) + ")"
	}
	q := &query{}
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = q.arg(id)
	}
	rows, err := e.query(ctx, `SELECT e.id, e.kind, `+clip("e.text")+`, e.tool, `+clip("e.payload")+` FROM entries e
		WHERE e.id IN (`+strings.Join(list, ", ")+`) ORDER BY e.id DESC`, q.args...)
	if err != nil {
		return nil, e.interpretError(err, "searching")
	}
	defer rows.Close()
	var entries []logbook.Entry
	for rows.Next() {
		var en logbook.Entry
		var payload sql.NullString
		if err := rows.Scan(&en.ID, &en.Kind, &en.Text, &en.Tool, &payload); err != nil {
			return nil, e.interpretError(err, "searching")
		}
		en.Payload = json.RawMessage(payload.String)
		entries = append(entries, en)
	}
	return entries, e.interpretError(rows.Err(), "searching")
}

// freshPlan puts the dialect's FreshPlan before args.
func (e executor) freshPlan(args []any) []any {
	if e.d.FreshPlan == nil {
		return args
	}
	return append([]any{e.d.FreshPlan}, args...)
}

// scanCandidates runs a query of candidates, calling scan for each row,
// and says how many rows it read.
func (e executor) scanCandidates(ctx context.Context, stmt string, args []any, scan func(*sql.Rows) error) (int, error) {
	rows, err := e.query(ctx, stmt, e.freshPlan(args)...)
	if err != nil {
		return 0, e.interpretError(err, "searching")
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := scan(rows); err != nil {
			return n, e.interpretError(err, "searching")
		}
		n++
	}
	return n, e.interpretError(rows.Err(), "searching")
}

// entriesByID reads entries by id.
func (e executor) entriesByID(ctx context.Context, ids []int64) (map[int64]logbook.Entry, error) {
	out := map[int64]logbook.Entry{}
	if len(ids) == 0 {
		return out, nil
	}
	q := &query{}
	list := make([]string, len(ids))
	for i, id := range ids {
		list[i] = q.arg(id)
	}
	rows, err := e.query(ctx, `SELECT `+entryColumns+` FROM entries WHERE id IN (`+strings.Join(list, ", ")+`)`, q.args...)
	if err != nil {
		return nil, e.interpretError(err, "reading entries found")
	}
	defer rows.Close()
	for rows.Next() {
		en, err := scanEntry(rows)
		if err != nil {
			return nil, e.interpretError(err, "reading entries found")
		}
		out[en.ID] = en
	}
	return out, e.interpretError(rows.Err(), "reading entries found")
}

// sessionsByID reads sessions by id.
func (e executor) sessionsByID(ctx context.Context, ids []string) (map[string]logbook.Session, error) {
	out := map[string]logbook.Session{}
	if len(ids) == 0 {
		return out, nil
	}
	q := &query{}
	var list []string
	for _, id := range slices.Compact(slices.Sorted(slices.Values(ids))) {
		list = append(list, q.arg(id))
	}
	rows, err := e.query(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id IN (`+strings.Join(list, ", ")+`)`, q.args...)
	if err != nil {
		return nil, e.interpretError(err, "reading sessions found")
	}
	sessions, err := e.collectSessions(rows, "reading sessions found")
	for _, s := range sessions {
		out[s.ID] = s
	}
	return out, err
}

// sessionQueryCondition is the condition a list's q puts on sessions: its
// document matches the search. Two ways answer it: reading every matching
// session first, then the list's page of them (the cost grows with how
// many match), or walking the list in its order and checking each
// session against the matching documents, read once (the cost grows with
// how far the page's sessions lie, about a page over the share of
// sessions that match). With n of N sessions matching, the first costs
// about n and the second 51·N/n lookups: it counts the matching sessions
// up to √(51·N), where the two meet, to choose.
func (e executor) sessionQueryCondition(ctx context.Context, q *query, project, search string) (string, error) {
	terms, err := logbook.ParseSearch(search)
	if err != nil {
		return "", err
	}
	m, err := e.d.Search.expand(ctx, e, projectMatch(e.d.Search, project, terms))
	if err != nil {
		return "", err
	}
	var total float64
	if err := e.queryRow(ctx, e.d.Search.sessionsTotal()).Scan(&total); err != nil {
		return "", e.interpretError(err, "counting the sessions the search index holds")
	}
	threshold := max(int(math.Sqrt(51*total)), 100)
	count := &query{}
	var n int
	if err := e.queryRow(ctx, e.d.Search.sessionsCount(count, m, count.arg(threshold)), e.freshPlan(count.args)...).Scan(&n); err != nil {
		return "", e.interpretError(err, "counting the sessions a search matches")
	}
	if n >= threshold {
		return e.d.Search.sessionMatches(q, m), nil
	}
	return e.d.Search.sessionsMatching(q, m), nil
}

// The backfill: what was written before the index was made.

func (s *Store) SearchPending(ctx context.Context) (int64, error) {
	var n int64
	err := s.queryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM entries e, search_backfill b WHERE e.id > b.entries_after AND e.id <= b.entries_upto) +
		(SELECT COUNT(*) FROM sessions s, search_backfill b WHERE s.id > b.sessions_after AND s.id <= b.sessions_upto)`).Scan(&n)
	return n, s.interpretError(err, "counting what the search index lacks")
}

func (s *Store) SearchBackfill(ctx context.Context, limit int) (indexed int, finished bool, err error) {
	tx, err := s.begin(ctx)
	if err != nil {
		return 0, false, err
	}
	defer tx.Rollback()
	var entriesAfter, entriesUpto int64
	var sessionsAfter, sessionsUpto string
	if err := tx.queryRow(ctx, `SELECT entries_after, entries_upto, sessions_after, sessions_upto FROM search_backfill`).
		Scan(&entriesAfter, &entriesUpto, &sessionsAfter, &sessionsUpto); err != nil {
		return 0, false, tx.interpretError(err, "reading the search backfill")
	}
	switch {
	case entriesAfter < entriesUpto:
		rows, err := tx.query(ctx, `SELECT `+entryColumns+` FROM entries WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`,
			entriesAfter, entriesUpto, limit)
		if err != nil {
			return 0, false, tx.interpretError(err, "reading entries to index")
		}
		var entries []logbook.Entry
		for rows.Next() {
			en, err := scanEntry(rows)
			if err != nil {
				rows.Close()
				return 0, false, tx.interpretError(err, "reading entries to index")
			}
			entries = append(entries, en)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, false, tx.interpretError(err, "reading entries to index")
		}
		ids := make(map[entryKey]int64, len(entries))
		for _, en := range entries {
			ids[entryKey{en.SessionID, en.Seq}] = en.ID
		}
		if err := tx.indexEntries(ctx, entries, ids, backfillDocs); err != nil {
			return 0, false, err
		}
		after := entriesUpto
		if len(entries) == limit {
			after = entries[len(entries)-1].ID
		}
		if _, err := tx.exec(ctx, `UPDATE search_backfill SET entries_after = $1`, after); err != nil {
			return 0, false, tx.interpretError(err, "recording the search backfill")
		}
		indexed = len(entries)
	case sessionsAfter < sessionsUpto:
		rows, err := tx.query(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`,
			sessionsAfter, sessionsUpto, limit)
		if err != nil {
			return 0, false, tx.interpretError(err, "reading sessions to index")
		}
		sessions, err := tx.collectSessions(rows, "reading sessions to index")
		if err != nil {
			return 0, false, err
		}
		for i := range sessions {
			if err := tx.d.Search.writeSession(ctx, tx.executor, sessions[i].ID, sessionDoc(tx.d.Search, &sessions[i]), true); err != nil {
				return 0, false, err
			}
		}
		after := sessionsUpto
		if len(sessions) == limit {
			after = sessions[len(sessions)-1].ID
		}
		if _, err := tx.exec(ctx, `UPDATE search_backfill SET sessions_after = $1`, after); err != nil {
			return 0, false, tx.interpretError(err, "recording the search backfill")
		}
		indexed = len(sessions)
	default:
		return 0, true, nil
	}
	if err := tx.Commit(); err != nil {
		return 0, false, err
	}
	return indexed, false, nil
}

func (s *Store) SearchRebuild(ctx context.Context) error {
	tx, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := s.d.Search.clear(ctx, tx.executor); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `UPDATE search_backfill SET entries_after = 0, sessions_after = '',
		entries_upto = COALESCE((SELECT MAX(id) FROM entries), 0), sessions_upto = COALESCE((SELECT MAX(id) FROM sessions), '')`); err != nil {
		return tx.interpretError(err, "restarting the search backfill")
	}
	return tx.Commit()
}

// FTS5 keeps the index in SQLite's FTS5: one contentless table, search,
// whose body column holds a document's words separated by spaces and meta
// its meta words. The rowid is the entry's id, or minus the session's id
// in session_docs. See migration 0015.
var FTS5 SearchIndex = fts5Index{}

type fts5Index struct{}

func (fts5Index) writeEntries(ctx context.Context, e executor, docs []entryDoc, mode writeMode) error {
	// A backfilled entry may have been indexed meanwhile: SQLite gives a
	// deleted entry's id to the next one.
	verb := "INSERT OR REPLACE"
	if mode == newDocs {
		verb = "INSERT"
	}
	// One statement for every document, their values in one JSON array:
	// FTS5 writes what it holds to the database at each statement (a
	// statement is a savepoint), so statements of a hundred rows each made
	// a segment each, to be merged.
	rows := make([][3]any, len(docs))
	for i, d := range docs {
		rows[i] = [3]any{d.id, strings.Join(d.doc.words, " "), strings.Join(d.doc.meta, " ")}
	}
	values, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	_, err = e.exec(ctx, verb+` INTO search (rowid, body, meta)
		SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each($1)`, string(values))
	return e.interpretError(err, "indexing entries")
}

func (fts5Index) writeSession(ctx context.Context, e executor, sessionID string, d searchDoc, _ bool) error {
	var id int64
	if err := e.queryRow(ctx, `INSERT INTO session_docs (session_id) VALUES ($1)
		ON CONFLICT (session_id) DO UPDATE SET session_id = excluded.session_id RETURNING id`, sessionID).Scan(&id); err != nil {
		return e.interpretError(err, "indexing session")
	}
	_, err := e.exec(ctx, `INSERT OR REPLACE INTO search (rowid, body, meta) VALUES ($1, $2, $3)`,
		-id, strings.Join(d.words, " "), strings.Join(d.meta, " "))
	return e.interpretError(err, "indexing session")
}

// ftsMatch writes m as an FTS5 query: {body}: (every term) AND {meta}:
// (every meta word), a term a phrase of its tagged words, "*" after a
// prefix, or, for a prefix expanded, the phrases that end in each whole
// word it begins, ORed.
func ftsMatch(m searchMatch) string {
	quote := func(w string) string { return `"` + strings.ReplaceAll(w, `"`, `""`) + `"` }
	var body, meta []string
	for i, t := range m.terms {
		words := make([]string, len(t.Words))
		for i, w := range t.Words {
			words[i] = m.tag + w
		}
		if m.whole != nil && len(m.whole[i]) > 0 {
			var phrases []string
			for _, w := range m.whole[i] {
				words[len(words)-1] = w
				phrases = append(phrases, quote(strings.Join(words, " ")))
			}
			body = append(body, "("+strings.Join(phrases, " OR ")+")")
			continue
		}
		phrase := quote(strings.Join(words, " "))
		if t.Prefix {
			phrase += " *"
		}
		body = append(body, phrase)
	}
	match := "{body} : (" + strings.Join(body, " AND ") + ")"
	for _, w := range slices.Concat(m.meta, m.apart) {
		meta = append(meta, quote(w))
	}
	if len(meta) > 0 {
		match += " AND {meta} : (" + strings.Join(meta, " AND ") + ")"
	}
	return match
}

func (fts5Index) entryCandidates(q *query, m searchMatch, where, _, after, limit string) string {
	joins := ""
	if where != "" {
		joins, where = " JOIN entries e ON e.id = x.rowid JOIN sessions s ON s.id = e.session_id", " AND "+where
	}
	return `SELECT x.rowid FROM search x` + joins + `
		WHERE search MATCH ` + q.arg(ftsMatch(m)) + ` AND x.rowid > ` + after + where + `
		ORDER BY x.rowid DESC LIMIT ` + limit
}

func (fts5Index) sessionCandidates(q *query, m searchMatch, columns, where, _, limit string) string {
	// Sessions' rowids are negative, the newest document the lowest.
	return `SELECT ` + columns + ` FROM search x
		JOIN session_docs d ON d.id = -x.rowid JOIN sessions s ON s.id = d.session_id
		WHERE search MATCH ` + q.arg(ftsMatch(m)) + ` AND x.rowid < 0 AND ` + where + `
		ORDER BY x.rowid LIMIT ` + limit
}

func (fts5Index) sessionsMatching(q *query, m searchMatch) string {
	return `s.id IN (SELECT d.session_id FROM search x JOIN session_docs d ON d.id = -x.rowid
		WHERE search MATCH ` + q.arg(ftsMatch(m)) + ` AND x.rowid < 0)`
}

func (fts5Index) sessionMatches(q *query, m searchMatch) string {
	// The matching rowids are read once, into a set each session is
	// looked up in (asking the index about each session's rowid costs
	// ten times as much).
	return `EXISTS (SELECT 1 FROM session_docs d WHERE d.session_id = s.id
		AND -d.id IN (SELECT rowid FROM search WHERE search MATCH ` + q.arg(ftsMatch(m)) + ` AND rowid < 0))`
}

func (fts5Index) sessionsCount(q *query, m searchMatch, limit string) string {
	return `SELECT COUNT(*) FROM (SELECT 1 FROM search WHERE search MATCH ` + q.arg(ftsMatch(m)) + ` AND rowid < 0 LIMIT ` + limit + `) AS found`
}

func (fts5Index) sessionsTotal() string {
	return `SELECT CAST(COALESCE(MAX(id), 0) AS REAL) FROM session_docs` // ids count up
}

func (fts5Index) newestFirst() bool { return true }

// maxExpanded is how many words a prefix may begin for FTS5 to be asked
// for those words instead of the prefix. Each word ORed costs FTS5 a look
// in each segment of the index whether it matches or not (at a million
// sessions: 64 words 1.7 ms, 300 words 15 ms).
const maxExpanded = 64

// expand reads the words each prefix of m begins from search_vocab, and
// gives m those of every prefix that begins at most maxExpanded. FTS5
// answers a prefix by merging the entries of every word it begins, in
// every document, into one list before it can take the newest ("migrat*"
// at a million sessions: 270,000 entries, 13 ms for each of a search's
// two queries); the same words ORed are read newest first, and stop at the
// limit. Reading the words reads their entries once (fts5vocab counts
// them): 40-75% of the cost of one merge, and a search made two. A prefix
// that begins more words (a short one) stays a prefix: ORing them costs
// more.
func (fts5Index) expand(ctx context.Context, e executor, m searchMatch) (searchMatch, error) {
	for i, t := range m.terms {
		if !t.Prefix {
			continue
		}
		prefix := m.tag + t.Words[len(t.Words)-1]
		// Every word the prefix begins sorts before the prefix and a
		// byte no UTF-8 text holds.
		rows, err := e.query(ctx, `SELECT term FROM search_vocab WHERE term >= $1 AND term < $2 LIMIT $3`,
			prefix, prefix+"\xff", maxExpanded+1)
		if err != nil {
			return m, e.interpretError(err, "reading the words a prefix begins")
		}
		var words []string
		for rows.Next() {
			var w string
			if err := rows.Scan(&w); err != nil {
				rows.Close()
				return m, e.interpretError(err, "reading the words a prefix begins")
			}
			words = append(words, w)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return m, e.interpretError(err, "reading the words a prefix begins")
		}
		if len(words) == 0 || len(words) > maxExpanded {
			continue // nothing to merge, or too much to OR
		}
		if m.whole == nil {
			m.whole = make([][]string, len(m.terms))
		}
		m.whole[i] = words
	}
	return m, nil
}

func (fts5Index) scope(project string) (string, []string) { return projectTag(project), nil }

// newestShare is never asked of FTS5: a project's documents stand apart
// by the tag of their words, not a meta word (see projectApart).
func (fts5Index) newestShare(_ *query, _, _ string) string { return `SELECT 0.0` }

func (fts5Index) clear(ctx context.Context, e executor) error {
	if _, err := e.exec(ctx, `DELETE FROM session_docs`); err != nil {
		return e.interpretError(err, "emptying the search index")
	}
	_, err := e.exec(ctx, `INSERT INTO search (search) VALUES ('delete-all')`)
	return e.interpretError(err, "emptying the search index")
}

// TSVector keeps the index in PostgreSQL tsvector columns with GIN
// indexes: entry_docs and session_docs. logbook writes each tsvector out
// itself ('word':1,4 'other':2 …), so PostgreSQL's parser never cuts the
// words again. See migration 0015.
var TSVector SearchIndex = tsvectorIndex{}

type tsvectorIndex struct{}

// tsvector writes a document as a tsvector's text: each word with its
// positions (from 1; PostgreSQL keeps 256 of a word's positions, up to
// 16383), each meta word without. Every entry written on PostgreSQL goes
// through it, so it allocates little: the occurrences of a word are
// chained through one slice rather than kept in a slice of their own.
func tsvector(d searchDoc) string {
	const maxPosition, maxPositions = 16383, 256
	// first[w] is the index in d.words of w's first occurrence; next[i]
	// the index of the occurrence after the i-th (0: none, as the first
	// occurrence never follows another), count[i] how many a first one
	// has.
	first := make(map[string]int, len(d.words))
	next, last, count := make([]int, len(d.words)), make([]int, len(d.words)), make([]int, len(d.words))
	size := 0
	for i, w := range d.words {
		f, seen := first[w]
		if !seen {
			first[w], last[i], count[i] = i, i, 1
			size += len(w) + 4
			continue
		}
		if count[f] < maxPositions {
			next[last[f]], last[f] = i, i
			count[f]++
		}
		size += 6
	}
	var b strings.Builder
	b.Grow(size + 16*len(d.meta))
	for i, w := range d.words {
		if first[w] != i {
			continue
		}
		writeLexeme(&b, w)
		prev := 0
		for j, sep := i, byte(':'); ; sep = ',' {
			if p := min(j+1, maxPosition); p != prev { // past maxPosition every position is the same
				b.WriteByte(sep)
				b.WriteString(strconv.Itoa(p))
				prev = p
			}
			if j = next[j]; j == 0 {
				break
			}
		}
		b.WriteByte(' ')
	}
	for _, w := range d.meta {
		if _, ok := first[w]; !ok {
			writeLexeme(&b, w)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// tsLexeme quotes w as one lexeme of a tsvector or tsquery: in quotes,
// with backslashes and quotes doubled.
func tsLexeme(w string) string {
	var b strings.Builder
	b.Grow(len(w) + 2)
	writeLexeme(&b, w)
	return b.String()
}

// writeLexeme writes w to b as tsLexeme quotes it. (A strings.Replacer
// built per call cost 9% of a one-entry append's CPU on PostgreSQL.)
func writeLexeme(b *strings.Builder, w string) {
	b.WriteByte('\'')
	for i := 0; i < len(w); i++ {
		if c := w[i]; c == '\\' || c == '\'' {
			b.WriteByte(c)
		}
		b.WriteByte(w[i])
	}
	b.WriteByte('\'')
}

// tsQuery writes m as a tsquery: every term & every meta word, a term
// its tagged words joined by <-> (side by side), ":*" after a prefix.
func tsQuery(m searchMatch) string {
	var parts []string
	for _, t := range m.terms {
		words := make([]string, len(t.Words))
		for i, w := range t.Words {
			words[i] = tsLexeme(m.tag + w)
		}
		if t.Prefix {
			words[len(words)-1] += ":*"
		}
		parts = append(parts, "("+strings.Join(words, " <-> ")+")")
	}
	for _, w := range m.meta {
		parts = append(parts, tsLexeme(w))
	}
	return strings.Join(parts, " & ")
}

func (tsvectorIndex) writeEntries(ctx context.Context, e executor, docs []entryDoc, mode writeMode) error {
	onConflict := ""
	switch mode {
	case backfillDocs: // a live write got there first: its document is as new
		onConflict = " ON CONFLICT (entry_id) DO NOTHING"
	case changedDocs:
		onConflict = " ON CONFLICT (entry_id) DO UPDATE SET doc = excluded.doc"
	}
	return insertEntryDocs(ctx, e, docs, `INSERT INTO entry_docs (entry_id, doc) SELECT d.id, d.doc::tsvector FROM `+entryDocsRows+onConflict)
}

// entryDocsRows are the rows insertEntryDocs passes: two arrays, the
// entries' ids and their documents. The statement's text is the same for
// any number of rows, so PostgreSQL parses it once; a VALUES list made a
// statement of its own for each count of rows, parsed and planned again.
const entryDocsRows = `unnest($1::bigint[], $2::text[]) AS d (id, doc)`

// insertEntryDocs writes entries' documents, in statements of 5,000 each,
// with query, which reads its rows from entryDocsRows.
func insertEntryDocs(ctx context.Context, e executor, docs []entryDoc, query string) error {
	const chunk = 5000
	for start := 0; start < len(docs); start += chunk {
		part := docs[start:min(start+chunk, len(docs))]
		ids, vectors := make([]int64, len(part)), make([]string, len(part))
		for i, d := range part {
			ids[i], vectors[i] = d.id, tsvector(d.doc)
		}
		if err := e.writeLater(ctx, piped{statement: statement{query, []any{ids, vectors}}, doing: "indexing entries"}); err != nil {
			return err
		}
	}
	return nil
}

func (tsvectorIndex) writeSession(ctx context.Context, e executor, sessionID string, d searchDoc, backfill bool) error {
	// The backfill read the session maybe before a live write changed it
	// and wrote its document: that one is newer.
	onConflict := " ON CONFLICT (session_id) DO UPDATE SET doc = excluded.doc"
	if backfill {
		onConflict = " ON CONFLICT (session_id) DO NOTHING"
	}
	return e.writeLater(ctx, piped{statement: statement{`INSERT INTO session_docs (session_id, doc) VALUES ($1, $2::tsvector)` + onConflict,
		[]any{sessionID, tsvector(d)}}, doing: "indexing session"})
}

func (tsvectorIndex) entryCandidates(q *query, m searchMatch, where, newest, after, limit string) string {
	docs, order := "entry_docs", "d.entry_id + 0 DESC"
	match := "d.doc @@ " + q.arg(tsQuery(m)) + "::tsquery"
	for _, w := range m.apart {
		// A function, not @@: the planner asks the index only about @@.
		match += " AND ts_match_vq(d.doc, " + q.arg(tsLexeme(w)) + "::tsquery)"
	}
	if newest != "" {
		docs, order = "(SELECT entry_id, doc FROM entry_docs ORDER BY entry_id DESC LIMIT "+newest+")", "d.entry_id DESC"
	} else {
		// The window is on entry_docs' key, which the planner ANDs with
		// GIN's matches before a row is read, through the BRIN index of
		// migration 0028 (a wide window through the key's B-tree looked
		// dearer than reading each match, as the planner thinks two
		// words' matches few: it reckons them independent). "+ 0" keeps
		// the planner from walking the key backwards, testing each row, in
		// the hope of meeting the limit soon: the window was chosen to
		// hold about limit matches, so reading them all and sorting is the
		// cheap way.
		match += " AND d.entry_id > " + after
	}
	joins := ""
	if where != "" {
		joins, where = " JOIN entries e ON e.id = d.entry_id JOIN sessions s ON s.id = e.session_id", " AND "+where
	}
	return `SELECT d.entry_id FROM ` + docs + ` d` + joins + `
		WHERE ` + match + where + `
		ORDER BY ` + order + ` LIMIT ` + limit
}

func (tsvectorIndex) sessionCandidates(q *query, m searchMatch, columns, where, newest, limit string) string {
	docs, order := "session_docs", "d.session_id || '' DESC"
	if newest != "" {
		// Session ids begin with the time the session started
		// (logbook.NewID): the newest documents are the last of the key.
		docs, order = "(SELECT session_id, doc FROM session_docs ORDER BY session_id DESC LIMIT "+newest+")", "d.session_id DESC"
	}
	// Otherwise "|| ''" keeps the planner from walking the key backwards,
	// testing each document, in the hope of meeting the limit soon: the
	// matches are few, so reading them all and sorting is the cheap way.
	return `SELECT ` + columns + ` FROM ` + docs + ` d JOIN sessions s ON s.id = d.session_id
		WHERE d.doc @@ ` + q.arg(tsQuery(m)) + `::tsquery AND ` + where + `
		ORDER BY ` + order + ` LIMIT ` + limit
}

func (tsvectorIndex) sessionsMatching(q *query, m searchMatch) string {
	return `s.id IN (SELECT d.session_id FROM session_docs d WHERE d.doc @@ ` + q.arg(tsQuery(m)) + `::tsquery)`
}

func (tsvectorIndex) sessionMatches(q *query, m searchMatch) string {
	return `EXISTS (SELECT 1 FROM session_docs d WHERE d.session_id = s.id AND d.doc @@ ` + q.arg(tsQuery(m)) + `::tsquery)`
}

func (tsvectorIndex) sessionsCount(q *query, m searchMatch, limit string) string {
	return `SELECT COUNT(*) FROM (SELECT 1 FROM session_docs WHERE doc @@ ` + q.arg(tsQuery(m)) + `::tsquery LIMIT ` + limit + `) AS found`
}

func (tsvectorIndex) sessionsTotal() string {
	// The planner's estimate, which autovacuum keeps up to date.
	return `SELECT GREATEST(reltuples, 0)::float8 FROM pg_class WHERE oid = 'session_docs'::regclass`
}

func (tsvectorIndex) newestFirst() bool { return false }

// expand returns m as it is: GIN finds the words a prefix begins in its
// sorted keys and reads their entries as those of one word.
func (tsvectorIndex) expand(_ context.Context, _ executor, m searchMatch) (searchMatch, error) {
	return m, nil
}

// writeKept writes the documents in one statement (a chunk of 500 each),
// of the entries still there: PostgreSQL never gives a deleted entry's id
// to another, so being there is enough. A document the transaction
// changed since (written at once, see indexEntries) is newer, and stays.
func (tsvectorIndex) writeKept(ctx context.Context, e executor, kept map[int64]pendingDoc) error {
	docs := make([]entryDoc, 0, len(kept))
	for _, id := range slices.Sorted(maps.Keys(kept)) {
		docs = append(docs, kept[id].doc)
	}
	return insertEntryDocs(ctx, e, docs, `INSERT INTO entry_docs (entry_id, doc)
		SELECT d.id, d.doc::tsvector FROM `+entryDocsRows+` JOIN entries e ON e.id = d.id
		ON CONFLICT (entry_id) DO NOTHING`)
}

func (tsvectorIndex) scope(project string) (string, []string) {
	return "", []string{metaWord("project", project)}
}

func (tsvectorIndex) newestShare(q *query, word, limit string) string {
	return `SELECT COALESCE(AVG((doc @@ ` + q.arg(tsLexeme(word)) + `::tsquery)::int), 0)::float8
		FROM (SELECT doc FROM entry_docs ORDER BY entry_id DESC LIMIT ` + limit + `) d`
}

func (tsvectorIndex) clear(ctx context.Context, e executor) error {
	_, err := e.exec(ctx, `DELETE FROM entry_docs`)
	if err == nil {
		_, err = e.exec(ctx, `DELETE FROM session_docs`)
	}
	return e.interpretError(err, "emptying the search index")
}
