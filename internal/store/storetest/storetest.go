// Package storetest is the conformance suite every store.Store engine must
// pass. Each engine runs it from its own test file:
//
//	func TestConformance(t *testing.T) { storetest.Run(t, testdb.SQLite) }
//
// It asserts the contract written in package store (sentinel errors,
// ordering, cursors, precision), never an engine's particulars.
package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Run runs the suite; newStore returns a fresh, migrated store and
// registers its cleanup.
func Run(t *testing.T, newStore func(t testing.TB) store.Store) {
	t.Run("Session", func(t *testing.T) { t.Parallel(); testSession(t, newStore) })
	t.Run("SessionList", func(t *testing.T) { t.Parallel(); testSessionList(t, newStore) })
	t.Run("SessionStats", func(t *testing.T) { t.Parallel(); testSessionStats(t, newStore) })
	t.Run("Entry", func(t *testing.T) { t.Parallel(); testEntry(t, newStore) })
	t.Run("Plan", func(t *testing.T) { t.Parallel(); testPlan(t, newStore) })
	t.Run("Agent", func(t *testing.T) { t.Parallel(); testAgent(t, newStore) })
	t.Run("Token", func(t *testing.T) { t.Parallel(); testToken(t, newStore) })
	t.Run("Tx", func(t *testing.T) { t.Parallel(); testTx(t, newStore) })
	t.Run("Maintenance", func(t *testing.T) { t.Parallel(); testMaintenance(t, newStore) })
}

// base is a fixed instant at microsecond precision, so values read back
// compare equal.
var base = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// sessionOpts are the fields a test cares about; the rest take defaults.
type sessionOpts struct {
	Project, Actor, HarnessID, ParentID string
	StartedAt                           time.Time
}

// newSession inserts a session and returns it.
func newSession(t testing.TB, ex store.Executor, o sessionOpts) logbook.Session {
	t.Helper()
	if o.Project == "" {
		o.Project = "p"
	}
	if o.Actor == "" {
		o.Actor = "alice"
	}
	if o.StartedAt.IsZero() {
		o.StartedAt = base
	}
	s := logbook.Session{
		ID: logbook.NewID(o.StartedAt), Project: o.Project, Actor: o.Actor, Harness: "test",
		HarnessSessionID: o.HarnessID, ParentID: o.ParentID, Status: logbook.StatusActive,
		StartedAt: o.StartedAt, LastSeenAt: o.StartedAt, GivenTitle: "given", Title: "given",
	}
	inserted, err := ex.SessionInsert(context.Background(), &s)
	if err != nil || !inserted {
		t.Fatalf("SessionInsert: inserted=%v err=%v", inserted, err)
	}
	return s
}

// insertAll stores entries and fails the test unless every one was stored.
func insertAll(t testing.TB, ex store.Executor, entries []logbook.Entry) {
	t.Helper()
	n, err := ex.EntryInsert(t.Context(), entries)
	must(t, err)
	equal(t, "entries inserted", n, len(entries))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func equal[T comparable](t testing.TB, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func ids(sessions []logbook.Session) string {
	out := ""
	for _, s := range sessions {
		out += fmt.Sprintf("%s ", s.ID)
	}
	return out
}
