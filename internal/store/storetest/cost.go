package storetest

import (
	"maps"
	"math"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// testSessionCostOfDay holds SessionCostOfDay to the sums of the costs of
// a UTC day's sessions: all of them, by agent and one agent's; inside a
// transaction with what it changed (not yet in the rollups), without it
// after a rollback; and while a rebuilt rollup is being backfilled.
func testSessionCostOfDay(t *testing.T, newStore func(testing.TB) store.Store) {
	st := newStore(t)
	ctx := t.Context()
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	insert := func(ex store.Executor, project, agent, parent string, started time.Time, cost int64) logbook.Session {
		t.Helper()
		s := logbook.Session{ID: logbook.NewID(started), Project: project, Actor: "alice", Harness: "test", Agent: agent, ParentID: parent,
			Status: logbook.StatusActive, StartedAt: started, LastSeenAt: started, CostMicros: cost}
		inserted, err := ex.SessionInsert(ctx, &s)
		if err != nil || !inserted {
			t.Fatalf("SessionInsert: %v %v", inserted, err)
		}
		return s
	}
	first := insert(st, "p", "ceo", "", day, 1_000_000)                      // the day's first microsecond
	insert(st, "p", "ceo", first.ID, day.Add(3*time.Hour), 250_000)          // a subagent of the same agent
	insert(st, "p", "engineer-1", "", day.Add(12*time.Hour), 2_000_000)      //
	insert(st, "p", "", "", day.Add(24*time.Hour-time.Microsecond), 40)      // of no agent, the day's last microsecond
	insert(st, "p", "ceo", "", day.Add(-time.Microsecond), 7_000_000)        // the day before
	insert(st, "p", "ceo", "", day.Add(24*time.Hour), 9_000_000)             // the day after
	insert(st, "q", "ceo", "", day.Add(time.Hour), 5_000_000)                // another project
	big := insert(st, "r", "ceo", "", day.Add(time.Hour), math.MaxInt64/2+1) // sums saturate
	insert(st, "r", "ceo", big.ID, day.Add(2*time.Hour), math.MaxInt64/2+1)  //
	insert(st, "p", "idle", "", day.Add(time.Hour), 0)                       // costs nothing: left out
	check := func(ex store.Executor, what string, p store.SessionCostOfDayParams, want map[string]int64) {
		t.Helper()
		got, err := ex.SessionCostOfDay(ctx, p)
		must(t, err)
		if !maps.Equal(got, want) {
			t.Errorf("%s: SessionCostOfDay(%+v) = %v, want %v", what, p, got, want)
		}
	}
	noon := day.Add(12 * time.Hour)
	checkAll := func(ex store.Executor, what string, extraCEO int64) {
		t.Helper()
		check(ex, what+", the project's", store.SessionCostOfDayParams{Project: "p", Day: noon}, map[string]int64{"": 3_250_040 + extraCEO})
		check(ex, what+", by agent", store.SessionCostOfDayParams{Project: "p", Day: day, ByAgent: true},
			map[string]int64{"ceo": 1_250_000 + extraCEO, "engineer-1": 2_000_000, "": 40})
		check(ex, what+", the ceo's", store.SessionCostOfDayParams{Project: "p", Day: day.Add(24*time.Hour - time.Microsecond), Agent: "ceo"},
			map[string]int64{"ceo": 1_250_000 + extraCEO})
		check(ex, what+", an agent of none", store.SessionCostOfDayParams{Project: "p", Day: day, Agent: "nobody"}, map[string]int64{})
		check(ex, what+", a day of none", store.SessionCostOfDayParams{Project: "p", Day: day.AddDate(0, 0, -5)}, map[string]int64{})
	}
	checkAll(st, "read from the rollups", 0)
	check(st, "saturated", store.SessionCostOfDayParams{Project: "r", Day: day}, map[string]int64{"": math.MaxInt64})

	// A transaction sees its own changes before they reach the rollups.
	tx, err := st.Begin(ctx)
	must(t, err)
	was := first
	first.CostMicros += 500_000
	must(t, tx.SessionUpdate(ctx, &first, &was))
	insert(tx, "p", "ceo", "", day.Add(time.Hour), 100)
	checkAll(tx, "in the transaction", 500_100)
	must(t, tx.Rollback())
	checkAll(st, "after a rollback", 0)

	tx, err = st.Begin(ctx)
	must(t, err)
	first = was
	first.CostMicros += 500_000
	must(t, tx.SessionUpdate(ctx, &first, &was))
	must(t, tx.Savepoint(ctx))
	insert(tx, "p", "ceo", "", day.Add(time.Hour), 100)
	must(t, tx.RollbackToSavepoint(ctx))
	checkAll(tx, "in a transaction, after a savepoint's rollback", 500_000)
	must(t, tx.Commit())
	checkAll(st, "after the commit", 500_000)

	// Emptied rollups, then backfilled a few sessions at a time: the
	// answer stays the same throughout.
	must(t, st.StatsRebuild(ctx))
	checkAll(st, "with the rollups emptied", 500_000)
	for step := 0; ; step++ {
		_, finished, err := st.StatsBackfill(ctx, 3)
		must(t, err)
		checkAll(st, "while the backfill runs", 500_000)
		if finished || step > 100 {
			break
		}
	}
}
