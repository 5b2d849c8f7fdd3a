package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func testAlerts(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	rule := func(t *testing.T, ex store.Executor, project string, kind logbook.AlertKind, at time.Time) logbook.AlertRule {
		t.Helper()
		r := logbook.AlertRule{ID: logbook.NewID(at), Project: project, Name: "rule " + string(kind), Kind: kind,
			WebhookURL: "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX", Format: logbook.AlertSlack,
			Secret: "whsec_0123456789abcdef0123456789abcdef", CreatedAt: at}
		must(t, ex.AlertRuleInsert(ctx, &r))
		return r
	}
	raise := func(t *testing.T, ex store.Executor, r logbook.AlertRule, subject string, at time.Time) (logbook.Alert, bool) {
		t.Helper()
		a := logbook.Alert{ID: logbook.NewID(at), RuleID: r.ID, Project: r.Project, Kind: r.Kind, Subject: subject, SessionID: subject,
			Summary: "session " + subject + " failed", Details: json.RawMessage(`{"outcome":"failed"}`), RaisedAt: at}
		inserted, err := ex.AlertInsert(ctx, &a)
		must(t, err)
		return a, inserted
	}

	t.Run("Rules", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		failed := rule(t, st, "p", logbook.AlertSessionFailed, base)
		idle := rule(t, st, "p", logbook.AlertIdleWithClaims, base.Add(time.Second))
		other := rule(t, st, "q", logbook.AlertIdleWithClaims, base.Add(2*time.Second))
		got, err := st.AlertRuleGet(ctx, failed.ID)
		must(t, err)
		// The webhook URL and the secret come back whole, for delivery.
		equal(t, "rule read back", got, failed)
		if _, err := st.AlertRuleGet(ctx, "nope"); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("a rule never made: %v, want ErrNotFound", err)
		}
		if err := st.AlertRuleInsert(ctx, &failed); !errors.Is(err, logbook.ErrConflict) {
			t.Errorf("a rule stored twice: %v, want ErrConflict", err)
		}
		ruleIDs := func(p store.AlertRuleListParams) []string {
			rules, err := st.AlertRuleList(ctx, p)
			must(t, err)
			var out []string
			for _, r := range rules {
				out = append(out, r.ID)
			}
			return out
		}
		for _, tc := range []struct {
			name string
			p    store.AlertRuleListParams
			want []string
		}{
			{"a project's", store.AlertRuleListParams{Project: "p"}, []string{failed.ID, idle.ID}},
			{"a project's of a kind", store.AlertRuleListParams{Project: "p", Kind: logbook.AlertIdleWithClaims}, []string{idle.ID}},
			{"every project's of a kind", store.AlertRuleListParams{Kind: logbook.AlertIdleWithClaims}, []string{idle.ID, other.ID}},
			{"none", store.AlertRuleListParams{Project: "r"}, nil},
		} {
			if got := ruleIDs(tc.p); !slices.Equal(got, tc.want) {
				t.Errorf("%s rules: %v, want %v", tc.name, got, tc.want)
			}
		}

		// Deleting a rule deletes its alerts and their log.
		a, _ := raise(t, st, failed, "s1", base)
		claimed, err := st.AlertClaimDue(ctx, base, base.Add(time.Minute), 10)
		must(t, err)
		equal(t, "alerts claimed", len(claimed), 1)
		_, err = st.AlertFinish(ctx, store.AlertFinishParams{ID: a.ID, Lease: base.Add(time.Minute), Status: logbook.AlertFailed,
			Attempt: logbook.AlertAttempt{At: base, StatusCode: 500}})
		must(t, err)
		must(t, st.AlertRuleDelete(ctx, failed.ID))
		if err := st.AlertRuleDelete(ctx, failed.ID); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("a rule deleted twice: %v, want ErrNotFound", err)
		}
		alerts, err := st.AlertList(ctx, store.AlertListParams{Project: "p", Limit: 10})
		must(t, err)
		equal(t, "alerts left of a deleted rule", len(alerts), 0)
		if got := ruleIDs(store.AlertRuleListParams{Project: "p"}); !slices.Equal(got, []string{idle.ID}) {
			t.Errorf("rules after a delete: %v", got)
		}
	})

	t.Run("OneAlertPerSubject", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		r := rule(t, st, "p", logbook.AlertSessionFailed, base)
		r2 := rule(t, st, "p", logbook.AlertToolLoop, base)
		first, inserted := raise(t, st, r, "s1", base)
		equal(t, "the first alert about s1 is stored", inserted, true)
		equal(t, "a new alert is pending", first.Status, logbook.AlertPending)
		if _, inserted := raise(t, st, r, "s1", base.Add(time.Minute)); inserted {
			t.Error("the same rule raised a second alert about s1")
		}
		if _, inserted := raise(t, st, r2, "s1", base.Add(time.Minute)); !inserted {
			t.Error("another rule could not raise an alert about s1")
		}
		if _, inserted := raise(t, st, r, "s2", base.Add(2*time.Minute)); !inserted {
			t.Error("the rule could not raise an alert about s2")
		}
		alerts, err := st.AlertList(ctx, store.AlertListParams{Project: "p", RuleID: r.ID, Limit: 10})
		must(t, err)
		if len(alerts) != 2 || alerts[0].Subject != "s2" || alerts[1].Subject != "s1" {
			t.Fatalf("the rule's alerts, newest first: %+v", alerts)
		}
		got := alerts[1]
		equal(t, "summary", got.Summary, first.Summary)
		equal(t, "details", string(got.Details), `{"outcome":"failed"}`)
		equal(t, "raised at", got.RaisedAt, base)
		equal(t, "due at once", *got.NextAttemptAt, base)
		alerts, err = st.AlertList(ctx, store.AlertListParams{Project: "p", Limit: 1})
		must(t, err)
		equal(t, "alerts within the limit", len(alerts), 1)
		alerts, err = st.AlertList(ctx, store.AlertListParams{Project: "q", Limit: 10})
		must(t, err)
		equal(t, "another project's alerts", len(alerts), 0)
	})

	t.Run("ClaimAndFinish", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		r := rule(t, st, "p", logbook.AlertSessionFailed, base)
		a1, _ := raise(t, st, r, "s1", base)
		a2, _ := raise(t, st, r, "s2", base.Add(time.Second))
		raise(t, st, r, "s3", base.Add(time.Hour)) // not due yet

		lease := base.Add(2*time.Second + time.Minute)
		claimed, err := st.AlertClaimDue(ctx, base.Add(2*time.Second), lease, 10)
		must(t, err)
		if len(claimed) != 2 || claimed[0].ID != a1.ID || claimed[1].ID != a2.ID {
			t.Fatalf("claimed %+v, want the two due, the longest due first", claimed)
		}
		equal(t, "the lease is the next attempt", *claimed[0].NextAttemptAt, lease)
		again, err := st.AlertClaimDue(ctx, base.Add(3*time.Second), base.Add(time.Hour), 10)
		must(t, err)
		equal(t, "alerts claimed while leased", len(again), 0)

		// a1 fails once, then is delivered; a2's lease lapses.
		retry := base.Add(time.Minute)
		ok, err := st.AlertFinish(ctx, store.AlertFinishParams{ID: a1.ID, Lease: lease, Status: logbook.AlertPending, NextAttemptAt: retry,
			Attempt: logbook.AlertAttempt{At: base.Add(3 * time.Second), StatusCode: 503, Error: "503 Service Unavailable", DurationMS: 12}})
		must(t, err)
		equal(t, "a held alert finishes", ok, true)
		ok, err = st.AlertFinish(ctx, store.AlertFinishParams{ID: a1.ID, Lease: lease, Status: logbook.AlertDelivered,
			Attempt: logbook.AlertAttempt{At: base.Add(4 * time.Second), StatusCode: 200}})
		must(t, err)
		equal(t, "an alert whose lease was let go finishes again", ok, false)

		// After its lease lapsed, a2 is taken by another deliverer; the
		// first one's answer then changes nothing.
		later := lease.Add(time.Second)
		claimed, err = st.AlertClaimDue(ctx, later, later.Add(time.Minute), 10)
		must(t, err)
		if len(claimed) != 2 || claimed[0].ID != a1.ID || claimed[1].ID != a2.ID {
			t.Fatalf("claimed after the retry time and the lapsed lease: %+v", claimed)
		}
		ok, err = st.AlertFinish(ctx, store.AlertFinishParams{ID: a2.ID, Lease: lease, Status: logbook.AlertDelivered,
			Attempt: logbook.AlertAttempt{At: later, StatusCode: 200}})
		must(t, err)
		equal(t, "a finish under a lapsed lease", ok, false)
		for _, a := range claimed {
			ok, err := st.AlertFinish(ctx, store.AlertFinishParams{ID: a.ID, Lease: later.Add(time.Minute), Status: logbook.AlertDelivered,
				Attempt: logbook.AlertAttempt{At: later.Add(time.Second), StatusCode: 204, DurationMS: 3}})
			must(t, err)
			equal(t, "finished under its lease", ok, true)
		}
		claimed, err = st.AlertClaimDue(ctx, base.Add(2*time.Hour), base.Add(3*time.Hour), 10)
		must(t, err)
		if len(claimed) != 1 || claimed[0].Subject != "s3" {
			t.Errorf("claimed once the others were delivered: %+v", claimed)
		}

		alerts, err := st.AlertList(ctx, store.AlertListParams{Project: "p", Limit: 10})
		must(t, err)
		byID := map[string]logbook.Alert{}
		for _, a := range alerts {
			byID[a.ID] = a
		}
		got := byID[a1.ID]
		equal(t, "status", got.Status, logbook.AlertDelivered)
		equal(t, "attempts", got.Attempts, 2)
		equal(t, "delivered at", *got.DeliveredAt, later.Add(time.Second))
		if got.NextAttemptAt != nil {
			t.Errorf("a delivered alert is due at %v", got.NextAttemptAt)
		}
		want := []logbook.AlertAttempt{
			{At: base.Add(3 * time.Second), StatusCode: 503, Error: "503 Service Unavailable", DurationMS: 12},
			{At: later.Add(time.Second), StatusCode: 204, DurationMS: 3},
		}
		if !slices.Equal(got.Log, want) {
			t.Errorf("delivery log %+v, want %+v", got.Log, want)
		}
		equal(t, "attempts of the alert whose lease lapsed", byID[a2.ID].Attempts, 1)
	})

	t.Run("ConcurrentClaimsTakeEachAlertOnce", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		r := rule(t, st, "p", logbook.AlertSessionFailed, base)
		const n = 40
		for i := range n {
			raise(t, st, r, fmt.Sprintf("s%02d", i), base)
		}
		var mu sync.Mutex
		taken := map[string]int{}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					claimed, err := st.AlertClaimDue(ctx, base, base.Add(time.Minute), 3)
					if err != nil {
						t.Error(err)
						return
					}
					if len(claimed) == 0 {
						return
					}
					mu.Lock()
					for _, a := range claimed {
						taken[a.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		equal(t, "alerts taken", len(taken), n)
		for id, times := range taken {
			if times != 1 {
				t.Errorf("alert %s taken %d times", id, times)
			}
		}
	})

	t.Run("IdleSessionsHoldingClaims", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		claim := func(s logbook.Session, subject string, expires time.Time, released bool) {
			c := logbook.Claim{ID: logbook.NewID(base), Project: s.Project, SessionID: s.ID, Actor: s.Actor, Subject: subject,
				TTLSeconds: 3600, CreatedAt: base, ExpiresAt: expires}
			must(t, st.ClaimInsert(ctx, &c))
			if released {
				c.ReleasedAt, c.ReleaseReason = &base, logbook.ReleaseReleased
				must(t, st.ClaimUpdate(ctx, &c))
			}
		}
		quiet := newSession(t, st, sessionOpts{StartedAt: base})
		quieter := newSession(t, st, sessionOpts{StartedAt: base.Add(-time.Minute), Actor: "bob"})
		busy := newSession(t, st, sessionOpts{StartedAt: base.Add(50 * time.Minute)})
		expired := newSession(t, st, sessionOpts{StartedAt: base})
		released := newSession(t, st, sessionOpts{StartedAt: base})
		none := newSession(t, st, sessionOpts{StartedAt: base})
		elsewhere := newSession(t, st, sessionOpts{StartedAt: base, Project: "q"})
		ended := endSession(t, st, newSession(t, st, sessionOpts{StartedAt: base}), base)
		claim(quiet, "src/b/", base.Add(2*time.Hour), false)
		claim(quiet, "src/a.go", base.Add(2*time.Hour), false)
		claim(quiet, "issue:1", base.Add(2*time.Hour), true)
		claim(quieter, "issue:7", base.Add(2*time.Hour), false)
		claim(busy, "src/c.go", base.Add(2*time.Hour), false)
		claim(expired, "src/d.go", base.Add(30*time.Minute), false)
		claim(released, "src/e.go", base.Add(2*time.Hour), true)
		claim(elsewhere, "src/f.go", base.Add(2*time.Hour), false)
		claim(ended, "src/g.go", base.Add(2*time.Hour), false)
		_ = none

		now := base.Add(time.Hour)
		idle, err := st.SessionListIdleClaiming(ctx, "p", now.Add(-30*time.Minute), now, 10)
		must(t, err)
		if len(idle) != 2 || idle[0].SessionID != quieter.ID || idle[1].SessionID != quiet.ID {
			t.Fatalf("idle sessions holding claims: %+v, want %s then %s", idle, quieter.ID, quiet.ID)
		}
		equal(t, "actor", idle[0].Actor, "bob")
		equal(t, "last seen", idle[0].LastSeenAt, base.Add(-time.Minute))
		if !slices.Equal(idle[1].Subjects, []string{"src/a.go", "src/b/"}) {
			t.Errorf("subjects held: %v", idle[1].Subjects)
		}
		idle, err = st.SessionListIdleClaiming(ctx, "p", now.Add(-30*time.Minute), now, 1)
		must(t, err)
		if len(idle) != 1 || idle[0].SessionID != quieter.ID || len(idle[0].Subjects) != 1 {
			t.Errorf("the longest idle within the limit: %+v", idle)
		}
	})

	t.Run("LastToolCalls", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		s := newSession(t, st, sessionOpts{})
		var entries []logbook.Entry
		for i := range 6 {
			entries = append(entries,
				logbook.Entry{SessionID: s.ID, Seq: int64(2*i + 1), At: base, Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: fmt.Sprintf("c%d", i),
					Payload: json.RawMessage(fmt.Sprintf(`{"command":"ls %d"}`, i))},
				logbook.Entry{SessionID: s.ID, Seq: int64(2*i + 2), At: base, Kind: logbook.KindToolResult, ToolCallID: fmt.Sprintf("c%d", i), Text: "ok"})
		}
		insertAll(t, st, entries)
		calls, err := st.EntryLastToolCalls(ctx, s.ID, 3)
		must(t, err)
		if len(calls) != 3 || calls[0].ToolCallID != "c5" || calls[2].ToolCallID != "c3" || string(calls[0].Payload) != `{"command":"ls 5"}` {
			t.Errorf("the last 3 tool calls, newest first: %+v", calls)
		}
		calls, err = st.EntryLastToolCalls(ctx, "none", 3)
		must(t, err)
		equal(t, "tool calls of no session", len(calls), 0)
	})
}
