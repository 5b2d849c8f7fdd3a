package service

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Search finds the entries of a project's sessions, and the sessions' own
// title, goal and result, that match p.Query (logbook.ParseSearch) and pass
// p.Filter: of the newest logbook.SearchCandidates matches of each, the
// best first, each with a snippet of the text around what matched. The
// cursor is opaque to callers: the next page of the same ranking.
func (s *Service) Search(ctx context.Context, c Caller, p SearchParams) (SearchPage, error) {
	project, err := c.projectFor(p.Project)
	if err != nil {
		return SearchPage{}, err
	}
	terms, err := logbook.ParseSearch(p.Query)
	if err != nil {
		return SearchPage{}, err
	}
	if err := p.Filter.Normalize(); err != nil {
		return SearchPage{}, err
	}
	switch {
	case p.Limit == 0:
		p.Limit = logbook.DefaultSearchPage
	case p.Limit < 0 || p.Limit > logbook.MaxSearchPage:
		return SearchPage{}, logbook.Invalid("limit", "give a limit from 1 to %d", logbook.MaxSearchPage)
	}
	offset, err := decodeSearchCursor(p.Cursor)
	if err != nil {
		return SearchPage{}, err
	}
	res, err := s.store.Search(ctx, store.SearchParams{Project: project, Query: p.Query, Filter: p.Filter,
		Candidates: logbook.SearchCandidates, Offset: offset, Limit: p.Limit})
	if err != nil {
		return SearchPage{}, err
	}
	page := SearchPage{Results: make([]logbook.SearchHit, 0, len(res.Hits)), Ranked: res.Ranked, More: res.Capped,
		Indexing: s.searchIndexing.Load()}
	for _, h := range res.Hits {
		page.Results = append(page.Results, searchHit(h, terms))
	}
	if next := offset + p.Limit; next < res.Ranked {
		page.NextCursor = base64.RawURLEncoding.EncodeToString([]byte("search/" + strconv.Itoa(next)))
	}
	return page, nil
}

// searchHit is what a caller sees of a match: where it is, and the text
// around it.
func searchHit(h store.SearchHit, terms []logbook.SearchTerm) logbook.SearchHit {
	s := h.Session
	hit := logbook.SearchHit{SessionID: s.ID, Title: s.Title, Actor: s.Actor, Harness: s.Harness, Outcome: s.Outcome, Score: h.Score}
	if e := h.Entry; e != nil {
		hit.Seq, hit.Field, hit.Kind, hit.Role, hit.Tool, hit.At, hit.Superseded = e.Seq, "entry", e.Kind, e.Role, e.Tool, e.At, e.Superseded
		hit.Snippet, _ = logbook.Snippet(logbook.EntrySearchText(*e), terms)
		return hit
	}
	hit.At = s.StartedAt
	fields := logbook.SessionSearchFields(s)
	for _, f := range fields {
		if snippet, ok := logbook.Snippet(f.Text, terms); ok {
			hit.Field, hit.Snippet = f.Name, snippet
			return hit
		}
	}
	if len(fields) > 0 { // no word found where it stands: the first field is shown
		hit.Field = fields[0].Name
		hit.Snippet, _ = logbook.Snippet(fields[0].Text, terms)
	}
	return hit
}

func decodeSearchCursor(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	bad := logbook.Invalid("cursor", "this cursor cannot be read; pass the next_cursor of the previous page as it was, with the same search")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, bad
	}
	offset, err := strconv.Atoi(strings.TrimPrefix(string(raw), "search/"))
	if err != nil || offset < 0 || !strings.HasPrefix(string(raw), "search/") || offset > 2*logbook.SearchCandidates {
		return 0, bad
	}
	return offset, nil
}

// searchBackfillBatch is how many entries or sessions one transaction of
// the search backfill indexes: a few milliseconds of the writer's time.
const searchBackfillBatch = 500

// BackfillSearch indexes what was written before the search index was
// made (see store.Store's SearchBackfill), a batch per transaction, so
// other writes go on between batches, and calls progress with how many it
// indexed so far of how many there were. It returns when everything is
// indexed, or with ctx's error; run again, it goes on from there.
func (s *Service) BackfillSearch(ctx context.Context, progress func(done, total int64)) error {
	total, err := s.store.SearchPending(ctx)
	if err != nil || total == 0 {
		return err
	}
	s.searchIndexing.Store(true)
	var done int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, finished, err := s.store.SearchBackfill(ctx, searchBackfillBatch)
		if err != nil {
			return err
		}
		if finished {
			s.searchIndexing.Store(false)
			return nil
		}
		done += int64(n)
		if progress != nil {
			progress(done, max(total, done))
		}
	}
}

// backfillSearch runs BackfillSearch in the background of a server,
// logging its progress every tenth of the way and retrying after a
// failure (a lost connection; on PostgreSQL, an entry deleted under it).
func (s *Service) backfillSearch(ctx context.Context) {
	logged := int64(-1)
	progress := func(done, total int64) {
		if tenth := 10 * done / max(total, 1); tenth > logged {
			logged = tenth
			s.log.InfoContext(ctx, "indexing what was written before the search index", "indexed", done, "of", total)
		}
	}
	for {
		err := s.BackfillSearch(ctx, progress)
		if err == nil || ctx.Err() != nil {
			if err == nil && logged >= 0 {
				s.log.InfoContext(ctx, "the search index holds everything")
			}
			return
		}
		s.log.WarnContext(ctx, "indexing for search failed; retrying in a minute", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Minute):
		}
	}
}
