package pgstore_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to reach the database before the store migrates it

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/migrate"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// partitionMigration is the migration that partitions entries.
const partitionMigration = 26

// partitionOf names the partition of entries that holds a session's entries.
func partitionOf(t *testing.T, db *sql.DB, sessionID string) string {
	t.Helper()
	var name string
	if err := db.QueryRow(`SELECT DISTINCT tableoid::regclass::text FROM entries WHERE session_id = $1`, sessionID).Scan(&name); err != nil {
		t.Fatalf("finding the partition of %s: %v", sessionID, err)
	}
	return name
}

func tableExists(t *testing.T, db *sql.DB, name string) bool {
	t.Helper()
	var found sql.NullString
	if err := db.QueryRow(`SELECT to_regclass($1)::text`, name).Scan(&found); err != nil {
		t.Fatal(err)
	}
	return found.Valid
}

// TestMigrationTakesEntriesOver: a database with entries before migration
// 26 keeps them, whole and in place (the old table becomes a partition),
// keeps numbering and keys unique, and gives new entries new ids.
func TestMigrationTakesEntriesOver(t *testing.T) {
	ctx := context.Background()
	url := testdb.PostgresURL(t)
	steps, err := migrate.Load(os.DirFS("."), "migrations")
	if err != nil {
		t.Fatal(err)
	}
	old := openDB(t, url)
	if _, err := migrate.Apply(ctx, old, steps[:partitionMigration-1], nil); err != nil {
		t.Fatal(err)
	}
	started := time.Now().AddDate(0, -3, 0)
	id := logbook.NewID(started)
	mustExec(t, old, `INSERT INTO sessions (id, project, actor, status, started_at, last_seen_at) VALUES ($1, 'p', 'alice', 'active', 0, 0)`, id)
	for seq := 1; seq <= 3; seq++ {
		mustExec(t, old, `INSERT INTO entries (session_id, seq, at, kind, text, key) VALUES ($1, $2, 0, 'note', 'before', $3)`, id, seq, fmt.Sprint("k", seq))
	}
	var lastOld int64
	if err := old.QueryRow(`SELECT MAX(id) FROM entries`).Scan(&lastOld); err != nil {
		t.Fatal(err)
	}
	old.Close()

	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatalf("migrating a database with entries: %v", err)
	}
	defer st.Close()
	entries, err := st.EntryList(ctx, store.EntryListParams{SessionID: id, Limit: 10})
	if err != nil || len(entries) != 3 {
		t.Fatalf("the entries from before: %d, %v; want 3", len(entries), err)
	}
	if got := partitionOf(t, st.DB(), id); got != "entries_legacy" {
		t.Errorf("the entries from before are in %s, want entries_legacy", got)
	}
	n, err := st.EntryInsert(ctx, []logbook.Entry{
		{SessionID: id, Seq: 4, At: started, Kind: logbook.KindNote, Text: "after"},
		{SessionID: id, Seq: 5, At: started, Kind: logbook.KindNote, Text: "a key from before", Key: "k2"},
	})
	if err != nil || n != 1 {
		t.Fatalf("inserting after the migration: %d inserted, %v; want 1 (the other's key was there before)", n, err)
	}
	entries, err = st.EntryList(ctx, store.EntryListParams{SessionID: id, AfterSeq: 3, Limit: 10})
	if err != nil || len(entries) != 1 || entries[0].ID <= lastOld {
		t.Fatalf("the new entry: %+v, %v; want one with an id after %d", entries, err, lastOld)
	}
	_, err = st.EntryInsert(ctx, []logbook.Entry{{SessionID: id, Seq: 2, At: started, Kind: logbook.KindNote, Text: "seq 2 again"}})
	if !errors.Is(err, logbook.ErrConflict) {
		t.Errorf("a second entry 2 of the session: %v, want ErrConflict", err)
	}
}

// TestMonthsHavePartitions: the months ahead get partitions, a session's
// entries land in its month's, an id past them in the default partition
// (never an error), and a month retention emptied is dropped.
func TestMonthsHavePartitions(t *testing.T) {
	ctx := context.Background()
	st, err := pgstore.Open(ctx, testdb.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := st.DB()
	jan := time.Date(2031, 1, 10, 12, 0, 0, 0, time.UTC)
	if err := st.EntryPartitionsMaintain(ctx, jan, store.PartitionMonthsAhead); err != nil {
		t.Fatal(err)
	}
	if err := st.EntryPartitionsMaintain(ctx, jan, store.PartitionMonthsAhead); err != nil {
		t.Fatalf("maintaining partitions a second time: %v", err)
	}
	for _, name := range []string{"entries_2031_01", "entries_2031_02", "entries_2031_03"} {
		if !tableExists(t, db, name) {
			t.Errorf("no partition %s", name)
		}
	}
	if tableExists(t, db, "entries_2031_04") {
		t.Error("a partition more than two months ahead")
	}
	var fromSQL string
	if err := db.QueryRow(`SELECT logbook_month_id($1)`, jan.Add(20*24*time.Hour)).Scan(&fromSQL); err != nil {
		t.Fatal(err)
	}
	if want := sqlstore.MonthSessionID(jan); fromSQL != want {
		t.Errorf("the migration's month bound %s, Go's %s", fromSQL, want)
	}

	if err := st.ProjectEnsure(ctx, "p", jan); err != nil {
		t.Fatal(err)
	}
	if err := st.ProjectRetentionSet(ctx, "p", logbook.Retention{SessionsDays: 7}); err != nil {
		t.Fatal(err)
	}
	mk := func(started time.Time) logbook.Session {
		s := logbook.Session{ID: logbook.NewID(started), Project: "p", Actor: "alice", Status: logbook.StatusEnded,
			EndReason: logbook.EndReasonEnded, StartedAt: started, LastSeenAt: started, ClosedAt: &started}
		if _, err := st.SessionInsert(ctx, &s); err != nil {
			t.Fatal(err)
		}
		if _, err := st.EntryInsert(ctx, []logbook.Entry{{SessionID: s.ID, Seq: 1, At: started, Kind: logbook.KindNote, Text: "hello"}}); err != nil {
			t.Fatalf("inserting an entry of a session started %s: %v", started, err)
		}
		return s
	}
	inJan := mk(jan)
	inFeb := mk(jan.AddDate(0, 1, 0))
	farOff := mk(time.Date(2035, 6, 1, 0, 0, 0, 0, time.UTC))
	for s, want := range map[string]string{inJan.ID: "entries_2031_01", inFeb.ID: "entries_2031_02", farOff.ID: "entries_default"} {
		if got := partitionOf(t, db, s); got != want {
			t.Errorf("the entries of %s are in %s, want %s", s, got, want)
		}
	}

	// 15 February: January's session is due, February's is not yet.
	deleted, err := st.EntryPartitionPrune(ctx, jan.AddDate(0, 1, 5))
	if err != nil {
		t.Fatal(err)
	}
	if deleted["partitions"] != 1 || deleted["sessions"] != 1 || deleted["entries"] != 1 {
		t.Errorf("retention by month deleted %v, want January: 1 partition, 1 session, 1 entry", deleted)
	}
	if err := st.EntryPartitionsMaintain(ctx, jan.AddDate(0, 1, 5), store.PartitionMonthsAhead); err != nil {
		t.Fatal(err)
	}
	if tableExists(t, db, "entries_2031_01") {
		t.Error("January's partition, emptied, was not dropped")
	}
	if !tableExists(t, db, "entries_2031_02") || !tableExists(t, db, "entries_2031_04") {
		t.Error("February's partition, or April's (now two months ahead), is missing")
	}
	if deleted, err := st.EntryPartitionPrune(ctx, jan.AddDate(0, 1, 5)); err != nil || deleted["sessions"] != 0 {
		t.Errorf("retention by month again: %v, %v; want nothing (February is not past)", deleted, err)
	}
}

func openDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
