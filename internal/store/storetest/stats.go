package storetest

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, whatever the machine has installed

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// testStats holds SessionStats, which reads rollups the writes keep, to
// what counting every session gives, on random data: after inserts,
// updates, ends, revivals, time-outs, deletions, pruning, rolled-back
// transactions and savepoints, and while a backfill fills the rollups of
// sessions written before them; their costs too, and the sessions with no
// parent apart.
func testStats(t *testing.T, newStore func(testing.TB) store.Store) {
	t.Run("RollupsEqualCounting", func(t *testing.T) {
		t.Parallel()
		w := newStatsWorld(t, newStore(t), 1)
		for round := range 6 {
			for range 40 {
				w.randomTx()
			}
			w.check(fmt.Sprintf("after round %d", round))
		}
	})

	t.Run("DaysInZones", func(t *testing.T) {
		t.Parallel()
		w := newStatsWorld(t, newStore(t), 4)
		// Sessions a quarter hour either side of days' edges: a summer time
		// change (Berlin, 29 March 2026), midnight in India (+05:30) and
		// Newfoundland (-03:30), in a zone whose offset was not whole
		// quarter hours (Amsterdam, +01:19:32 in the summer of 1930), a
		// time before 1970, and sessions that say they start in a week.
		zone := func(name string) *time.Location {
			z, err := time.LoadLocation(name)
			must(t, err)
			return z
		}
		edges := []time.Time{
			time.Date(2026, 3, 29, 2, 0, 0, 0, zone("Europe/Berlin")), time.Date(2026, 11, 30, 0, 0, 0, 0, zone("Asia/Kolkata")),
			time.Date(2026, 12, 3, 0, 0, 0, 0, zone("America/St_Johns")), time.Date(1930, 6, 2, 0, 0, 0, 0, zone("Europe/Amsterdam")),
			time.Date(1969, 12, 31, 23, 50, 0, 0, time.UTC), w.now.Add(7 * 24 * time.Hour),
		}
		for _, edge := range edges {
			for _, d := range []time.Duration{-16 * time.Minute, -time.Minute, -time.Microsecond, 0, time.Minute, 14 * time.Minute} {
				started := edge.Add(d)
				s := logbook.Session{ID: logbook.NewID(started), Project: "p", Actor: "alice", Harness: pick(w.rng, "a", "b"),
					Status: logbook.StatusActive, StartedAt: started, LastSeenAt: started, InputTokens: 1}
				if w.rng.IntN(2) == 0 {
					w.end(&s, started)
				}
				_, err := w.st.SessionInsert(w.ctx, &s)
				must(t, err)
			}
		}
		all := w.allSessions(w.st)
		for _, name := range []string{"UTC", "Europe/Berlin", "Asia/Kolkata", "America/St_Johns", "Europe/Amsterdam", "Pacific/Chatham"} {
			zone := zone(name)
			for _, since := range []time.Time{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 28, 0, 7, 0, 0, time.UTC), base.Add(-24 * time.Hour)} {
				for _, p := range []store.SessionStatsParams{{By: logbook.ByDay}, {By: logbook.ByDay, Then: logbook.ByHarness}, {By: logbook.ByHarness, Then: logbook.ByDay}} {
					p.Project, p.Since, p.Now, p.Zone = "p", since, w.now, zone
					got, err := w.st.SessionStats(w.ctx, p)
					must(t, err)
					if want := countStats(all, p); !slices.Equal(got, want) {
						t.Fatalf("by %s then %q since %s in %s:\n got %+v\nwant %+v", p.By, p.Then, since, name, got, want)
					}
				}
			}
		}
	})

	t.Run("BackfillEqualsCounting", func(t *testing.T) {
		t.Parallel()
		w := newStatsWorld(t, newStore(t), 2)
		for range 120 {
			w.randomTx()
		}
		must(t, w.st.StatsRebuild(w.ctx))
		pending, err := w.st.StatsPending(w.ctx)
		must(t, err)
		equal(t, "sessions pending after a rebuild", pending, int64(len(w.allSessions(w.st))))
		w.check("after emptying the rollups") // read from the sessions meanwhile
		for step := 0; ; step++ {
			n, finished, err := w.st.StatsBackfill(w.ctx, 7)
			must(t, err)
			if finished {
				break
			}
			if n != 7 {
				t.Fatalf("a batch of 7 that did not finish counted %d", n)
			}
			for range 3 { // writes to counted and uncounted sessions alike
				w.randomTx()
			}
			// And to the session the backfill counts last, every step.
			all := w.allSessions(w.st)
			last := slices.MaxFunc(all, func(a, b logbook.Session) int { return cmp.Compare(a.ID, b.ID) })
			must(t, addTokens(w.ctx, w.st, last.ID, w.rng))
			must(t, w.st.TouchUpsert(w.ctx, last.ID, last.Project, []logbook.Touch{{Kind: logbook.TouchFile, Value: "last.go", FirstAt: last.StartedAt}}))
			if step%4 == 0 {
				w.check(fmt.Sprintf("during the backfill, step %d", step))
			}
		}
		pending, err = w.st.StatsPending(w.ctx)
		must(t, err)
		equal(t, "sessions pending once finished", pending, int64(0))
		w.check("once the backfill finished")
		for range 40 {
			w.randomTx()
		}
		w.check("after writes that followed the backfill")
	})

	t.Run("BackfillUnderConcurrentWrites", func(t *testing.T) {
		t.Parallel()
		w := newStatsWorld(t, newStore(t), 3)
		for range 150 {
			w.randomTx()
		}
		must(t, w.st.StatsRebuild(w.ctx))
		var ids []string
		for _, s := range w.allSessions(w.st) {
			ids = append(ids, s.ID)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for writer := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(writer), 9))
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := addTokens(w.ctx, w.st, ids[rng.IntN(len(ids))], rng); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		for {
			_, finished, err := w.st.StatsBackfill(w.ctx, 5)
			must(t, err)
			if finished {
				break
			}
		}
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		w.check("after a backfill beside four writers")
	})
}

// addTokens adds tokens and a tool call to a session, in a transaction of
// its own, as the service does (the row read for update first).
func addTokens(ctx context.Context, st store.Store, id string, rng *rand.Rand) error {
	tx, err := st.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	s, err := tx.SessionGet(ctx, store.SessionGetParams{ID: id, ForUpdate: true})
	if err != nil {
		return err
	}
	was := s
	s.InputTokens += int64(1 + rng.IntN(100))
	s.CostMicros += int64(rng.IntN(5000))
	s.ToolCallCount++
	if err := tx.SessionUpdate(ctx, &s, &was); err != nil {
		return err
	}
	return tx.Commit()
}

// statsWorld is a store with random sessions and the operations that
// change them.
type statsWorld struct {
	t   *testing.T
	ctx context.Context
	st  store.Store
	rng *rand.Rand
	now time.Time
}

func newStatsWorld(t *testing.T, st store.Store, seed uint64) *statsWorld {
	for _, p := range []string{"p", "q"} {
		must(t, st.ProjectEnsure(context.Background(), p, base))
	}
	return &statsWorld{t: t, ctx: context.Background(), st: st, rng: rand.New(rand.NewPCG(seed, 30)), now: base.Add(12 * 24 * time.Hour)}
}

// pick returns one of values at random.
func pick[T any](rng *rand.Rand, values ...T) T { return values[rng.IntN(len(values))] }

// allSessions reads every session of both projects back from ex.
func (w *statsWorld) allSessions(ex store.Executor) []logbook.Session {
	w.t.Helper()
	var all []logbook.Session
	for _, p := range []string{"p", "q"} {
		page, err := ex.SessionList(w.ctx, store.SessionListParams{Project: p, Filter: logbook.SessionFilter{Subagents: true},
			Sort: logbook.SortStarted, Limit: 100_000, Now: w.now})
		must(w.t, err)
		all = append(all, page...)
	}
	return all
}

// randomTx runs a few random changes in one transaction, now and then
// under a savepoint rolled back, and now and then rolls it all back.
func (w *statsWorld) randomTx() {
	w.t.Helper()
	tx, err := w.st.Begin(w.ctx)
	must(w.t, err)
	defer tx.Rollback()
	for range 1 + w.rng.IntN(4) {
		savepoint := w.rng.IntN(4) == 0
		if savepoint {
			must(w.t, tx.Savepoint(w.ctx))
		}
		w.randomChange(tx)
		switch {
		case savepoint && w.rng.IntN(2) == 0:
			must(w.t, tx.RollbackToSavepoint(w.ctx))
		case savepoint:
			must(w.t, tx.ReleaseSavepoint(w.ctx))
		}
	}
	if w.rng.IntN(10) == 0 {
		must(w.t, tx.Rollback())
		return
	}
	must(w.t, tx.Commit())
}

// randomChange makes one change in tx.
func (w *statsWorld) randomChange(tx store.Tx) {
	w.t.Helper()
	rng := w.rng
	sessions := w.allSessions(tx)
	// Starts spread over ten days, some on the hour or at midnight.
	started := base.Add(-2*24*time.Hour + time.Duration(rng.Int64N(int64(10*24*time.Hour)))).Truncate(time.Microsecond)
	switch rng.IntN(4) {
	case 0:
		started = started.Truncate(time.Hour)
	case 1:
		started = started.Truncate(24 * time.Hour)
	}
	op := rng.IntN(11)
	if len(sessions) < 10 {
		op = 0
	}
	switch op {
	case 0, 1, 2: // a new session, one in four a subagent
		s := logbook.Session{ID: logbook.NewID(started), Project: pick(rng, "p", "p", "q"), Actor: pick(rng, "alice", "bob"),
			Harness: pick(rng, "claude-code", "codex"), Agent: pick(rng, "", "eng"), Model: pick(rng, "", "m1", "m2"),
			Status: logbook.StatusActive, StartedAt: started, LastSeenAt: started,
			InputTokens: rng.Int64N(1000), OutputTokens: rng.Int64N(100), ToolCallCount: rng.Int64N(5), CostMicros: rng.Int64N(2_000_000)}
		if rng.IntN(20) == 0 { // as a database written before counts were bounded may hold
			s.InputTokens = math.MaxInt64 - rng.Int64N(1000)
		}
		if rng.IntN(20) == 0 { // a session's cost saturates there too
			s.CostMicros = math.MaxInt64 - rng.Int64N(1000)
		}
		if len(sessions) > 0 && rng.IntN(4) == 0 {
			parent := pick(rng, sessions...)
			s.Project, s.ParentID, s.RootID = parent.Project, parent.ID, parent.Root()
		}
		if rng.IntN(3) == 0 {
			w.end(&s, started)
		}
		_, err := tx.SessionInsert(w.ctx, &s)
		must(w.t, err)
	case 3, 4, 5, 6: // an update of the fields statistics count, from the row as read or without it
		s, err := tx.SessionGet(w.ctx, store.SessionGetParams{ID: pick(rng, sessions...).ID, ForUpdate: true})
		must(w.t, err)
		was := s
		switch rng.IntN(6) {
		case 0:
			s.InputTokens = logbook.AddTokens(s.InputTokens, rng.Int64N(500))
			s.OutputTokens = logbook.AddTokens(s.OutputTokens, rng.Int64N(50))
			s.CostMicros = logbook.AddTokens(s.CostMicros, rng.Int64N(90_000))
			s.ToolCallCount += rng.Int64N(3)
		case 5: // a subagent made a session of its own, or a session made a subagent
			if s.ParentID != "" {
				s.ParentID = ""
			} else if other := pick(rng, sessions...); other.ID != s.ID && other.Project == s.Project {
				s.ParentID = other.ID
			}
		case 1:
			w.end(&s, s.StartedAt)
		case 2: // revived: active again, closed_at kept
			s.Status = logbook.StatusActive
		case 3:
			s.Model, s.Agent = pick(rng, "", "m1", "m2", "m3"), pick(rng, "", "eng", "ceo")
		case 4:
			s.Goal = "not counted"
		}
		if rng.IntN(3) == 0 {
			must(w.t, tx.SessionUpdate(w.ctx, &s, nil))
		} else {
			must(w.t, tx.SessionUpdate(w.ctx, &s, &was))
		}
	case 7: // the sweeper
		_, err := tx.SessionTimeOut(w.ctx, base.Add(time.Duration(rng.IntN(8*24))*time.Hour), w.now.Add(-time.Duration(rng.IntN(48))*time.Hour))
		must(w.t, err)
	case 8:
		_, err := tx.SessionDeleteTree(w.ctx, pick(rng, sessions...).ID)
		must(w.t, err)
	case 9: // logbook prune, or a project's retention
		before := base.Add(time.Duration(rng.IntN(5*24)) * time.Hour)
		var err error
		if rng.IntN(2) == 0 {
			_, err = tx.SessionPruneEnded(w.ctx, before, 1+rng.IntN(3))
		} else {
			_, err = tx.SessionPruneProject(w.ctx, pick(rng, "p", "q"), before, 1+rng.IntN(3))
		}
		must(w.t, err)
	case 10: // files and commands touched, some again
		s := pick(rng, sessions...)
		var touches []logbook.Touch
		for range 1 + rng.IntN(3) {
			touches = append(touches, logbook.Touch{Kind: pick(rng, logbook.TouchFile, logbook.TouchFile, logbook.TouchCommand),
				Value: pick(rng, "a.go", "b.go", "src/c.go", "README.md"), FirstAt: started})
		}
		must(w.t, tx.TouchUpsert(w.ctx, s.ID, s.Project, touches))
	}
}

// end ends s with a random outcome, blocker and duration (now and then
// closed before it started, which counts as no time).
func (w *statsWorld) end(s *logbook.Session, from time.Time) {
	closed := from.Add(time.Duration(w.rng.Int64N(int64(30*time.Hour))) - time.Minute).Truncate(time.Microsecond)
	s.Status, s.ClosedAt, s.EndReason = logbook.StatusEnded, &closed, "ended"
	s.Outcome = pick(w.rng, logbook.OutcomeSuccess, logbook.OutcomePartial, logbook.OutcomeFailed)
	s.Blocker = ""
	if s.Outcome != logbook.OutcomeSuccess {
		s.Blocker = pick(w.rng, logbook.BlockerToolError, logbook.BlockerRateLimited, logbook.BlockerUnknown)
	}
}

// check compares SessionStats with counting for every grouping and
// second grouping, windows that start at a midnight, on an hour and
// between hours, and days in zones an hour, and half an hour, off UTC.
func (w *statsWorld) check(when string) {
	w.t.Helper()
	all := w.allSessions(w.st)
	zones := []*time.Location{time.UTC}
	for _, name := range []string{"Europe/Berlin", "Asia/Kolkata", "America/St_Johns"} {
		z, err := time.LoadLocation(name)
		must(w.t, err)
		zones = append(zones, z)
	}
	// base is noon: windows that start at noon, early in a day (02:31, whose
	// day the rollups add up less what came before) and late (14:17, 20:41).
	sinces := []time.Time{base.Add(-30 * 24 * time.Hour), base.Add(-24 * time.Hour), base.Add(2*time.Hour + 17*time.Minute + 3*time.Second + 5*time.Microsecond),
		base.Add(-9*time.Hour - 29*time.Minute - 11*time.Microsecond), base.Add(3*24*time.Hour + 8*time.Hour + 41*time.Minute)}
	groupings := append([]logbook.StatsBy{""}, logbook.StatsGroupings...)
	checked := 0
	for _, by := range logbook.StatsGroupings {
		for _, then := range groupings {
			if then == by {
				continue
			}
			for _, zone := range zones {
				if zone != time.UTC && by != logbook.ByDay && then != logbook.ByDay {
					continue // a zone changes nothing else
				}
				for _, since := range sinces {
					for _, c := range []struct {
						project  string
						topLevel bool
					}{{"p", false}, {"q", false}, {"p", true}} {
						p := store.SessionStatsParams{Project: c.project, Since: since, By: by, Then: then, Now: w.now, Zone: zone, TopLevel: c.topLevel}
						got, err := w.st.SessionStats(w.ctx, p)
						must(w.t, err)
						want := countStats(all, p)
						if !slices.Equal(got, want) {
							w.t.Fatalf("%s: stats by %s then %q since %s in %s, project %s, top level only %v:\n got %+v\nwant %+v",
								when, by, then, since.Format(time.RFC3339Nano), zone, c.project, c.topLevel, got, want)
						}
						checked++
					}
				}
			}
		}
	}
	if checked == 0 || len(all) == 0 {
		w.t.Fatalf("%s: nothing was compared", when)
	}
	touched := map[string][]logbook.Touch{}
	for _, s := range all {
		list, err := w.st.TouchList(w.ctx, s.ID)
		must(w.t, err)
		touched[s.Project] = append(touched[s.Project], list...)
	}
	for _, since := range sinces {
		for _, project := range []string{"p", "q"} {
			got, err := w.st.TouchTop(w.ctx, project, since, 3)
			must(w.t, err)
			if want := countTouches(touched[project], since, 3); !slices.Equal(got, want) {
				w.t.Fatalf("%s: busiest files since %s, project %s:\n got %+v\nwant %+v", when, since, project, got, want)
			}
		}
	}
}

// countTouches is what TouchTop must answer, counted touch by touch.
func countTouches(touches []logbook.Touch, since time.Time, limit int) []logbook.Touch {
	day := since.UTC().Truncate(24 * time.Hour)
	files := map[string]*logbook.Touch{}
	for _, t := range touches {
		first := t.FirstAt.UTC().Truncate(24 * time.Hour)
		if t.Kind != logbook.TouchFile || first.Before(day) {
			continue
		}
		f := files[t.Value]
		if f == nil {
			f = &logbook.Touch{Kind: logbook.TouchFile, Value: t.Value, FirstAt: first}
			files[t.Value] = f
		}
		f.Count += t.Count
		if first.Before(f.FirstAt) {
			f.FirstAt = first
		}
	}
	out := []logbook.Touch{}
	for _, f := range files {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b logbook.Touch) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value))
	})
	return out[:min(limit, len(out))]
}

// countStats is what SessionStats must answer, counted session by session.
func countStats(sessions []logbook.Session, p store.SessionStatsParams) []logbook.StatsRow {
	zone := cmp.Or(p.Zone, time.UTC)
	value := func(by logbook.StatsBy, s logbook.Session) string {
		switch by {
		case logbook.ByOutcome:
			return string(s.Outcome)
		case logbook.ByBlocker:
			return string(s.Blocker)
		case logbook.ByHarness:
			return s.Harness
		case logbook.ByAgent:
			return s.Agent
		case logbook.ByActor:
			return s.Actor
		case logbook.ByModel:
			return s.Model
		case logbook.ByDay:
			return s.StartedAt.In(zone).Format(time.DateOnly)
		}
		return ""
	}
	groups := map[[2]string]*logbook.StatsRow{}
	in, out, cost := map[[2]string]*big.Int{}, map[[2]string]*big.Int{}, map[[2]string]*big.Int{} // sums, saturated once added up
	for _, s := range sessions {
		if s.Project != p.Project || s.StartedAt.Before(p.Since) || (p.TopLevel && s.ParentID != "") {
			continue
		}
		k := [2]string{value(p.By, s), value(p.Then, s)}
		g := groups[k]
		if g == nil {
			g = &logbook.StatsRow{Key: k[0], Then: k[1]}
			groups[k] = g
			in[k], out[k], cost[k] = new(big.Int), new(big.Int), new(big.Int)
		}
		g.Sessions++
		in[k].Add(in[k], big.NewInt(s.InputTokens))
		out[k].Add(out[k], big.NewInt(s.OutputTokens))
		cost[k].Add(cost[k], big.NewInt(s.CostMicros))
		g.ToolCalls += s.ToolCallCount
		switch {
		case s.Status == logbook.StatusEnded && s.ClosedAt != nil:
			g.DurationSeconds += max(0, s.ClosedAt.Sub(s.StartedAt).Microseconds()/1_000_000)
		case s.Status == logbook.StatusActive:
			g.DurationSeconds += max(0, p.Now.Sub(s.StartedAt).Microseconds()/1_000_000)
		}
	}
	saturated := func(v *big.Int) int64 {
		if v.IsInt64() {
			return v.Int64()
		}
		return math.MaxInt64
	}
	rows := []logbook.StatsRow{}
	for k, g := range groups {
		g.InputTokens, g.OutputTokens, g.CostMicros = saturated(in[k]), saturated(out[k]), saturated(cost[k])
		rows = append(rows, *g)
	}
	slices.SortFunc(rows, func(a, b logbook.StatsRow) int { return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Then, b.Then)) })
	return rows
}
