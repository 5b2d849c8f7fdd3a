package cli_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// TestMigrateCountsStats upgrades a database written before the
// statistics' rollups (migrations 14, 16, 18 and 19 taken back out of it): `logbook
// migrate` adds them, counts its sessions into them with progress, and
// statistics read from them answer as before; --rebuild-stats counts again.
func TestMigrateCountsStats(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// One instant for every service here: a running session's duration
	// is counted to now.
	opts := service.Options{NowFunc: func() time.Time { return time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC) }}
	svc := service.New(st, opts)
	alice := service.Caller{Actor: "alice", Project: "demo"}
	for i, harness := range []string{"claude-code", "codex", "codex"} {
		s, _, err := svc.StartSession(ctx, alice, service.StartParams{Harness: harness})
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if _, err := svc.EndSession(ctx, alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed}); err != nil {
				t.Fatal(err)
			}
		}
	}
	stats := func(svc *service.Service) []logbook.StatsRow {
		t.Helper()
		rows, err := svc.Stats(ctx, alice, service.StatsParams{By: logbook.ByHarness, Then: logbook.ByOutcome})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	want := stats(svc)
	if len(want) != 2 || want[1].Key != "codex" || want[1].Sessions != 2 {
		t.Fatalf("stats before: %+v", want)
	}
	for _, stmt := range []string{`DROP TABLE session_stats_days`, `DROP TABLE session_stats_quarters`, `DROP TABLE session_stats_backfill`,
		`DROP TABLE touch_stats_days`, `DROP TABLE session_stats_dimension_days`, `DROP INDEX sessions_project_active`,
		`ALTER TABLE entries DROP COLUMN cache_read_tokens`, `ALTER TABLE entries DROP COLUMN cache_write_tokens`,
		`ALTER TABLE entries DROP COLUMN usage_model`, `ALTER TABLE entries DROP COLUMN cost_micros`,
		`ALTER TABLE sessions DROP COLUMN cost_micros`, `ALTER TABLE projects DROP COLUMN prices`,
		`DELETE FROM schema_migrations WHERE version IN (14, 16, 18, 19, 22)`} {
		if _, err := st.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	st.Close()

	for _, args := range [][]string{{"migrate", "--db", path}, {"migrate", "--db", path, "--rebuild-stats"}} {
		var stdout, stderr bytes.Buffer
		if code := cli.Run(ctx, env(&stdout, &stderr, nil), args); code != 0 {
			t.Fatalf("logbook %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		for _, line := range []string{"counting sessions into the statistics: 3 of 3 (100%)", "counted 3 sessions into the statistics in ", "(the longest batch held the writer "} {
			if !strings.Contains(stderr.String(), line) {
				t.Errorf("logbook %s printed no %q:\n%s", strings.Join(args, " "), line, stderr.String())
			}
		}
		if !strings.Contains(stdout.String(), "is up to date") {
			t.Errorf("logbook %s: %s", strings.Join(args, " "), stdout.String())
		}
		st, err := sqlitestore.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := st.StatsPending(ctx); err != nil || n != 0 {
			t.Errorf("after logbook %s: %d sessions left to count (%v)", strings.Join(args, " "), n, err)
		}
		if got := stats(service.New(st, opts)); !slices.Equal(got, want) {
			t.Errorf("after logbook %s: stats %+v, want %+v", strings.Join(args, " "), got, want)
		}
		st.Close()
	}
}

// TestMigrateIndexesForSearch upgrades a database written before the
// search index (migration 15 taken back out of it): `logbook migrate` adds
// it and indexes what was there, with progress, and a search finds it;
// --rebuild-search indexes everything again.
func TestMigrateIndexesForSearch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(st, service.Options{})
	alice := service.Caller{Actor: "alice", Project: "demo"}
	goal := "Find the flaky login test"
	s, _, err := svc.StartSession(ctx, alice, service.StartParams{Harness: "codex", Fields: logbook.SessionFields{Goal: &goal}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindPrompt, Text: "why does the login test time out?"},
		{Kind: logbook.KindMessage, Role: logbook.RoleAssistant, Text: "数据库连接超时"},
	}}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP TRIGGER entries_unindex`, `DROP TABLE search`, `DROP TABLE session_docs`, `DROP TABLE search_backfill`,
		`DELETE FROM schema_migrations WHERE version = 15`} {
		if _, err := st.DB().ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	st.Close()

	for _, args := range [][]string{{"migrate", "--db", path}, {"migrate", "--db", path, "--rebuild-search"}} {
		var stdout, stderr bytes.Buffer
		if code := cli.Run(ctx, env(&stdout, &stderr, nil), args); code != 0 {
			t.Fatalf("logbook %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		for _, line := range []string{"indexing entries and sessions for search: 3 of 3 (100%)", "indexed 3 entries and sessions for search in "} {
			if !strings.Contains(stderr.String(), line) {
				t.Errorf("logbook %s printed no %q:\n%s", strings.Join(args, " "), line, stderr.String())
			}
		}
		st, err := sqlitestore.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		page, err := service.New(st, service.Options{}).Search(ctx, alice, service.SearchParams{Query: "login test"})
		if err != nil || len(page.Results) != 2 {
			t.Errorf("after logbook %s, search login test: %+v %v", strings.Join(args, " "), page, err)
		}
		page, err = service.New(st, service.Options{}).Search(ctx, alice, service.SearchParams{Query: "超时"})
		if err != nil || len(page.Results) != 1 || page.Results[0].Seq != 2 {
			t.Errorf("after logbook %s, search 超时: %+v %v", strings.Join(args, " "), page, err)
		}
		st.Close()
	}
}
