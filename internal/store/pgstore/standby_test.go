package pgstore_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
)

// TestStreamingStandby runs the read routing against a true streaming
// standby, when LOGBOOK_TEST_STANDBY names one: "PRIMARY_URL STANDBY_URL",
// two servers (not databases) where the second replays the first's WAL.
// BENCHMARKS.md ("Past one database") shows how to start such a pair on one
// machine with initdb and pg_basebackup. Without it the test skips: the
// routing itself is held by TestReadReplicaRouting on every run.
func TestStreamingStandby(t *testing.T) {
	pair := strings.Fields(os.Getenv("LOGBOOK_TEST_STANDBY"))
	if len(pair) != 2 {
		t.Skip("no streaming standby: set LOGBOOK_TEST_STANDBY to \"PRIMARY_URL STANDBY_URL\" (servers) to run this test")
	}
	ctx := context.Background()
	primaryURL, standbyURL := database(t, pair[0], pair[1])
	st, err := pgstore.Open(ctx, primaryURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	standby, err := sql.Open("pgx", standbyURL)
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	st.ReadFrom(sqlstore.Replica{DB: standby, MaxLag: time.Hour, ProbeEvery: time.Nanosecond,
		PrimaryPositionSQL: pgstore.PrimaryPositionSQL, ReplayedPositionSQL: pgstore.ReplayedPositionSQL})
	a := session(t, st, "a")
	if e, s := reads(t, st, a); e != 1 || s != 1 {
		t.Fatalf("just written: %d entries of a, %d sessions; want 1 and 1", e, s)
	}
	// The standby catches up; the next read notes a position it has.
	written := primaryPosition(t, st.DB())
	waitFor(t, "the standby to replay a", func() bool {
		var replayed int64
		return standby.QueryRow(pgstore.ReplayedPositionSQL).Scan(&replayed) == nil && replayed >= written
	})
	reads(t, st, a)

	// With replay paused, a's new entry and a new session b are on the
	// primary only: a's transcript is read there, the list on the standby.
	mustExec(t, standby, `SELECT pg_wal_replay_pause()`)
	defer standby.Exec(`SELECT pg_wal_replay_resume()`)
	waitFor(t, "replay to pause", func() bool {
		var state string
		return standby.QueryRow(`SELECT pg_get_wal_replay_pause_state()`).Scan(&state) == nil && state == "paused"
	})
	appendNote(t, st, a, 2)
	session(t, st, "b")
	if e, s := reads(t, st, a); e != 2 || s != 1 {
		t.Errorf("replay paused: %d entries of a, %d sessions; want a's 2 from the primary, the standby's 1 session", e, s)
	}

	// Once the standby replays again, everything is there.
	mustExec(t, standby, `SELECT pg_wal_replay_resume()`)
	waitFor(t, "the standby to show both sessions", func() bool {
		_, s := reads(t, st, a)
		return s == 2
	})
	if e, _ := reads(t, st, a); e != 2 {
		t.Errorf("replay resumed: %d entries of a, want 2", e)
	}
}

// database makes a database on the primary server, waits for the standby
// to have it, and returns its URL on each; it is dropped when the test
// ends.
func database(t *testing.T, primaryServer, standbyServer string) (primary, standby string) {
	t.Helper()
	admin, err := sql.Open("pgx", primaryServer)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "logbook_standby_" + hex.EncodeToString(b[:])
	mustExec(t, admin, `CREATE DATABASE `+name)
	t.Cleanup(func() {
		defer admin.Close()
		admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
	})
	on := func(server string) string {
		u, err := url.Parse(server)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		return u.String()
	}
	standbyAdmin, err := sql.Open("pgx", standbyServer)
	if err != nil {
		t.Fatal(err)
	}
	defer standbyAdmin.Close()
	waitFor(t, "the standby to have the new database", func() bool {
		var n int
		return standbyAdmin.QueryRow(`SELECT COUNT(*) FROM pg_database WHERE datname = $1`, name).Scan(&n) == nil && n == 1
	})
	return on(primaryServer), on(standbyServer)
}

// waitFor polls until ok, failing the test after 30 s.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}
