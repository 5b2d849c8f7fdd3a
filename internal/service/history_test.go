package service_test

import (
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestHistoryTimes: a session recorded after the fact (an import) starts
// at the time it says and ends at the time it says, and its touches keep
// theirs; times after now are now, an end before the start is the start,
// and a session that exists keeps its start. Statistics count it on its
// own day.
func TestHistoryTimes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		b := setup(t, e)
		now := b.clock.Now()
		began := time.Date(2025, 3, 4, 10, 0, 0, 123456000, time.UTC)
		ended := began.Add(90 * time.Minute)

		sess := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "old", StartedAt: began})
		if !sess.StartedAt.Equal(began) || !sess.LastSeenAt.Equal(now) {
			t.Fatalf("started %v, last seen %v; want started %v, seen now (%v) while it is recorded", sess.StartedAt, sess.LastSeenAt, began, now)
		}
		_, err := b.svc.AppendEntries(b.ctx, b.alice, sess.ID, service.Batch{
			Entries: []logbook.Entry{{Kind: logbook.KindPrompt, Text: "fix it", At: began.Add(time.Minute)}},
			Touched: []logbook.Touch{{Kind: logbook.TouchFile, Value: "a.go", FirstAt: began.Add(2 * time.Minute)},
				{Kind: logbook.TouchFile, Value: "b.go", FirstAt: now.Add(time.Hour)}},
		})
		must(t, err)
		again := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "old", StartedAt: began.Add(-time.Hour)})
		if again.ID != sess.ID || !again.StartedAt.Equal(began) {
			t.Errorf("a repeated start moved the start to %v", again.StartedAt)
		}
		end, err := b.svc.EndSession(b.ctx, b.alice, sess.ID, service.EndParams{Outcome: logbook.OutcomeSuccess, EndedAt: ended})
		must(t, err)
		if end.ClosedAt == nil || !end.ClosedAt.Equal(ended) || !end.LastSeenAt.Equal(ended) {
			t.Errorf("ended: closed %v, last seen %v; want %v", end.ClosedAt, end.LastSeenAt, ended)
		}
		page, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{})
		must(t, err)
		if len(page.Sessions) != 1 || page.Sessions[0].DurationSeconds != 5400 {
			t.Errorf("listed: %+v, want the session with a duration of 5400 s", page.Sessions)
		}
		touched := b.get(t, sess.ID).Touched
		firstAt := map[string]time.Time{}
		for _, touch := range touched {
			firstAt[touch.Value] = touch.FirstAt
		}
		if !firstAt["a.go"].Equal(began.Add(2*time.Minute)) || !firstAt["b.go"].Equal(now) {
			t.Errorf("touches first at %v; want a.go at its time, b.go (said to be in the future) now", firstAt)
		}
		rows, err := b.svc.Stats(b.ctx, b.alice, service.StatsParams{By: logbook.ByDay, Since: began.Add(-24 * time.Hour)})
		must(t, err)
		if len(rows) != 1 || rows[0].Key != "2025-03-04" || rows[0].Sessions != 1 || rows[0].DurationSeconds != 5400 {
			t.Errorf("statistics by day: %+v, want one session of 5400 s on 2025-03-04", rows)
		}

		future := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "skewed", StartedAt: now.Add(time.Hour)})
		if !future.StartedAt.Equal(now) {
			t.Errorf("a start said to be in the future is at %v, want now (%v)", future.StartedAt, now)
		}
		backwards := b.start(t, b.alice, service.StartParams{Harness: "claude-code", HarnessSessionID: "backwards", StartedAt: began})
		end, err = b.svc.EndSession(b.ctx, b.alice, backwards.ID, service.EndParams{Outcome: logbook.OutcomeSuccess, EndedAt: began.Add(-time.Hour)})
		must(t, err)
		if end.ClosedAt == nil || !end.ClosedAt.Equal(began) {
			t.Errorf("an end said to be before the start closed at %v, want the start %v", end.ClosedAt, began)
		}
	})
}
