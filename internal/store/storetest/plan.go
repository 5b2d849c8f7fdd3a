package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func testPlan(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	s := newSession(t, st, sessionOpts{})
	steps := []logbook.PlanStep{
		{N: 1, Text: "read", Status: logbook.StepDone, UpdatedAt: base},
		{N: 2, Text: "write", Status: logbook.StepRunning, UpdatedAt: base},
		{N: 3, Text: "test", Status: logbook.StepPending, UpdatedAt: base},
	}
	must(t, st.PlanReplace(ctx, s.ID, steps))
	got, err := st.PlanList(ctx, s.ID)
	must(t, err)
	equal(t, "steps", len(got), 3)
	equal(t, "step 2", got[1], steps[1])

	must(t, st.PlanStepUpdate(ctx, s.ID, 3, logbook.StepFailed, base.Add(time.Minute)))
	if err := st.PlanStepUpdate(ctx, s.ID, 9, logbook.StepDone, base); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("updating a missing step: err = %v, want ErrNotFound", err)
	}
	must(t, st.PlanCloseInFlight(ctx, s.ID, logbook.StepSkipped, base.Add(time.Hour)))
	got, _ = st.PlanList(ctx, s.ID)
	equal(t, "done stays done", got[0].Status, logbook.StepDone)
	equal(t, "running closes", got[1].Status, logbook.StepSkipped)
	equal(t, "failed stays failed", got[2].Status, logbook.StepFailed)

	must(t, st.PlanReplace(ctx, s.ID, steps[:1]))
	got, _ = st.PlanList(ctx, s.ID)
	equal(t, "steps after replace", len(got), 1)
}

func testAgent(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	if _, err := st.AgentGet(ctx, store.AgentGetParams{Project: "p", Name: "ceo"}); !errors.Is(err, logbook.ErrNotFound) {
		t.Fatalf("AgentGet(missing) err = %v, want ErrNotFound", err)
	}
	must(t, st.AgentEnsure(ctx, "p", "ceo", base))
	must(t, st.AgentEnsure(ctx, "p", "ceo", base.Add(time.Hour))) // a no-op
	a, err := st.AgentGet(ctx, store.AgentGetParams{Project: "p", Name: "ceo"})
	must(t, err)
	equal(t, "created_at", a.CreatedAt, base)
	equal(t, "generation", a.Generation, int64(0))
	a.CurrentSessionID, a.Generation = "s1", 1
	must(t, st.AgentUpdate(ctx, &a))
	got, _ := st.AgentGet(ctx, store.AgentGetParams{Project: "p", Name: "ceo"})
	equal(t, "agent", got, a)
	missing := logbook.Agent{Project: "p", Name: "nobody"}
	if err := st.AgentUpdate(ctx, &missing); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("AgentUpdate(missing) err = %v, want ErrNotFound", err)
	}
}

func testToken(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	exists, err := st.TokenAdminExists(ctx)
	must(t, err)
	equal(t, "admin exists in a new store", exists, false)
	must(t, st.TokenInsert(ctx, &logbook.Token{ID: "t1", Hash: "h1", Project: "p", Actor: "alice", CreatedAt: base}))
	must(t, st.TokenInsert(ctx, &logbook.Token{ID: "t2", Hash: "h2", Actor: "admin", Admin: true, CreatedAt: base}))
	exists, _ = st.TokenAdminExists(ctx)
	equal(t, "admin exists", exists, true)
	got, err := st.TokenGetByHash(ctx, "h1")
	must(t, err)
	equal(t, "actor", got.Actor, "alice")
	equal(t, "admin", got.Admin, false)
	if _, err := st.TokenGetByHash(ctx, "nope"); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("unknown hash: err = %v, want ErrNotFound", err)
	}
	if err := st.TokenInsert(ctx, &logbook.Token{ID: "t3", Hash: "h1", Actor: "x", CreatedAt: base}); !errors.Is(err, logbook.ErrConflict) {
		t.Errorf("repeated hash: err = %v, want ErrConflict", err)
	}
	must(t, st.ProjectEnsure(ctx, "p", base))
	must(t, st.ProjectEnsure(ctx, "p", base)) // a no-op
}

func testTx(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	tx, err := st.Begin(ctx)
	must(t, err)
	rolled := newSession(t, tx, sessionOpts{})
	must(t, tx.Rollback())
	if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: rolled.ID}); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("a rolled back session is readable: err = %v", err)
	}
	tx, err = st.Begin(ctx)
	must(t, err)
	kept := newSession(t, tx, sessionOpts{})
	if _, err := tx.SessionGet(ctx, store.SessionGetParams{ID: kept.ID, ForUpdate: true}); err != nil {
		t.Errorf("reading a row locked in the same transaction: %v", err)
	}
	must(t, tx.Commit())
	must(t, tx.Rollback()) // after Commit, a harmless no-op
	if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: kept.ID}); err != nil {
		t.Errorf("a committed session is not readable: %v", err)
	}

	// Savepoints undo one request of a group sharing a transaction: what
	// was written since the savepoint goes, what came before stays.
	tx, err = st.Begin(ctx)
	must(t, err)
	before := newSession(t, tx, sessionOpts{})
	must(t, tx.Savepoint(ctx))
	undone := newSession(t, tx, sessionOpts{})
	before.Goal = "changed after the savepoint"
	must(t, tx.SessionUpdate(ctx, &before, nil))
	must(t, tx.RollbackToSavepoint(ctx))
	must(t, tx.Savepoint(ctx)) // the last one was released: a new one may begin
	released := newSession(t, tx, sessionOpts{})
	must(t, tx.ReleaseSavepoint(ctx))
	must(t, tx.Commit())
	got, err := st.SessionGet(ctx, store.SessionGetParams{ID: before.ID})
	must(t, err)
	equal(t, "a change rolled back to the savepoint", got.Goal, "")
	if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: undone.ID}); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("a session written after the savepoint it was rolled back to is readable: err = %v", err)
	}
	if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: released.ID}); err != nil {
		t.Errorf("a session kept by ReleaseSavepoint is not readable: %v", err)
	}

	// Inside a transaction a statement runs whatever its caller's context
	// says: the transaction may hold other callers' writes (the service's
	// group commit), and SQLite rolls a transaction back whole when one of
	// its writes is interrupted. The transaction's owner decides whether
	// it commits.
	tx, err = st.Begin(ctx)
	must(t, err)
	other := newSession(t, tx, sessionOpts{})
	gone, cancel := context.WithCancel(ctx)
	cancel()
	other.Goal = "written for a caller who left"
	if err := tx.SessionUpdate(gone, &other, nil); err != nil {
		t.Errorf("a statement in a transaction, its caller's context ended: %v", err)
	}
	must(t, tx.Commit())
	got, err = st.SessionGet(ctx, store.SessionGetParams{ID: other.ID})
	must(t, err)
	equal(t, "goal", got.Goal, "written for a caller who left")
	// Outside a transaction, an ended context stops the statement.
	if _, err := st.SessionGet(gone, store.SessionGetParams{ID: other.ID}); !errors.Is(err, context.Canceled) {
		t.Errorf("a read with an ended context outside a transaction: err = %v, want context.Canceled", err)
	}
}
