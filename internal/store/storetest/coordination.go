package storetest

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func testProject(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	if _, err := st.ProjectPolicyGet(ctx, "p"); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("the policy of a project never named: err = %v, want ErrNotFound", err)
	}
	if err := st.ProjectPolicySet(ctx, "p", `{}`); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("setting the policy of a project never named: err = %v, want ErrNotFound", err)
	}
	must(t, st.ProjectEnsure(ctx, "p", base))
	must(t, st.ProjectEnsure(ctx, "p", base.Add(time.Hour))) // a no-op
	policy, err := st.ProjectPolicyGet(ctx, "p")
	must(t, err)
	equal(t, "policy never set", policy, "")
	must(t, st.ProjectPolicySet(ctx, "p", `{"rules":[]}`))
	policy, err = st.ProjectPolicyGet(ctx, "p")
	must(t, err)
	equal(t, "policy", policy, `{"rules":[]}`)

	tx, err := st.Begin(ctx)
	must(t, err)
	defer tx.Rollback()
	won, err := tx.SweepLock(ctx)
	must(t, err)
	equal(t, "the only sweeper wins the sweep lock", won, true)
	must(t, tx.Commit())
}

func testClaim(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	// claim stores an active claim of s on subject, taken at at for ttl
	// seconds.
	claim := func(t *testing.T, st store.Store, s logbook.Session, subject string, at time.Time, ttl int64) logbook.Claim {
		t.Helper()
		c := logbook.Claim{ID: logbook.NewID(at), Project: s.Project, SessionID: s.ID, Actor: s.Actor, Subject: subject,
			TTLSeconds: ttl, CreatedAt: at, ExpiresAt: at.Add(time.Duration(ttl) * time.Second)}
		must(t, st.ClaimInsert(ctx, &c))
		return c
	}
	subjects := func(claims []logbook.Claim) []string {
		var out []string
		for _, c := range claims {
			out = append(out, c.Subject)
		}
		return out
	}

	t.Run("InsertGetUpdate", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		c := claim(t, st, s, "src/a.go", base, 60)
		got, err := st.ClaimGet(ctx, c.ID)
		must(t, err)
		equal(t, "claim read back", got.Subject, c.Subject)
		equal(t, "expires_at", got.ExpiresAt, c.ExpiresAt)
		equal(t, "session", got.SessionID, s.ID)
		if got.ReleasedAt != nil {
			t.Errorf("a new claim is released at %v", got.ReleasedAt)
		}
		if _, err := st.ClaimGet(ctx, "nope"); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("ClaimGet(missing): err = %v, want ErrNotFound", err)
		}
		if err := st.ClaimInsert(ctx, &c); !errors.Is(err, logbook.ErrConflict) {
			t.Errorf("a claim id stored twice: err = %v, want ErrConflict", err)
		}

		released := base.Add(time.Minute)
		c.TTLSeconds, c.ExpiresAt, c.ReleasedAt, c.ReleaseReason = 120, base.Add(2*time.Minute), &released, logbook.ReleaseReleased
		must(t, st.ClaimUpdate(ctx, &c))
		got, err = st.ClaimGet(ctx, c.ID)
		must(t, err)
		equal(t, "ttl", got.TTLSeconds, int64(120))
		equal(t, "expires_at", got.ExpiresAt, c.ExpiresAt)
		equal(t, "release reason", got.ReleaseReason, logbook.ReleaseReleased)
		if got.ReleasedAt == nil || !got.ReleasedAt.Equal(released) {
			t.Errorf("released_at = %v, want %v", got.ReleasedAt, released)
		}
		missing := logbook.Claim{ID: "nope"}
		if err := st.ClaimUpdate(ctx, &missing); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("ClaimUpdate(missing): err = %v, want ErrNotFound", err)
		}
	})

	// A claim the gate took for a write says so wherever it is read.
	t.Run("Auto", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		claim(t, st, s, "asked.go", base, 600)
		taken := logbook.Claim{ID: logbook.NewID(base), Project: s.Project, SessionID: s.ID, Actor: s.Actor, Subject: "written.go",
			TTLSeconds: 600, CreatedAt: base, ExpiresAt: base.Add(10 * time.Minute), Auto: true}
		must(t, st.ClaimInsert(ctx, &taken))
		got, err := st.ClaimGet(ctx, taken.ID)
		must(t, err)
		equal(t, "auto, read back", got.Auto, true)
		listed, err := st.ClaimList(ctx, store.ClaimListParams{Project: s.Project, Now: base})
		must(t, err)
		for _, c := range listed {
			equal(t, "auto of the claim on "+c.Subject, c.Auto, c.ID == taken.ID)
		}
		released, err := st.ClaimReleaseSession(ctx, s.ID, logbook.ReleaseSessionEnded, base.Add(time.Minute))
		must(t, err)
		for _, c := range released {
			equal(t, "auto of the released claim on "+c.Subject, c.Auto, c.ID == taken.ID)
		}
		equal(t, "claims released", len(released), 2)
	})

	t.Run("Lock", func(t *testing.T) {
		// Two sessions claim at once, one a folder, the other a file in
		// it: the second's lock waits until the first has committed, and
		// then it sees the first's claim. (On SQLite the second
		// transaction already waits to begin.)
		t.Parallel()
		st := newStore(t)
		s1 := newSession(t, st, sessionOpts{})
		first, err := st.Begin(ctx)
		must(t, err)
		defer first.Rollback()
		must(t, first.ClaimLock(ctx, "p", []string{"src/"}))
		seen := make(chan []logbook.Claim, 1)
		failed := make(chan error, 1)
		go func() {
			second, err := st.Begin(ctx)
			if err != nil {
				failed <- err
				return
			}
			defer second.Rollback()
			if err := second.ClaimLock(ctx, "p", []string{"src/api/x.go", "README.md"}); err != nil {
				failed <- err
				return
			}
			held, err := second.ClaimList(ctx, store.ClaimListParams{Project: "p", Conflicting: "src/api/x.go", Now: base})
			if err != nil {
				failed <- err
				return
			}
			seen <- held
		}()
		time.Sleep(200 * time.Millisecond) // time for the second to reach its lock
		select {
		case held := <-seen:
			t.Fatalf("the second claimed while the first held the folder's lock (saw %v)", subjects(held))
		case err := <-failed:
			t.Fatal(err)
		default:
		}
		c := logbook.Claim{ID: logbook.NewID(base), Project: "p", SessionID: s1.ID, Actor: s1.Actor, Subject: "src/",
			TTLSeconds: 60, CreatedAt: base, ExpiresAt: base.Add(time.Minute)}
		must(t, first.ClaimInsert(ctx, &c))
		must(t, first.Commit())
		select {
		case held := <-seen:
			if got := subjects(held); !slices.Equal(got, []string{"src/"}) {
				t.Errorf("claims the second sees once the first committed: %v, want [src/]", got)
			}
		case err := <-failed:
			t.Fatal(err)
		}
	})

	t.Run("ListActiveBySubject", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		other := newSession(t, st, sessionOpts{Actor: "bob"})
		elsewhere := newSession(t, st, sessionOpts{Project: "q"})
		claim(t, st, s, "src/", base, 600)
		claim(t, st, other, "src/a.go", base.Add(time.Second), 600)
		claim(t, st, s, "docs/readme", base.Add(2*time.Second), 600)
		claim(t, st, s, "old", base.Add(-time.Hour), 60) // expired by now
		gone := claim(t, st, other, "gone", base, 600)
		at := base.Add(time.Minute)
		gone.ReleasedAt, gone.ReleaseReason = &at, logbook.ReleaseReleased
		must(t, st.ClaimUpdate(ctx, &gone))
		claim(t, st, elsewhere, "src/a.go", base, 600)

		now := base.Add(2 * time.Minute)
		all, err := st.ClaimList(ctx, store.ClaimListParams{Project: "p", Now: now})
		must(t, err)
		equal(t, "active claims, oldest first", slices.Equal(subjects(all), []string{"src/", "src/a.go", "docs/readme"}), true)
		equal(t, "the holding session's title", all[0].Title, s.Title)

		held, err := st.ClaimList(ctx, store.ClaimListParams{Project: "p", Subject: "src/a.go", Now: now})
		must(t, err)
		equal(t, "claims on a subject or a prefix of it", slices.Equal(subjects(held), []string{"src/", "src/a.go"}), true)
		held, err = st.ClaimList(ctx, store.ClaimListParams{Project: "p", Subject: "src/", Now: now})
		must(t, err)
		equal(t, "a prefix's holders exclude the paths below it", slices.Equal(subjects(held), []string{"src/"}), true)

		clash, err := st.ClaimList(ctx, store.ClaimListParams{Project: "p", Conflicting: "src/", Now: now})
		must(t, err)
		equal(t, "claims colliding in either direction", slices.Equal(subjects(clash), []string{"src/", "src/a.go"}), true)
		clash, err = st.ClaimList(ctx, store.ClaimListParams{Project: "p", Conflicting: "src/b.go", Now: now})
		must(t, err)
		equal(t, "a sibling collides only with the prefix", slices.Equal(subjects(clash), []string{"src/"}), true)

		mine, err := st.ClaimList(ctx, store.ClaimListParams{Project: "p", SessionID: s.ID, Now: now})
		must(t, err)
		equal(t, "one session's claims", slices.Equal(subjects(mine), []string{"src/", "docs/readme"}), true)
	})

	t.Run("RenewReleaseExpire", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		other := newSession(t, st, sessionOpts{Actor: "bob"})
		short := claim(t, st, s, "a", base, 60)
		// b expires later than a renewal would move it to (its TTL was
		// shortened after it was taken).
		long := logbook.Claim{ID: logbook.NewID(base), Project: "p", SessionID: s.ID, Actor: s.Actor, Subject: "b",
			TTLSeconds: 60, CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
		must(t, st.ClaimInsert(ctx, &long))
		theirs := claim(t, st, other, "c", base, 60)

		// Renewing at base+30s moves a's expiry to base+90s; b's stays at
		// base+1h, never earlier.
		must(t, st.ClaimRenew(ctx, s.ID, base.Add(30*time.Second)))
		got, _ := st.ClaimGet(ctx, short.ID)
		equal(t, "renewed expiry", got.ExpiresAt, base.Add(90*time.Second))
		got, _ = st.ClaimGet(ctx, long.ID)
		equal(t, "a later expiry is kept", got.ExpiresAt, long.ExpiresAt)
		got, _ = st.ClaimGet(ctx, theirs.ID)
		equal(t, "another session's claim is not renewed", got.ExpiresAt, theirs.ExpiresAt)

		expired, err := st.ClaimExpire(ctx, base.Add(80*time.Second))
		must(t, err)
		equal(t, "claims expired", slices.Equal(subjects(expired), []string{"c"}), true)
		equal(t, "expired reason", expired[0].ReleaseReason, logbook.ReleaseExpired)
		if expired[0].ReleasedAt == nil || !expired[0].ReleasedAt.Equal(theirs.ExpiresAt) {
			t.Errorf("an expired claim is released at %v, want its expiry %v", expired[0].ReleasedAt, theirs.ExpiresAt)
		}
		again, err := st.ClaimExpire(ctx, base.Add(80*time.Second))
		must(t, err)
		equal(t, "claims expired twice", len(again), 0)

		at := base.Add(time.Minute)
		released, err := st.ClaimReleaseSession(ctx, s.ID, logbook.ReleaseSessionEnded, at)
		must(t, err)
		slices.SortFunc(released, func(a, b logbook.Claim) int { return cmp.Compare(a.Subject, b.Subject) })
		equal(t, "claims released with the session", slices.Equal(subjects(released), []string{"a", "b"}), true)
		for _, c := range released {
			equal(t, "release reason", c.ReleaseReason, logbook.ReleaseSessionEnded)
			if c.ReleasedAt == nil || !c.ReleasedAt.Equal(at) {
				t.Errorf("released_at = %v, want %v", c.ReleasedAt, at)
			}
		}
		left, err := st.ClaimList(ctx, store.ClaimListParams{Project: "p", Now: at})
		must(t, err)
		equal(t, "active claims left", len(left), 0)
		released, err = st.ClaimReleaseSession(ctx, s.ID, logbook.ReleaseSessionEnded, at)
		must(t, err)
		equal(t, "claims released twice", len(released), 0)
	})
}

func testTouchAndLink(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("Touches", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		other := newSession(t, st, sessionOpts{Actor: "bob"})
		elsewhere := newSession(t, st, sessionOpts{Project: "q"})
		must(t, st.TouchUpsert(ctx, s.ID, "p", []logbook.Touch{
			{Kind: logbook.TouchFile, Value: "b.go", FirstAt: base},
			{Kind: logbook.TouchCommand, Value: "go test", FirstAt: base.Add(time.Second)},
			{Kind: logbook.TouchFile, Value: "a.go", FirstAt: base.Add(2 * time.Second)},
		}))
		// A repeat counts; its first time stays.
		must(t, st.TouchUpsert(ctx, s.ID, "p", []logbook.Touch{{Kind: logbook.TouchFile, Value: "b.go", FirstAt: base.Add(time.Hour)}}))
		must(t, st.TouchUpsert(ctx, other.ID, "p", []logbook.Touch{
			{Kind: logbook.TouchFile, Value: "a.go", FirstAt: base.Add(time.Minute)},
			{Kind: logbook.TouchFile, Value: "old.go", FirstAt: base.Add(-48 * time.Hour)},
		}))
		must(t, st.TouchUpsert(ctx, elsewhere.ID, "q", []logbook.Touch{{Kind: logbook.TouchFile, Value: "a.go", FirstAt: base}}))

		got, err := st.TouchList(ctx, s.ID)
		must(t, err)
		want := []logbook.Touch{
			{Kind: logbook.TouchFile, Value: "b.go", FirstAt: base, Count: 2},
			{Kind: logbook.TouchCommand, Value: "go test", FirstAt: base.Add(time.Second), Count: 1},
			{Kind: logbook.TouchFile, Value: "a.go", FirstAt: base.Add(2 * time.Second), Count: 1},
		}
		equal(t, "touches in first-touched order, repeats counted", slices.Equal(got, want), true)
		if t.Failed() {
			t.Logf("got %+v", got)
		}

		top, err := st.TouchTop(ctx, "p", base.Add(-time.Hour), 10)
		must(t, err)
		// a.go: 1+1 across sessions; b.go: 2; commands and touches of days
		// before since's are left out. FirstAt is the day of the first.
		day := base.Truncate(24 * time.Hour)
		want = []logbook.Touch{
			{Kind: logbook.TouchFile, Value: "a.go", FirstAt: day, Count: 2},
			{Kind: logbook.TouchFile, Value: "b.go", FirstAt: day, Count: 2},
		}
		equal(t, "the project's most touched files since a time", slices.Equal(top, want), true)
		if t.Failed() {
			t.Logf("got %+v", top)
		}
		top, err = st.TouchTop(ctx, "p", base.Add(-time.Hour), 1)
		must(t, err)
		equal(t, "limit", len(top), 1)
	})

	t.Run("Links", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		other := newSession(t, st, sessionOpts{Actor: "bob", StartedAt: base.Add(time.Second)})
		ended := newSession(t, st, sessionOpts{Actor: "carol"})
		elsewhere := newSession(t, st, sessionOpts{Project: "q"})

		issue := func(ref, via string) logbook.Link { return logbook.Link{Kind: "issue", Ref: ref, Via: via} }
		must(t, st.LinkSet(ctx, s.ID, "p", []logbook.Link{issue("12", logbook.ViaAttached), {Kind: "pull", Ref: "7", Via: logbook.ViaAttached}},
			[]logbook.Link{issue("3", logbook.ViaNamed)}))
		// Attached links are replaced; named ones only ever added.
		must(t, st.LinkSet(ctx, s.ID, "p", []logbook.Link{issue("13", logbook.ViaAttached)}, []logbook.Link{issue("4", logbook.ViaNamed), issue("3", logbook.ViaNamed)}))
		got, err := st.LinkList(ctx, s.ID)
		must(t, err)
		want := []logbook.Link{issue("13", logbook.ViaAttached), issue("3", logbook.ViaNamed), issue("4", logbook.ViaNamed)}
		equal(t, "links after a second LinkSet", slices.Equal(got, want), true)
		if t.Failed() {
			t.Logf("got %+v", got)
		}

		must(t, st.LinkSet(ctx, other.ID, "p", nil, []logbook.Link{issue("13", logbook.ViaNamed)}))
		must(t, st.LinkSet(ctx, ended.ID, "p", []logbook.Link{issue("13", logbook.ViaAttached)}, nil))
		closed := base.Add(time.Hour)
		ended.Status, ended.ClosedAt = logbook.StatusEnded, &closed
		must(t, st.SessionUpdate(ctx, &ended, nil))
		must(t, st.LinkSet(ctx, elsewhere.ID, "q", []logbook.Link{issue("13", logbook.ViaAttached)}, nil))
		linked, err := st.SessionListLinked(ctx, "p", "issue", "13")
		must(t, err)
		equal(t, "the project's active sessions on an issue", ids(linked), ids([]logbook.Session{s, other}))
		linked, err = st.SessionListLinked(ctx, "p", "pull", "7")
		must(t, err)
		equal(t, "a pull replaced by LinkSet no longer links", len(linked), 0)

		s.Subject = "vm:1"
		must(t, st.SessionUpdate(ctx, &s, nil))
		linked, err = st.SessionListLinked(ctx, "p", "subject", "vm:1")
		must(t, err)
		equal(t, "sessions on a subject", ids(linked), ids([]logbook.Session{s}))
	})
}

func testTask(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()
	st := newStore(t)
	s1 := newSession(t, st, sessionOpts{})
	s2 := newSession(t, st, sessionOpts{StartedAt: base.Add(time.Hour)})
	if _, err := st.TaskGet(ctx, "p", "T-1"); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("TaskGet(missing): err = %v, want ErrNotFound", err)
	}
	t1 := logbook.Task{Project: "p", ID: "T-1", Agent: "ceo", Title: "ship", Text: "ship it", ActiveSessionID: s1.ID, CreatedAt: base, UpdatedAt: base}
	t2 := logbook.Task{Project: "p", ID: "T-2", Agent: "ceo", Title: "test", ActiveSessionID: s1.ID, CreatedAt: base.Add(time.Second), UpdatedAt: base.Add(time.Second)}
	t3 := logbook.Task{Project: "p", ID: "T-3", Agent: "cto", Title: "other agent", ActiveSessionID: s1.ID, CreatedAt: base, UpdatedAt: base}
	for _, task := range []*logbook.Task{&t2, &t1, &t3} {
		must(t, st.TaskUpsert(ctx, task))
	}
	got, err := st.TaskGet(ctx, "p", "T-1")
	must(t, err)
	equal(t, "title", got.Title, "ship")
	equal(t, "text", got.Text, "ship it")
	equal(t, "created_at", got.CreatedAt, base)
	equal(t, "sessions", slices.Equal(got.Sessions, []string{s1.ID}), true)

	// An upsert keeps created_at and adds the new active session to the history.
	t1.Title, t1.ActiveSessionID, t1.CreatedAt, t1.UpdatedAt = "ship v2", s2.ID, base.Add(time.Hour), base.Add(time.Hour)
	must(t, st.TaskUpsert(ctx, &t1))
	got, err = st.TaskGet(ctx, "p", "T-1")
	must(t, err)
	equal(t, "title after upsert", got.Title, "ship v2")
	equal(t, "created_at kept", got.CreatedAt, base)
	equal(t, "updated_at", got.UpdatedAt, base.Add(time.Hour))
	equal(t, "sessions lived in, in order", slices.Equal(got.Sessions, []string{s1.ID, s2.ID}), true)

	list, err := st.TaskList(ctx, "p", "ceo")
	must(t, err)
	equal(t, "an agent's tasks, oldest first", len(list) == 2 && list[0].ID == "T-1" && list[1].ID == "T-2", true)

	s3 := newSession(t, st, sessionOpts{StartedAt: base.Add(2 * time.Hour)})
	n, err := st.TaskMoveAgent(ctx, "p", "ceo", s3.ID, base.Add(2*time.Hour))
	must(t, err)
	equal(t, "tasks moved", n, int64(2))
	for _, id := range []string{"T-1", "T-2"} {
		got, err := st.TaskGet(ctx, "p", id)
		must(t, err)
		equal(t, id+" active session", got.ActiveSessionID, s3.ID)
		equal(t, id+" last session lived in", got.Sessions[len(got.Sessions)-1], s3.ID)
	}
	got, _ = st.TaskGet(ctx, "p", "T-3")
	equal(t, "another agent's task stays", got.ActiveSessionID, s1.ID)

	// Rotations, oldest first.
	r2 := logbook.Rotation{At: base.Add(2 * time.Hour), Reason: "max_age", FromSessionID: s2.ID, ToSessionID: s3.ID}
	r1 := logbook.Rotation{At: base.Add(time.Hour), Reason: "manual", FromSessionID: s1.ID, ToSessionID: s2.ID}
	must(t, st.AgentRotationInsert(ctx, "p", "ceo", r2))
	must(t, st.AgentRotationInsert(ctx, "p", "ceo", r1))
	must(t, st.AgentRotationInsert(ctx, "p", "cto", r1))
	rotations, err := st.AgentRotationList(ctx, "p", "ceo")
	must(t, err)
	equal(t, "rotations, oldest first", slices.Equal(rotations, []logbook.Rotation{r1, r2}), true)
	rotations, err = st.AgentRotationList(ctx, "p", "nobody")
	must(t, err)
	equal(t, "an agent with no rotations", len(rotations), 0)
}
