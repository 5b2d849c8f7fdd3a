package pgstore_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// The read replica is simulated: a second database with logbook's schema
// and none of the primary's rows, whose replayed WAL position the test
// sets. A read that goes to it finds nothing, so each read shows where it
// went. (A true streaming standby needs a second PostgreSQL server; the
// real queries of a server that is no standby are run by
// TestReadReplicaIsTheSameDatabase.)

// laggingReplica returns a fake replica's handle and a function setting
// the WAL position it claims to have replayed.
func laggingReplica(t *testing.T) (*sql.DB, func(position int64)) {
	t.Helper()
	db := testdb.Postgres(t).(*sqlstore.Store).DB()
	mustExec(t, db, `CREATE TABLE fake_replay (position BIGINT NOT NULL)`)
	mustExec(t, db, `INSERT INTO fake_replay VALUES (0)`)
	return db, func(position int64) { mustExec(t, db, `UPDATE fake_replay SET position = $1`, position) }
}

func primaryPosition(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var p int64
	if err := db.QueryRow(pgstore.PrimaryPositionSQL).Scan(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// session starts a session of project p with one entry.
func session(t *testing.T, st store.Store, title string) logbook.Session {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	s := logbook.Session{ID: logbook.NewID(now), Project: "p", Actor: "alice", Harness: "h", Status: logbook.StatusActive,
		StartedAt: now, LastSeenAt: now, Title: title}
	if err := st.ProjectEnsure(ctx, "p", now); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SessionInsert(ctx, &s); err != nil {
		t.Fatal(err)
	}
	appendNote(t, st, s, 1)
	return s
}

func appendNote(t *testing.T, st store.Store, s logbook.Session, seq int64) {
	t.Helper()
	tx, err := st.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.EntryInsert(context.Background(), []logbook.Entry{{SessionID: s.ID, Seq: seq, At: time.Now(), Kind: logbook.KindNote, Text: "note"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// reads says how many entries of s, and sessions of p, a read finds.
func reads(t *testing.T, st store.Store, s logbook.Session) (entries, sessions int) {
	t.Helper()
	ctx := context.Background()
	list, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	all, err := st.SessionList(ctx, store.SessionListParams{Project: "p", Limit: 100, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return len(list), len(all)
}

// TestReadReplicaRouting: reads go to the replica once it has replayed
// the primary's WAL far enough, a session's transcript only once it has
// what this store committed to that session; reads across sessions stay
// on the primary while the replica is more than MaxLag behind.
func TestReadReplicaRouting(t *testing.T) {
	ctx := context.Background()
	st := testdb.Postgres(t).(*sqlstore.Store)
	replica, replay := laggingReplica(t)
	st.ReadFrom(sqlstore.Replica{DB: replica, MaxLag: time.Hour, ProbeEvery: time.Nanosecond,
		PrimaryPositionSQL: pgstore.PrimaryPositionSQL, ReplayedPositionSQL: `SELECT position FROM fake_replay`})

	a := session(t, st, "a")
	b := session(t, st, "b")
	// The replica has replayed nothing: every read is the primary's.
	if e, s := reads(t, st, a); e != 1 || s != 2 {
		t.Fatalf("with the replica at the start of the log: %d entries of a, %d sessions; want the primary's 1 and 2", e, s)
	}

	// It catches up with everything: reads go to it (where this fake
	// holds nothing).
	replay(1 << 62)
	if e, s := reads(t, st, a); e != 0 || s != 0 {
		t.Fatalf("with the replica caught up: %d entries of a, %d sessions; want the replica's 0 and 0", e, s)
	}

	// It stops where the primary is now; a is written to again after
	// that, b is not. a's transcript is read from the primary until the
	// replica has a's new entry; b's, and lists, from the replica.
	replay(primaryPosition(t, st.DB()))
	appendNote(t, st, a, 2)
	if e, s := reads(t, st, a); e != 2 || s != 0 {
		t.Errorf("a, written after the replica stopped: %d entries, %d sessions; want 2 from the primary, lists from the replica (0)", e, s)
	}
	if e, _ := reads(t, st, b); e != 0 {
		t.Errorf("b, not written since the replica caught up: %d entries, want the replica's 0", e)
	}
	replay(1 << 62)
	reads(t, st, b) // a probe after a's write, which the replica now has
	if e, _ := reads(t, st, a); e != 0 {
		t.Errorf("a, once the replica has its entry: %d entries, want the replica's 0", e)
	}

	// Inside a transaction every read is the primary's.
	tx, err := st.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	list, err := tx.EntryList(ctx, store.EntryListParams{SessionID: a.ID, Limit: 100})
	if err != nil || len(list) != 2 {
		t.Errorf("a's entries inside a transaction: %d, %v; want the primary's 2", len(list), err)
	}
}

// TestReadReplicaTooFarBehind: past MaxLag, lists and transcripts are
// read from the primary.
func TestReadReplicaTooFarBehind(t *testing.T) {
	st := testdb.Postgres(t).(*sqlstore.Store)
	replica, replay := laggingReplica(t)
	st.ReadFrom(sqlstore.Replica{DB: replica, MaxLag: time.Nanosecond, ProbeEvery: time.Nanosecond,
		PrimaryPositionSQL: pgstore.PrimaryPositionSQL, ReplayedPositionSQL: `SELECT position FROM fake_replay`})
	a := session(t, st, "a")
	replay(primaryPosition(t, st.DB()))
	if e, s := reads(t, st, a); e != 1 || s != 1 {
		t.Errorf("with the replica behind by more than MaxLag: %d entries, %d sessions; want the primary's 1 and 1", e, s)
	}
}

// TestReadReplicaIsTheSameDatabase: the primary given as its own replica
// (a server that is no standby replays nothing and is as current as the
// primary) answers every read, with logbook's real position queries.
func TestReadReplicaIsTheSameDatabase(t *testing.T) {
	ctx := context.Background()
	url := testdb.PostgresURL(t)
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := pgstore.ReadFrom(ctx, st, url, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	a := session(t, st, "a")
	appendNote(t, st, a, 2)
	if e, s := reads(t, st, a); e != 2 || s != 1 {
		t.Errorf("reading through the same database as replica: %d entries, %d sessions; want 2 and 1", e, s)
	}
	if err := pgstore.ReadFrom(ctx, st, "postgres://postgres@127.0.0.1:1/none?connect_timeout=1", time.Second, nil); err == nil {
		t.Error("a replica that does not answer was taken")
	}
}

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
