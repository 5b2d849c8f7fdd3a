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
	"sync/atomic"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Run runs the suite; newStore returns a fresh, migrated store and
// registers its cleanup. When every part has run, it fails for each method
// of store.Store and store.Tx that no test called (see recording.go).
func Run(t *testing.T, newStore func(t testing.TB) store.Store) {
	calls := &callLog{names: map[string]bool{}}
	newStore = recorded(newStore, calls)
	parts := []struct {
		name string
		test func(*testing.T, func(testing.TB) store.Store)
	}{
		{"Session", testSession},
		{"SessionList", testSessionList},
		{"SessionStats", testSessionStats},
		{"Entry", testEntry},
		{"Plan", testPlan},
		{"Agent", testAgent},
		{"Task", testTask},
		{"Token", testToken},
		{"Project", testProject},
		{"Claim", testClaim},
		{"TouchAndLink", testTouchAndLink},
		{"Event", testEvent},
		{"ToolCall", testToolCall},
		{"Why", testWhy},
		{"Tx", testTx},
		{"Group", testGroup},
		{"Waiting", testWaiting},
		{"Engine", testEngine},
		{"Maintenance", testMaintenance},
		{"Stats", testStats},
		{"Search", testSearch},
		{"Retention", testRetention},
		{"MonthlyRetention", testMonthlyRetention},
		{"Export", testExport},
		{"Message", testMessage},
		{"Alerts", testAlerts},
		{"SessionCostOfDay", testSessionCostOfDay},
	}
	var ran atomic.Int64
	for _, p := range parts {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			ran.Add(1)
			p.test(t, newStore)
		})
	}
	// Parallel subtests end before the parent's cleanups run.
	t.Cleanup(func() {
		if int(ran.Load()) < len(parts) {
			t.Logf("the store's methods are counted only when every part of the suite runs (%d of %d ran)", ran.Load(), len(parts))
			return
		}
		for _, name := range calls.uncalled() {
			t.Errorf("no conformance test calls store method %s: add one that holds both engines to its contract", name)
		}
	})
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
