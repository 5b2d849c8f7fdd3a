package service_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

func TestSearch(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("SnippetsAndSecrets", func(t *testing.T) { t.Parallel(); testSearchSnippets(t, setup(t, e)) })
		t.Run("WhoMaySearch", func(t *testing.T) { t.Parallel(); testSearchCallers(t, setup(t, e)) })
		t.Run("Backfill", func(t *testing.T) { t.Parallel(); testSearchBackfill(t, setup(t, e)) })
	})
}

func testSearchSnippets(t *testing.T, b *bundle) {
	secret := "gh" + "p_" + "R2d2C3p0L8k9J7h6G5f4D3s2A1q0W9e8R7t6"
	s := b.start(t, b.alice, service.StartParams{Harness: "claude-code", Fields: logbook.SessionFields{Goal: str("Deploy the worker to staging")}})
	payload, _ := json.Marshal(map[string]string{"command": "GITHUB_TOKEN=" + secret + " ./deploy.sh --target staging"})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t1", Payload: payload},
		{Kind: logbook.KindToolResult, Tool: "Bash", ToolCallID: "t1", Text: "open /etc/worker.conf: permission denied\nexit status 1"},
		{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "The deploy failed: permission denied on the config file."},
	}})
	must(t, err)

	page, err := b.svc.Search(b.ctx, b.bob, service.SearchParams{Query: "permission denied"})
	must(t, err)
	if len(page.Results) != 2 {
		t.Fatalf("permission denied: %d results, want 2: %+v", len(page.Results), page.Results)
	}
	for _, h := range page.Results {
		marked := logbook.SnippetString(h.Snippet, "[", "]")
		if h.SessionID != s.ID || h.Title != "Deploy the worker to staging" || h.Actor != "alice" || h.Field != "entry" ||
			!strings.Contains(marked, "[permission] [denied]") {
			t.Errorf("hit %+v: snippet %q", h, marked)
		}
	}
	if h := page.Results; h[0].Seq != 2 && h[0].Seq != 3 || h[0].Seq == h[1].Seq {
		t.Errorf("the hits are entries %d and %d, want 2 and 3", h[0].Seq, h[1].Seq)
	}

	// The index holds redacted text: the secret is not found, and no
	// snippet shows it.
	for _, q := range []string{secret, "deploy.sh", "staging"} {
		page, err := b.svc.Search(b.ctx, b.bob, service.SearchParams{Query: q})
		must(t, err)
		for _, h := range page.Results {
			marked := logbook.SnippetString(h.Snippet, "", "")
			if strings.Contains(marked, secret) || strings.Contains(marked, "R2d2C3p0") {
				t.Errorf("search %q shows the secret: %q", q, marked)
			}
		}
		if q == "deploy.sh" && (len(page.Results) != 1 || !strings.Contains(logbook.SnippetString(page.Results[0].Snippet, "", ""), "[REDACTED")) {
			t.Errorf("search deploy.sh: %+v, want the tool call with its token redacted", page.Results)
		}
	}
	page, err = b.svc.Search(b.ctx, b.bob, service.SearchParams{Query: "worker staging", Filter: logbook.SearchFilter{Kind: logbook.KindSession}})
	must(t, err)
	if len(page.Results) != 1 || page.Results[0].Field != "goal" || page.Results[0].Seq != 0 ||
		logbook.SnippetString(page.Results[0].Snippet, "[", "]") != "Deploy the [worker] to [staging]" {
		t.Errorf("a session's goal: %+v", page.Results)
	}
}

func testSearchCallers(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Goal: str("Rotate the TLS certificates")}})
	if page, err := b.svc.Search(b.ctx, b.bob, service.SearchParams{Query: "certificates"}); err != nil || len(page.Results) != 1 || page.Results[0].SessionID != s.ID {
		t.Errorf("another actor of the project: %+v %v", page, err)
	}
	admin := service.Caller{Actor: "admin", Admin: true}
	if page, err := b.svc.Search(b.ctx, admin, service.SearchParams{Project: "p", Query: "certificates"}); err != nil || len(page.Results) != 1 {
		t.Errorf("the admin naming the project: %+v %v", page, err)
	}
	for _, tc := range []struct {
		name  string
		c     service.Caller
		p     service.SearchParams
		want  error
		field string
	}{
		{"another project", service.Caller{Actor: "carol", Project: "q"}, service.SearchParams{Project: "p", Query: "tls"}, logbook.ErrForbidden, ""},
		{"the admin without a project", admin, service.SearchParams{Query: "tls"}, logbook.ErrInvalid, "project"},
		{"no word", b.bob, service.SearchParams{Query: "()"}, logbook.ErrInvalid, "q"},
		{"a limit too large", b.bob, service.SearchParams{Query: "tls", Limit: logbook.MaxSearchPage + 1}, logbook.ErrInvalid, "limit"},
		{"a cursor of something else", b.bob, service.SearchParams{Query: "tls", Cursor: "bGlzdC8x"}, logbook.ErrInvalid, "cursor"},
		{"an unknown kind", b.bob, service.SearchParams{Query: "tls", Filter: logbook.SearchFilter{Kind: "memo"}}, logbook.ErrInvalid, "kind"},
		{"an unknown outcome", b.bob, service.SearchParams{Query: "tls", Filter: logbook.SearchFilter{Outcome: "meh"}}, logbook.ErrInvalid, "outcome"},
	} {
		_, err := b.svc.Search(b.ctx, tc.c, tc.p)
		var v *logbook.ValidationError
		if !errors.Is(err, tc.want) || tc.field != "" && (!errors.As(err, &v) || v.Field != tc.field) {
			t.Errorf("%s: %v, want %v naming %q", tc.name, err, tc.want, tc.field)
		}
	}
}

// testSearchBackfill empties the index, as a database made before it, and
// indexes again through the service, with its progress.
func testSearchBackfill(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Goal: str("Upgrade the Postgres cluster")}})
	var entries []logbook.Entry
	for range 1200 {
		entries = append(entries, logbook.Entry{Kind: logbook.KindNote, Text: "vacuum the cluster"})
	}
	for i := 0; i < len(entries); i += logbook.MaxBatch {
		_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: entries[i:min(i+logbook.MaxBatch, len(entries))]})
		must(t, err)
	}
	must(t, b.st.SearchRebuild(b.ctx))
	page, err := b.svc.Search(b.ctx, b.bob, service.SearchParams{Query: "cluster"})
	must(t, err)
	if len(page.Results) != 0 {
		t.Fatalf("found %d after emptying the index", len(page.Results))
	}
	var calls []int64
	var last, total int64
	must(t, b.svc.BackfillSearch(b.ctx, func(done, of int64) { calls = append(calls, done); last, total = done, of }))
	if len(calls) < 3 || last != 1201 || total != 1201 {
		t.Errorf("progress: called %d times, last %d of %d; want batches up to 1201 of 1201", len(calls), last, total)
	}
	page, err = b.svc.Search(b.ctx, b.bob, service.SearchParams{Query: "cluster", Limit: 5})
	must(t, err)
	if page.Ranked != logbook.SearchCandidates+1 || !page.More || len(page.Results) != 5 || page.Indexing {
		t.Errorf("after the backfill: ranked %d, more %v, %d results, indexing %v; want the %d newest entries and the session ranked",
			page.Ranked, page.More, len(page.Results), page.Indexing, logbook.SearchCandidates)
	}
}
