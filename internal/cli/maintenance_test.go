package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// testEnv is an Env on SQLite with stdin and captured output.
func testEnv(stdin string) (Env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return Env{
		Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(string) string { return "" },
		OpenStore: func(ctx context.Context, db string) (store.Store, error) {
			if IsPostgres(db) {
				return nil, errors.New("this test opens SQLite only")
			}
			return sqlitestore.Open(ctx, db)
		},
	}, &stdout, &stderr
}

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// checkConsistent opens a database file and checks what a restore relies
// on: SQLite's integrity check, every session's counter equal to its
// entries, and entries numbered 1..n without a gap. It returns the number
// of sessions and entries.
func checkConsistent(t *testing.T, path string) (sessions, entries int) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	defer st.Close()
	db := st.DB()
	var integrity string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check of %s: %q %v", path, integrity, err)
	}
	rows, err := db.Query(`SELECT s.id, s.entry_count, COUNT(e.seq), COALESCE(MIN(e.seq), 0), COALESCE(MAX(e.seq), 0)
		FROM sessions s LEFT JOIN entries e ON e.session_id = s.id GROUP BY s.id, s.entry_count`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var counter, count, lo, hi int
		if err := rows.Scan(&id, &counter, &count, &lo, &hi); err != nil {
			t.Fatal(err)
		}
		if counter != count {
			t.Errorf("session %s: entry_count %d, but %d entries", id, counter, count)
		}
		if count > 0 && (lo != 1 || hi != count) {
			t.Errorf("session %s: seqs %d..%d for %d entries (a gap)", id, lo, hi, count)
		}
		sessions++
		entries += count
	}
	return sessions, entries
}

// TestBackupRestore backs up a SQLite database while a server's service
// keeps writing to it, then opens the copy as a restore would.
func TestBackupRestore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "live.db")
	st, err := sqlitestore.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st, service.Options{Logger: quietLog})
	written, stopWriters := startWriters(t, svc, 20)
	for written.Load() < 200 { // let the writers get going
		time.Sleep(5 * time.Millisecond)
	}

	backupPath := filepath.Join(dir, "backup", "copy.db")
	if err := os.MkdirAll(filepath.Dir(backupPath), 0o700); err != nil {
		t.Fatal(err)
	}
	env, stdout, stderr := testEnv("")
	before := written.Load()
	if code := backup(ctx, env, []string{backupPath, "--db", dbPath}); code != 0 {
		t.Fatalf("backup exited %d: %s", code, stderr)
	}
	during := written.Load() - before
	stopWriters()
	if !strings.Contains(stdout.String(), backupPath) {
		t.Errorf("backup said %q, not where it wrote", stdout)
	}

	sessions, entries := checkConsistent(t, backupPath)
	if entries < 200 {
		t.Errorf("the backup holds %d entries; at least 200 were written before it began", entries)
	}
	liveSessions, liveEntries := checkConsistent(t, dbPath)
	if entries > liveEntries || sessions > liveSessions {
		t.Errorf("the backup holds more than the live database: %d/%d sessions, %d/%d entries", sessions, liveSessions, entries, liveEntries)
	}
	t.Logf("backup of a live database: %d sessions, %d entries (live: %d, %d; %d entries written while it ran)",
		sessions, entries, liveSessions, liveEntries, during)
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(backupPath), ".*partial")); len(leftovers) > 0 {
		t.Errorf("a partial file was left: %v", leftovers)
	}

	// A backup never overwrites a file.
	env, _, stderr = testEnv("")
	info, _ := os.Stat(backupPath)
	if code := backup(ctx, env, []string{"--db", dbPath, backupPath}); code != 1 || !strings.Contains(stderr.String(), "exists") {
		t.Errorf("a backup onto an existing file: exit %d, %q", code, stderr)
	}
	if again, _ := os.Stat(backupPath); again.ModTime() != info.ModTime() || again.Size() != info.Size() {
		t.Error("the existing file was changed")
	}

	// On PostgreSQL it prints the pg_dump command, password hidden.
	env, _, stderr = testEnv("")
	code := backup(ctx, env, []string{"--db", "postgres://lb:s3cret@db.example:5432/logbook", "/tmp/x.dump"})
	msg := stderr.String()
	if code != 1 || !strings.Contains(msg, "pg_dump --format=custom") || !strings.Contains(msg, "db.example:5432/logbook") || strings.Contains(msg, "s3cret") {
		t.Errorf("backup on PostgreSQL: exit %d, %q", code, msg)
	}
	env, _, _ = testEnv("")
	if code := backup(ctx, env, nil); code != 2 {
		t.Errorf("backup without a path: exit %d, want 2", code)
	}
}

// TestPrune prunes old ended sessions in small transactions and keeps the
// rest.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	dbPath := testdb.SQLitePath(t)
	st, err := sqlitestore.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	clock := now.Add(-100 * 24 * time.Hour)
	svc := service.New(st, service.Options{Logger: quietLog, NowFunc: func() time.Time { return clock }})
	alice := service.Caller{Actor: "alice", Project: "demo"}
	start := func(harnessID, parent string) string {
		t.Helper()
		s, _, err := svc.StartSession(ctx, alice, service.StartParams{Project: "demo", HarnessSessionID: harnessID, ParentID: parent})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: "x"}}}); err != nil {
			t.Fatal(err)
		}
		return s.ID
	}
	end := func(id string) {
		t.Helper()
		if _, err := svc.EndSession(ctx, alice, id, service.EndParams{Outcome: logbook.OutcomeSuccess}); err != nil {
			t.Fatal(err)
		}
	}
	// 100 days ago: 25 sessions with a subagent each, ended; one left open.
	for i := range 25 {
		root := start(fmt.Sprintf("old-%d", i), "")
		start(fmt.Sprintf("old-%d-sub", i), root)
		end(root) // ends its subagent too
	}
	open := start("old-open", "")
	// 10 days ago: an ended session.
	clock = now.Add(-10 * 24 * time.Hour)
	recent := start("recent", "")
	end(recent)

	env, stdout, stderr := testEnv("")
	if code := prune(ctx, env, []string{"--ended-before", "90d", "--batch", "10", "--db", dbPath}); code != 0 {
		t.Fatalf("prune exited %d: %s", code, stderr)
	}
	if want := "pruned 50 sessions"; !strings.Contains(stdout.String(), want) || !strings.Contains(stdout.String(), "(50 entries) in 3 transactions") {
		t.Errorf("prune said %q, want %q, 50 entries, in 3 transactions of at most 10 trees", stdout, want)
	}
	for _, id := range []string{open, recent} {
		if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: id}); err != nil {
			t.Errorf("session %s should be kept: %v", id, err)
		}
	}
	var left int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM sessions`).Scan(&left); err != nil || left != 2 {
		t.Errorf("%d sessions left (%v), want 2", left, err)
	}
	checkConsistent(t, dbPath)

	for _, bad := range [][]string{{}, {"--ended-before", "soon"}, {"--ended-before", "-5d"}, {"--ended-before", "90d", "extra"}} {
		env, _, _ := testEnv("")
		if code := prune(ctx, env, append(bad, "--db", dbPath)); code != 2 {
			t.Errorf("prune %v: exit %d, want 2", bad, code)
		}
	}
}

// TestTokenRevoke revokes a token by value (from stdin) and an actor's
// tokens, and checks that they stop working.
func TestTokenRevoke(t *testing.T) {
	ctx := context.Background()
	dbPath := testdb.SQLitePath(t)
	st, err := sqlitestore.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := service.New(st, service.Options{Logger: quietLog})
	admin := service.Caller{Actor: "admin", Admin: true}
	mk := func(project, actor string) string {
		t.Helper()
		v, err := svc.CreateToken(ctx, admin, project, actor)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	alice, bob1, bob2, other, dave := mk("demo", "alice"), mk("demo", "bob"), mk("demo", "bob"), mk("demo", "carol"), mk("demo", "dave")
	works := func(token string) bool {
		_, err := svc.Authenticate(ctx, token)
		if err != nil && !errors.Is(err, logbook.ErrUnauthorized) {
			t.Fatal(err)
		}
		return err == nil
	}

	env, stdout, stderr := testEnv(alice + "\n")
	if code := tokenRevoke(ctx, env, []string{"-", "--db", dbPath}); code != 0 {
		t.Fatalf("token revoke -: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout.String(), "actor alice in project demo") || strings.Contains(stdout.String()+stderr.String(), alice) {
		t.Errorf("token revoke said %q / %q (it must not repeat the token)", stdout, stderr)
	}
	env, _, stderr = testEnv("")
	if code := tokenRevoke(ctx, env, []string{"--db", dbPath, alice}); code != 1 || !strings.Contains(stderr.String(), "no token") {
		t.Errorf("revoking a revoked token: exit %d, %q", code, stderr)
	}
	env, stdout, _ = testEnv("")
	if code := tokenRevoke(ctx, env, []string{"--project", "demo", "--actor", "bob", "--db", dbPath}); code != 0 || !strings.Contains(stdout.String(), "revoked 2 tokens") {
		t.Errorf("revoking bob's tokens: exit %d, %q", code, stdout)
	}
	// By id, as logbook token revoke printed it: the value is lost.
	sum := sha256.Sum256([]byte(dave))
	record, err := st.TokenGetByHash(ctx, hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	env, stdout, _ = testEnv("")
	if code := tokenRevoke(ctx, env, []string{"--db", dbPath, record.ID}); code != 0 || !strings.Contains(stdout.String(), "revoked token "+record.ID) {
		t.Errorf("revoking by id: exit %d, %q", code, stdout)
	}
	for token, want := range map[string]bool{alice: false, bob1: false, bob2: false, other: true, dave: false} {
		if works(token) != want {
			t.Errorf("after revoking: token works = %v, want %v", !want, want)
		}
	}
	for _, bad := range [][]string{{}, {"a", "b"}, {"--actor", "bob", "tok"}} {
		env, _, _ := testEnv("")
		if code := tokenRevoke(ctx, env, append(bad, "--db", dbPath)); code != 2 {
			t.Errorf("token revoke %v: exit %d, want 2", bad, code)
		}
	}
	// Only the admin revokes.
	if _, err := svc.RevokeToken(ctx, service.Caller{Actor: "carol", Project: "demo"}, other); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("a non-admin revoking: err = %v, want ErrForbidden", err)
	}
}

// startWriters runs four goroutines that start sessions and append batches
// of batch notes to them through svc until the returned stop is called
// (which waits for them); written counts the entries appended.
func startWriters(t *testing.T, svc *service.Service, batch int) (written *atomic.Int64, stop func()) {
	t.Helper()
	ctx := context.Background()
	alice := service.Caller{Actor: "alice", Project: "demo"}
	written = &atomic.Int64{}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-quit:
					return
				default:
				}
				sess, _, err := svc.StartSession(ctx, alice, service.StartParams{Project: "demo", Harness: "h", HarnessSessionID: fmt.Sprintf("w%d-%d", w, i/5)})
				if err != nil {
					t.Error(err)
					return
				}
				entries := make([]logbook.Entry, batch)
				for j := range entries {
					entries[j] = logbook.Entry{Kind: logbook.KindNote, Text: fmt.Sprintf("writer %d batch %d entry %d", w, i, j)}
				}
				if _, err := svc.AppendEntries(ctx, alice, sess.ID, service.Batch{Entries: entries}); err != nil {
					t.Error(err)
					return
				}
				written.Add(int64(batch))
			}
		}()
	}
	return written, func() { close(quit); wg.Wait() }
}
