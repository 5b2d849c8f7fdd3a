package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// searchFixture is a project with sessions and entries in English, code,
// Chinese and Japanese, and another project with the same words.
type searchFixture struct {
	st       store.Store
	login    logbook.Session // alice, claude-code: the login test
	db       logbook.Session // bob, codex: a database migration, in Chinese and Japanese
	other    logbook.Session // project q
	entries  int             // how many entries the fixture wrote
	sessions int
}

func newSearchFixture(t *testing.T, st store.Store) *searchFixture {
	t.Helper()
	f := &searchFixture{st: st}
	mk := func(project, actor, harness, goal string, started time.Time) logbook.Session {
		s := logbook.Session{ID: logbook.NewID(started), Project: project, Actor: actor, Harness: harness,
			Status: logbook.StatusActive, StartedAt: started, LastSeenAt: started, Goal: goal}
		s.DeriveTitle()
		inserted, err := st.SessionInsert(t.Context(), &s)
		if err != nil || !inserted {
			t.Fatalf("SessionInsert: %v %v", inserted, err)
		}
		f.sessions++
		return s
	}
	f.login = mk("p", "alice", "claude-code", "Fix the flaky login test", base)
	f.db = mk("p", "bob", "codex", "数据库迁移到新集群", base.Add(time.Hour))
	f.other = mk("q", "alice", "claude-code", "Fix the flaky login test elsewhere", base.Add(2*time.Hour))
	entry := func(s logbook.Session, seq int64, e logbook.Entry) logbook.Entry {
		e.SessionID, e.Seq, e.At = s.ID, seq, s.StartedAt.Add(time.Duration(seq)*time.Minute)
		return e
	}
	all := [][]logbook.Entry{{
		entry(f.login, 1, logbook.Entry{Kind: logbook.KindPrompt, Text: "The login test fails on CI; find out why"}),
		entry(f.login, 2, logbook.Entry{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t1",
			Payload: json.RawMessage(`{"command":"go test ./internal/store/... -run TestLogin"}`)}),
		entry(f.login, 3, logbook.Entry{Kind: logbook.KindToolResult, Tool: "Bash", ToolCallID: "t1",
			Text: "dial tcp 127.0.0.1:5432: connect: connection refused"}),
		entry(f.login, 4, logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant,
			Text: "The database is down. I will read the settings with parseConfigFile and retry; the migration waits."}),
		entry(f.login, 5, logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant,
			Text: "refused, refused, refused: connection refused again"}),
	}, {
		entry(f.db, 1, logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "数据库连接失败了，请检查配置"}),
		entry(f.db, 2, logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "テストが失敗しました。東京リージョンを確認します"}),
		entry(f.db, 3, logbook.Entry{Kind: logbook.KindNote, Text: "猫"}),
	}, {
		entry(f.other, 1, logbook.Entry{Kind: logbook.KindToolResult, Tool: "Bash", Text: "connection refused; 数据库连接失败"}),
	}}
	for _, entries := range all {
		insertAll(t, st, entries)
		f.entries += len(entries)
	}
	return f
}

// search runs a search in project p and returns its hits as "session:seq"
// (seq 0: the session's own fields), best first, with the fixture's
// names for sessions.
func (f *searchFixture) search(t *testing.T, q string, filter logbook.SearchFilter) []string {
	t.Helper()
	res, err := f.st.Search(t.Context(), store.SearchParams{Project: "p", Query: q, Filter: filter, Candidates: 100, Limit: 100})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return f.names(res.Hits)
}

func (f *searchFixture) names(hits []store.SearchHit) []string {
	var out []string
	for _, h := range hits {
		name := map[string]string{f.login.ID: "login", f.db.ID: "db", f.other.ID: "other"}[h.Session.ID]
		seq := int64(0)
		if h.Entry != nil {
			seq = h.Entry.Seq
			if h.Entry.SessionID != h.Session.ID {
				name += "(entry of another session)"
			}
		}
		out = append(out, fmt.Sprintf("%s:%d", name, seq))
	}
	return out
}

func testSearch(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("FindsWordsCodeAndCJK", func(t *testing.T) {
		t.Parallel()
		f := newSearchFixture(t, newStore(t))
		tests := []struct {
			q    string
			want []string // in any order
		}{
			{"login", []string{"login:0", "login:1", "login:2"}}, // 2: TestLogin
			{"LOGIN test", []string{"login:0", "login:1", "login:2"}},
			{"connection refused", []string{"login:3", "login:5"}},
			{`"refused again"`, []string{"login:5"}},
			{`"again refused"`, nil},
			{"parseConfig", []string{"login:4"}},
			{"ConfigFile", []string{"login:4"}},
			{"parseconfigfile", []string{"login:4"}},
			{"internal/store", []string{"login:2"}},
			{"TestLogin", []string{"login:2"}},
			{"127.0.0.1:5432", []string{"login:3"}},
			{"migrat*", []string{"login:4"}},
			{"migrat", nil},
			{"Bash", []string{"login:2", "login:3"}},
			{"数据库", []string{"db:0", "db:1"}},
			{"数据", []string{"db:0", "db:1"}},
			{"连接失败", []string{"db:1"}},
			{"集群", []string{"db:0"}},
			{"テスト", []string{"db:2"}},
			{"東京", []string{"db:2"}},
			{"猫", []string{"db:3"}},
			{"败", []string{"db:1"}},
			{"elsewhere", nil}, // project q's goal
			{"nothing matches this", nil},
		}
		for _, tc := range tests {
			got := f.search(t, tc.q, logbook.SearchFilter{})
			if !sameSet(got, tc.want) {
				t.Errorf("search %q found %v, want %v", tc.q, got, tc.want)
			}
		}
	})

	t.Run("Filters", func(t *testing.T) {
		t.Parallel()
		f := newSearchFixture(t, newStore(t))
		ended := f.db
		ended.Status, ended.Outcome = logbook.StatusEnded, logbook.OutcomeFailed
		closed := base.Add(2 * time.Hour)
		ended.ClosedAt = &closed
		must(t, f.st.SessionUpdate(ctx, &ended, &f.db))
		tests := []struct {
			name   string
			q      string
			filter logbook.SearchFilter
			want   []string
		}{
			{"actor", "login 数据库", logbook.SearchFilter{Actor: "alice"}, nil},
			{"actor", "refused", logbook.SearchFilter{Actor: "alice"}, []string{"login:3", "login:5"}},
			{"other actor", "refused", logbook.SearchFilter{Actor: "bob"}, nil},
			{"harness", "数据库", logbook.SearchFilter{Harness: "codex"}, []string{"db:0", "db:1"}},
			{"other harness", "数据库", logbook.SearchFilter{Harness: "claude-code"}, nil},
			{"kind", "refused", logbook.SearchFilter{Kind: logbook.KindToolResult}, []string{"login:3"}},
			{"kind of sessions", "login", logbook.SearchFilter{Kind: logbook.KindSession}, []string{"login:0"}},
			{"tool", "Bash", logbook.SearchFilter{Tool: "Bash"}, []string{"login:2", "login:3"}},
			{"tool leaves out sessions", "login", logbook.SearchFilter{Tool: "Bash"}, []string{"login:2"}},
			{"outcome", "数据库 失败", logbook.SearchFilter{Outcome: logbook.OutcomeFailed}, []string{"db:1"}},
			{"other outcome", "数据库", logbook.SearchFilter{Outcome: logbook.OutcomeSuccess}, nil},
			{"since", "refused", logbook.SearchFilter{Since: base.Add(4 * time.Minute)}, []string{"login:5"}},
			{"since keeps sessions seen in the window", "数据库", logbook.SearchFilter{Since: base.Add(30 * time.Minute)}, []string{"db:0", "db:1"}},
			{"since leaves out sessions not seen in the window", "login", logbook.SearchFilter{Since: base.Add(30 * time.Minute)}, nil},
		}
		for _, tc := range tests {
			if got := f.search(t, tc.q, tc.filter); !sameSet(got, tc.want) {
				t.Errorf("%s: search %q found %v, want %v", tc.name, tc.q, got, tc.want)
			}
		}
	})

	t.Run("SessionsNewestFirstWhateverTheirAge", func(t *testing.T) {
		// PostgreSQL looks for matching sessions among the newest
		// 16·candidates documents first, then asks its index for every
		// match: sessions weeks apart, behind newer ones that do not
		// match, more than the candidates asked for, still come newest
		// first. (They are recorded in the order they started: SQLite's
		// index holds a session's document in the order it was first
		// written.)
		t.Parallel()
		st := newStore(t)
		var ids []string // newest first
		for _, age := range []time.Duration{400 * 24 * time.Hour, 40 * 24 * time.Hour, 3 * 24 * time.Hour, 0} {
			started := base.Add(-age)
			s := logbook.Session{ID: logbook.NewID(started), Project: "p", Actor: "alice", Harness: "claude-code",
				Status: logbook.StatusActive, StartedAt: started, LastSeenAt: started, Goal: "Feed the zebra"}
			s.DeriveTitle()
			if inserted, err := st.SessionInsert(ctx, &s); err != nil || !inserted {
				t.Fatalf("SessionInsert: %v %v", inserted, err)
			}
			ids = append([]string{s.ID}, ids...)
		}
		for i := range 20 {
			started := base.Add(time.Duration(i+1) * time.Minute)
			s := logbook.Session{ID: logbook.NewID(started), Project: "p", Actor: "bob", Harness: "codex",
				Status: logbook.StatusActive, StartedAt: started, LastSeenAt: started, Goal: "Feed the cat"}
			s.DeriveTitle()
			if inserted, err := st.SessionInsert(ctx, &s); err != nil || !inserted {
				t.Fatalf("SessionInsert: %v %v", inserted, err)
			}
		}
		for candidates := 1; candidates <= len(ids)+1; candidates++ {
			res, err := st.Search(ctx, store.SearchParams{Project: "p", Query: "zebra", Candidates: candidates, Limit: 10})
			must(t, err)
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Session.ID)
			}
			want := ids[:min(candidates, len(ids))]
			if !sameSet(got, want) || res.Capped != (candidates <= len(ids)) {
				t.Errorf("%d candidates: found %v (capped %v), want the newest %v", candidates, got, res.Capped, want)
			}
		}
	})

	t.Run("PrefixesOfFewAndManyWords", func(t *testing.T) {
		// SQLite searches for the words a prefix begins when they are few,
		// and for the prefix when they are many: the same matches either
		// way, as PostgreSQL finds them.
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		other := newSession(t, st, sessionOpts{Project: "q"})
		var entries []logbook.Entry
		for i := range 70 {
			entries = append(entries, logbook.Entry{SessionID: s.ID, Seq: int64(i + 1), At: base, Kind: logbook.KindMessage,
				Text: fmt.Sprintf("the zeta%d node answers parseZeta%dConfig", i, i)})
		}
		insertAll(t, st, entries)
		insertAll(t, st, []logbook.Entry{{SessionID: other.ID, Seq: 1, At: base, Kind: logbook.KindMessage, Text: "zeta zeta3 zetaq"}})
		seqs := func(q string) []string {
			res, err := st.Search(ctx, store.SearchParams{Project: "p", Query: q, Candidates: 100, Limit: 100})
			must(t, err)
			var got []string
			for _, h := range res.Hits {
				if h.Entry == nil || h.Entry.SessionID != s.ID {
					t.Fatalf("search %q found %+v, not an entry of the session", q, h)
				}
				got = append(got, fmt.Sprint(h.Entry.Seq))
			}
			return got
		}
		var all, threes []string
		for i := range 70 {
			all = append(all, fmt.Sprint(i+1))
			if i == 3 || i/10 == 3 {
				threes = append(threes, fmt.Sprint(i+1))
			}
		}
		for _, tc := range []struct {
			q    string
			want []string
		}{
			{"zeta*", all},                     // 70 words, and zeta itself in the other project
			{"zeta3*", threes},                 // 11 words
			{"zeta3* node", threes},            // and a word
			{"zeta39*", []string{"40"}},        // 1 word
			{"zetab*", nil},                    // none in this project
			{"zetaq*", nil},                    // one, in the other project
			{"parseZeta3*", threes},            // a phrase ending in a prefix
			{"answ* zeta3*", threes},           // two prefixes
			{"parseZeta1Conf*", []string{"2"}}, // 1 word after two
		} {
			if got := seqs(tc.q); !sameSet(got, tc.want) {
				t.Errorf("search %q found entries %v, want %v", tc.q, got, tc.want)
			}
		}
	})

	t.Run("EntriesNewestFirstWhateverTheirAge", func(t *testing.T) {
		// PostgreSQL tests the newest entries one by one first, then asks
		// its index about wider and wider windows of the newest: entries of
		// two words weeks apart, each behind hundreds of newer ones that
		// hold one of the words or none, or hold both in another project,
		// still come newest first, as many as the candidates asked for,
		// and filters and phrases are still honoured: in a project that
		// wrote every entry (PostgreSQL checks each row for the project)
		// and one that wrote a third of them (it asks its index).
		t.Parallel()
		for _, others := range []int{0, 300} {
			t.Run(fmt.Sprintf("%d others", others), func(t *testing.T) { testEntriesNewestFirst(t, newStore(t), others) })
		}
	})

	t.Run("RanksPagesAndCaps", func(t *testing.T) {
		t.Parallel()
		f := newSearchFixture(t, newStore(t))
		got := f.search(t, "refused", logbook.SearchFilter{})
		if len(got) != 2 || got[0] != "login:5" {
			t.Errorf("search refused ranked %v; want the entry saying it four times first", got)
		}
		q := store.SearchParams{Project: "p", Query: "the", Candidates: 100, Limit: 100}
		all, err := f.st.Search(ctx, q)
		must(t, err)
		if all.Ranked != len(all.Hits) || all.Ranked < 3 || all.Capped {
			t.Fatalf("search the: ranked %d, %d hits, capped %v", all.Ranked, len(all.Hits), all.Capped)
		}
		var paged []store.SearchHit
		for offset := 0; offset < all.Ranked; offset += 2 {
			q.Offset, q.Limit = offset, 2
			page, err := f.st.Search(ctx, q)
			must(t, err)
			paged = append(paged, page.Hits...)
		}
		if got, want := f.names(paged), f.names(all.Hits); !slices.Equal(got, want) {
			t.Errorf("pages of 2: %v, want %v", got, want)
		}
		for i := 1; i < len(all.Hits); i++ {
			if all.Hits[i].Score > all.Hits[i-1].Score {
				t.Errorf("hit %d scores %v, above the one before it (%v)", i, all.Hits[i].Score, all.Hits[i-1].Score)
			}
		}
		q.Offset, q.Limit, q.Candidates = 0, 10, 1
		capped, err := f.st.Search(ctx, q)
		must(t, err)
		// The newest matching entry and the newest matching session.
		if got := f.names(capped.Hits); !capped.Capped || capped.Ranked != 2 || !sameSet(got, []string{"login:4", "login:0"}) {
			t.Errorf("with 1 candidate: ranked %d, capped %v, found %v", capped.Ranked, capped.Capped, got)
		}
		q.Query = "%"
		if _, err := f.st.Search(ctx, q); !errors.Is(err, logbook.ErrInvalid) {
			t.Errorf("a query without a word: %v, want ErrInvalid", err)
		}
	})

	t.Run("KeptInStepWithWrites", func(t *testing.T) {
		t.Parallel()
		f := newSearchFixture(t, newStore(t))
		// A new goal replaces the old one's words.
		s := f.login
		s.Goal, s.Result = "Speed up the CI pipeline", "the cache was cold"
		s.DeriveTitle()
		must(t, f.st.SessionUpdate(ctx, &s, &f.login))
		if got := f.search(t, "flaky", logbook.SearchFilter{}); got != nil {
			t.Errorf("the old goal is still found: %v", got)
		}
		if got := f.search(t, "pipeline cold", logbook.SearchFilter{}); !sameSet(got, []string{"login:0"}) {
			t.Errorf("the new goal and result: %v", got)
		}
		// Entries taken back, superseded or deleted with their session.
		must(t, f.st.EntryDeleteAfter(ctx, f.login.ID, 4))
		if got := f.search(t, "refused", logbook.SearchFilter{}); !sameSet(got, []string{"login:3"}) {
			t.Errorf("after taking entry 5 back: %v", got)
		}
		_, err := f.st.EntrySupersede(ctx, f.login.ID, base.Add(time.Hour))
		must(t, err)
		res, err := f.st.Search(ctx, store.SearchParams{Project: "p", Query: "refused", Candidates: 10, Limit: 10})
		must(t, err)
		if len(res.Hits) != 1 || res.Hits[0].Entry == nil || !res.Hits[0].Entry.Superseded {
			t.Errorf("a superseded entry is found, marked superseded: %+v", res.Hits)
		}
		_, err = f.st.SessionDeleteTree(ctx, f.db.ID)
		must(t, err)
		if got := f.search(t, "数据库", logbook.SearchFilter{}); got != nil {
			t.Errorf("a deleted session is still found: %v", got)
		}
		// A savepoint rolled back takes back what it indexed, and an entry
		// taken back and written again is found by its new text, once.
		tx, err := f.st.Begin(ctx)
		must(t, err)
		must(t, tx.Savepoint(ctx))
		insertAll(t, tx, []logbook.Entry{{SessionID: f.login.ID, Seq: 5, At: base, Kind: logbook.KindNote, Text: "undone quasar"}})
		must(t, tx.RollbackToSavepoint(ctx))
		must(t, tx.Savepoint(ctx))
		insertAll(t, tx, []logbook.Entry{{SessionID: f.login.ID, Seq: 5, At: base, Kind: logbook.KindNote, Text: "first pulsar"}})
		must(t, tx.ReleaseSavepoint(ctx))
		must(t, tx.EntryDeleteAfter(ctx, f.login.ID, 4))
		insertAll(t, tx, []logbook.Entry{{SessionID: f.login.ID, Seq: 5, At: base, Kind: logbook.KindNote, Text: "second pulsar nebula"}})
		must(t, tx.Commit())
		for q, want := range map[string][]string{"quasar": nil, "first": nil, "pulsar": {"login:5"}, "nebula": {"login:5"}} {
			if got := f.search(t, q, logbook.SearchFilter{}); !slices.Equal(got, want) {
				t.Errorf("after savepoints and a take-back, search %q found %v, want %v", q, got, want)
			}
		}
		must(t, f.st.EntryDeleteAfter(ctx, f.login.ID, 4))
		// In a transaction rolled back, nothing was indexed.
		tx, err = f.st.Begin(ctx)
		must(t, err)
		insertAll(t, tx, []logbook.Entry{{SessionID: f.login.ID, Seq: 5, At: base, Kind: logbook.KindNote, Text: "ephemeral"}})
		must(t, tx.Rollback())
		if got := f.search(t, "ephemeral", logbook.SearchFilter{}); got != nil {
			t.Errorf("an entry rolled back is found: %v", got)
		}
	})

	t.Run("ListQueryUsesTheIndex", func(t *testing.T) {
		t.Parallel()
		f := newSearchFixture(t, newStore(t))
		list := func(q string) ([]logbook.Session, error) {
			return f.st.SessionList(ctx, store.SessionListParams{Project: "p", Filter: logbook.SessionFilter{Query: q, Subagents: true},
				Limit: 10, Now: base.Add(24 * time.Hour), IdleBefore: base})
		}
		for q, want := range map[string][]logbook.Session{
			"flaky LOGIN": {f.login}, "数据库": {f.db}, "refused": nil, "elsewhere": nil, "fix flak*": {f.login}, "fix flak": nil,
		} {
			got, err := list(q)
			must(t, err)
			if ids(got) != ids(want) {
				t.Errorf("list q=%q: %s, want %s", q, ids(got), ids(want))
			}
		}
		if _, err := list("-- !"); !errors.Is(err, logbook.ErrInvalid) {
			t.Errorf("list q without a word: %v, want ErrInvalid", err)
		}
	})

	t.Run("ListQueryOfACommonWord", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		// So many sessions match that a list checks the sessions it walks
		// instead of reading the matching ones first: the same answer.
		tx, err := st.Begin(ctx)
		must(t, err)
		const n = 5100
		for i := range n {
			started := base.Add(time.Duration(i) * time.Second)
			goal := "Rotate the certificates"
			if i%2 == 1 {
				goal = "Upgrade the database"
			}
			s := logbook.Session{ID: logbook.NewID(started), Project: "p", Actor: []string{"alice", "bob"}[i%4/2], Harness: "h",
				Status: logbook.StatusActive, StartedAt: started, LastSeenAt: started, Goal: goal}
			s.DeriveTitle()
			_, err := tx.SessionInsert(ctx, &s)
			must(t, err)
		}
		must(t, tx.Commit())
		for _, tc := range []struct {
			q, actor string
			want     int
		}{{"the", "", n}, {"upgrade the", "", n / 2}, {"the database", "bob", n / 4}, {"certificates", "bob", n / 4}} {
			var got []logbook.Session
			var after *store.SessionCursor
			for {
				page, err := st.SessionList(ctx, store.SessionListParams{Project: "p", Filter: logbook.SessionFilter{Query: tc.q, Actor: tc.actor},
					Limit: 1000, Now: base.Add(24 * time.Hour), IdleBefore: base, After: after})
				must(t, err)
				got = append(got, page...)
				if len(page) < 1000 {
					break
				}
				last := page[len(page)-1]
				after = &store.SessionCursor{Value: last.LastSeenAt.UnixMicro(), ID: last.ID}
			}
			if len(got) != tc.want {
				t.Errorf("list q=%q actor=%q: %d sessions, want %d", tc.q, tc.actor, len(got), tc.want)
			}
			for _, s := range got {
				words := strings.Fields(strings.ToLower(s.Goal))
				for _, w := range strings.Fields(tc.q) {
					if !slices.Contains(words, w) {
						t.Fatalf("list q=%q listed %q", tc.q, s.Goal)
					}
				}
			}
		}
	})

	t.Run("RebuildAndBackfill", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		n, err := st.SearchPending(ctx)
		must(t, err)
		equal(t, "pending in a new database", n, int64(0))
		f := newSearchFixture(t, st)
		must(t, st.SearchRebuild(ctx))
		if got := f.search(t, "login 数据库 refused", logbook.SearchFilter{}); got != nil {
			t.Errorf("found after emptying the index: %v", got)
		}
		n, err = st.SearchPending(ctx)
		must(t, err)
		equal(t, "pending after a rebuild", n, int64(f.entries+f.sessions))
		// Written meanwhile: indexed as it is written, and once.
		insertAll(t, st, []logbook.Entry{{SessionID: f.login.ID, Seq: 6, At: base, Kind: logbook.KindNote, Text: "written meanwhile"}})
		total, batches := 0, 0
		for {
			indexed, finished, err := st.SearchBackfill(ctx, 2)
			must(t, err)
			if finished {
				break
			}
			total += indexed
			if batches++; batches > 100 {
				t.Fatal("the backfill does not finish")
			}
		}
		equal(t, "indexed by the backfill", total, f.entries+f.sessions)
		n, err = st.SearchPending(ctx)
		must(t, err)
		equal(t, "pending after the backfill", n, int64(0))
		for q, want := range map[string][]string{
			"login":     {"login:0", "login:1", "login:2"},
			"数据库":       {"db:0", "db:1"},
			"meanwhile": {"login:6"},
		} {
			if got := f.search(t, q, logbook.SearchFilter{}); !sameSet(got, want) {
				t.Errorf("after the backfill, search %q found %v, want %v", q, got, want)
			}
		}
		if _, finished, err := st.SearchBackfill(ctx, 2); err != nil || !finished {
			t.Errorf("a finished backfill: finished %v, err %v", finished, err)
		}
	})
}

// testEntriesNewestFirst: see EntriesNewestFirstWhateverTheirAge. Each
// session of project p has 152 entries, and one of project q beside it
// othersEach, all newer, that hold both words.
func testEntriesNewestFirst(t *testing.T, st store.Store, othersEach int) {
	ctx := t.Context()
	type match struct {
		id     string // "session:seq"
		phrase bool   // "connection refused", side by side
		result bool   // a tool result
		recent bool   // seen since base-10 days
	}
	var matches []match // newest first
	sessions := map[string]string{}
	for i, age := range []time.Duration{400 * 24 * time.Hour, 40 * 24 * time.Hour, 3 * 24 * time.Hour, time.Hour} {
		started := base.Add(-age)
		name := fmt.Sprintf("s%d", i)
		s := newSession(t, st, sessionOpts{StartedAt: started})
		sessions[s.ID] = name
		other := newSession(t, st, sessionOpts{Project: "q", StartedAt: started})
		var entries, others []logbook.Entry
		add := func(e logbook.Entry) {
			e.SessionID, e.Seq, e.At = s.ID, int64(len(entries)+1), started.Add(time.Duration(len(entries))*time.Second)
			if e.Kind == "" {
				e.Kind = logbook.KindMessage
			}
			entries = append(entries, e)
		}
		// Two matches a session: one a tool result with the phrase,
		// one a message with both words apart.
		add(logbook.Entry{Kind: logbook.KindToolResult, Tool: "Bash", Text: "dial tcp: connect: connection refused"})
		matches = append([]match{{fmt.Sprintf("%s:%d", name, len(entries)), true, true, age < 10*24*time.Hour}}, matches...)
		add(logbook.Entry{Text: "the refused request closed its connection"})
		matches = append([]match{{fmt.Sprintf("%s:%d", name, len(entries)), false, false, age < 10*24*time.Hour}}, matches...)
		for j := range 150 {
			add(logbook.Entry{Text: []string{"connection reset", "refused to start", "nothing to see"}[j%3]})
		}
		for j := range othersEach {
			others = append(others, logbook.Entry{SessionID: other.ID, Seq: int64(j + 1), At: started, Kind: logbook.KindMessage,
				Text: "connection refused elsewhere"})
		}
		insertAll(t, st, entries)
		if len(others) > 0 {
			insertAll(t, st, others)
		}
	}
	name := func(h store.SearchHit) string {
		if h.Entry == nil {
			return "session " + h.Session.ID
		}
		return fmt.Sprintf("%s:%d", sessions[h.Entry.SessionID], h.Entry.Seq)
	}
	for _, tc := range []struct {
		what  string
		q     string
		f     logbook.SearchFilter
		keeps func(match) bool
	}{
		{"both words", "connection refused", logbook.SearchFilter{}, func(match) bool { return true }},
		{"the phrase", `"connection refused"`, logbook.SearchFilter{}, func(m match) bool { return m.phrase }},
		{"both words, tool results", "connection refused", logbook.SearchFilter{Kind: logbook.KindToolResult}, func(m match) bool { return m.result }},
		{"both words, since", "connection refused", logbook.SearchFilter{Since: base.Add(-10 * 24 * time.Hour)}, func(m match) bool { return m.recent }},
	} {
		var want []string // newest first
		for _, m := range matches {
			if tc.keeps(m) {
				want = append(want, m.id)
			}
		}
		for candidates := 1; candidates <= len(want)+1; candidates++ {
			res, err := st.Search(ctx, store.SearchParams{Project: "p", Query: tc.q, Filter: tc.f, Candidates: candidates, Limit: 100})
			must(t, err)
			var got []string
			for _, h := range res.Hits {
				got = append(got, name(h))
			}
			if !sameSet(got, want[:min(candidates, len(want))]) || res.Capped != (candidates <= len(want)) {
				t.Errorf("%s, %d candidates: found %v (capped %v), want the newest %v", tc.what, candidates, got, res.Capped, want[:min(candidates, len(want))])
			}
		}
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
