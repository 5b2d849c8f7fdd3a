package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

func TestCoordination(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("ClaimConflicts", func(t *testing.T) { t.Parallel(); testClaimConflicts(t, setup(t, e)) })
		t.Run("ClaimRace", func(t *testing.T) { t.Parallel(); testClaimRace(t, setup(t, e)) })
		t.Run("ClaimLife", func(t *testing.T) { t.Parallel(); testClaimLife(t, setup(t, e)) })
		t.Run("TouchesAndLinks", func(t *testing.T) { t.Parallel(); testTouchesAndLinks(t, setup(t, e)) })
		t.Run("Events", func(t *testing.T) { t.Parallel(); testEvents(t, setup(t, e)) })
		t.Run("EventIDsNeverGoBack", func(t *testing.T) { t.Parallel(); testEventIDsNeverGoBack(t, setup(t, e)) })
		t.Run("AppendedAnnounced", func(t *testing.T) { t.Parallel(); testAppendedAnnounced(t, e) })
	})
}

func (b *bundle) claim(sessionID, subject string) (logbook.Claim, error) {
	c, _, err := b.svc.Claim(b.ctx, b.alice, service.ClaimParams{SessionID: sessionID, Subject: subject})
	return c, err
}

func testClaimConflicts(t *testing.T, b *bundle) {
	holder := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Title: str("refactor api")}})
	other := b.start(t, b.alice, service.StartParams{})
	_, err := b.claim(holder.ID, "./src/api/../api/")
	must(t, err)
	tests := []struct {
		subject  string
		conflict bool
	}{
		{"src/api/x.go", true},     // inside the held prefix
		{"src/api/", true},         // the same prefix
		{"src/", true},             // a prefix of the held prefix
		{"src/apiary/y.go", false}, // a sibling that only shares letters
		{"src/web/z.go", false},
		{"issue:12", false},
	}
	for _, tc := range tests {
		_, err := b.claim(other.ID, tc.subject)
		var held *logbook.ClaimConflictError
		switch {
		case tc.conflict && !errors.As(err, &held):
			t.Errorf("claim on %s: err = %v, want a conflict", tc.subject, err)
		case tc.conflict && (held.Holder.SessionID != holder.ID || held.Holder.Actor != "alice" || held.Holder.Title != "refactor api" || held.Holder.ExpiresAt.IsZero()):
			t.Errorf("claim on %s: the conflict names %+v, want the holder's session, actor, title and expiry", tc.subject, held.Holder)
		case !tc.conflict && err != nil:
			t.Errorf("claim on %s: %v, want it granted", tc.subject, err)
		}
	}
	// An exact file claim conflicts with a later prefix claim on its folder too.
	_, err = b.claim(holder.ID, "docs/readme.md")
	must(t, err)
	if _, err := b.claim(other.ID, "docs/"); !errors.Is(err, logbook.ErrConflict) {
		t.Errorf("claim on docs/ while docs/readme.md is held: %v", err)
	}
	if _, err := b.claim(other.ID, "issue:12"); err != nil {
		t.Errorf("the same session claiming issue:12 again: %v", err)
	}
	if _, err := b.claim(holder.ID, "issue:12"); !errors.Is(err, logbook.ErrConflict) {
		t.Errorf("issue:12 held by another: %v", err)
	}
	who, err := b.svc.Claims(b.ctx, b.alice, service.ClaimsParams{Subject: "src/api/handlers/x.go"})
	must(t, err)
	if len(who) != 1 || who[0].Subject != "src/api/" {
		t.Errorf("who holds src/api/handlers/x.go: %+v", who)
	}
	for _, bad := range []string{"", "  ", "./"} {
		if _, err := b.claim(other.ID, bad); !errors.Is(err, logbook.ErrInvalid) {
			t.Errorf("claim on %q: %v, want ErrInvalid", bad, err)
		}
	}
	if _, _, err := b.svc.Claim(b.ctx, b.alice, service.ClaimParams{SessionID: other.ID, Subject: "x", TTLMinutes: 1441}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("ttl 1441: %v", err)
	}
	if _, _, err := b.svc.Claim(b.ctx, b.bob, service.ClaimParams{SessionID: other.ID, Subject: "y"}); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("bob claiming for alice's session: %v", err)
	}
}

// testClaimRace: 20 sessions claim one subject at the same instant; exactly one wins.
func testClaimRace(t *testing.T, b *bundle) {
	const n = 20
	var sessions []string
	for range n {
		sessions = append(sessions, b.start(t, b.alice, service.StartParams{}).ID)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for _, id := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.claim(id, "deploy/prod/")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, logbook.ErrConflict):
				lost++
			default:
				t.Errorf("claim: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || lost != n-1 {
		t.Errorf("%d won and %d lost, want 1 and %d", won, lost, n-1)
	}
	// The losers' requests left nothing behind: each claim attempt was the
	// session's first heartbeat (which emits session.progressed), but only
	// the winner's survived. On SQLite this runs through group commit,
	// where the losers shared a transaction with the winner.
	events, err := b.svc.Events(b.ctx, b.alice, "p", 0, 500)
	must(t, err)
	counts := map[string]int{}
	for _, ev := range events {
		counts[ev.Type]++
	}
	if counts[logbook.EventClaimTaken] != 1 || counts[logbook.EventSessionProgressed] != 1 || counts[logbook.EventSessionStarted] != n {
		t.Errorf("events after the race: %v", counts)
	}
}

func testClaimLife(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	c, created, err := b.svc.Claim(b.ctx, b.alice, service.ClaimParams{SessionID: s.ID, Subject: "a.go", TTLMinutes: 10})
	must(t, err)
	if !created || !c.ExpiresAt.Equal(c.CreatedAt.Add(10*time.Minute)) {
		t.Fatalf("claim: created %v, %+v", created, c)
	}
	// A heartbeat renews by the claim's own TTL, never shortening it.
	b.clock.Add(5 * time.Minute)
	_, err = b.svc.UpdateSession(b.ctx, b.alice, s.ID, logbook.SessionFields{})
	must(t, err)
	held, _ := b.svc.Claims(b.ctx, b.alice, service.ClaimsParams{SessionID: s.ID})
	if len(held) != 1 || !held[0].ExpiresAt.Equal(c.CreatedAt.Add(15*time.Minute)) {
		t.Fatalf("after a heartbeat 5 minutes in: %+v, want expiry at +15m", held)
	}
	// Claiming again renews; a shorter TTL does not shorten it.
	again, created, err := b.svc.Claim(b.ctx, b.alice, service.ClaimParams{SessionID: s.ID, Subject: "a.go", TTLMinutes: 1})
	must(t, err)
	if created || again.ID != c.ID || !again.ExpiresAt.Equal(held[0].ExpiresAt) {
		t.Errorf("claiming again: created %v, %+v", created, again)
	}
	// Another session takes it once the claim expires and the sweeper runs.
	other := b.start(t, b.alice, service.StartParams{})
	b.clock.Add(20 * time.Minute)
	swept, err := b.svc.Sweep(b.ctx, 0)
	must(t, err)
	if swept.ClaimsExpired != 1 {
		t.Errorf("the sweeper expired %d claims, want 1", swept.ClaimsExpired)
	}
	taken, err := b.claim(other.ID, "a.go")
	must(t, err)
	// Release by its owner; ending a session releases what it holds.
	if _, err := b.svc.Release(b.ctx, b.bob, taken.ID); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("bob releasing alice's claim: %v", err)
	}
	_, err = b.svc.Release(b.ctx, b.alice, taken.ID)
	must(t, err)
	_, err = b.claim(other.ID, "b.go")
	must(t, err)
	_, err = b.svc.EndSession(b.ctx, b.alice, other.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	if left, _ := b.svc.Claims(b.ctx, b.alice, service.ClaimsParams{}); len(left) != 0 {
		t.Errorf("claims left after release and end: %+v", left)
	}
	if _, err := b.svc.Release(b.ctx, b.alice, "nope"); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("releasing an unknown claim: %v", err)
	}
}

func testTouchesAndLinks(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Title: str("Fix #12 and #13"), Pull: str("7")}})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{
		Entries: []logbook.Entry{{Kind: logbook.KindPrompt, Text: "also look at #40"}},
		Touched: []logbook.Touch{{Kind: "file", Value: "./src/api/x.go"}, {Value: "src/api/x.go"}, {Kind: "command", Value: "go test"}},
	})
	must(t, err)
	v := b.get(t, s.ID)
	touched := map[string]int64{}
	for _, tc := range v.Touched {
		touched[tc.Kind+" "+tc.Value] = tc.Count
	}
	if len(touched) != 2 || touched["file src/api/x.go"] != 2 || touched["command go test"] != 1 {
		t.Errorf("touched: %+v, want src/api/x.go twice (normalized) and one command", v.Touched)
	}
	got := map[string]bool{}
	for _, l := range v.Links {
		got[l.Kind+":"+l.Ref+":"+l.Via] = true
	}
	for _, want := range []string{"issue:12:named", "issue:13:named", "issue:40:named", "pull:7:attached"} {
		if !got[want] {
			t.Errorf("links %v lack %s", v.Links, want)
		}
	}
	// A heartbeat that leaves the linked fields alone keeps every link;
	// one that changes the pull replaces the link it attached.
	_, err = b.svc.UpdateSession(b.ctx, b.alice, s.ID, logbook.SessionFields{HeadCommit: str("abc123")})
	must(t, err)
	_, err = b.svc.UpdateSession(b.ctx, b.alice, s.ID, logbook.SessionFields{Pull: str("8")})
	must(t, err)
	got = map[string]bool{}
	for _, l := range b.get(t, s.ID).Links {
		got[l.Kind+":"+l.Ref+":"+l.Via] = true
	}
	if len(got) != 4 || !got["pull:8:attached"] || !got["issue:40:named"] || !got["issue:12:named"] || !got["issue:13:named"] {
		t.Errorf("links after two heartbeats: %v, want issues 12, 13 and 40 named and pull 8 attached", got)
	}
	other := b.start(t, b.alice, service.StartParams{})
	_, err = b.svc.AppendEntries(b.ctx, b.alice, other.ID, service.Batch{Touched: []logbook.Touch{{Value: "src/api/x.go"}, {Value: "README.md"}}})
	must(t, err)
	top, err := b.svc.BusiestFiles(b.ctx, b.alice, "", time.Time{}, 5)
	must(t, err)
	if len(top) != 2 || top[0].Value != "src/api/x.go" || top[0].Count != 3 || top[1].Value != "README.md" {
		t.Errorf("busiest files: %+v", top)
	}
	if _, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Touched: []logbook.Touch{{Kind: "socket", Value: "x"}}}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("an unknown touch kind: %v", err)
	}
}

func testEvents(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote}, {Kind: logbook.KindNote}}})
	must(t, err)
	c, err := b.claim(s.ID, "x/")
	must(t, err)
	_, err = b.svc.Release(b.ctx, b.alice, c.ID)
	must(t, err)
	_, err = b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	// A failed write emits nothing.
	_, _ = b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote}}})

	events, err := b.svc.Events(b.ctx, b.alice, "p", 0, 100)
	must(t, err)
	var types []string
	for i, ev := range events {
		types = append(types, ev.Type)
		if i > 0 && ev.ID <= events[i-1].ID {
			t.Errorf("event ids do not increase: %d after %d", ev.ID, events[i-1].ID)
		}
	}
	want := "[session.started session.progressed session.appended claim.taken claim.released session.ended]"
	if fmt.Sprint(types) != want {
		t.Errorf("events %v, want %s", types, want)
	}
	after, err := b.svc.Events(b.ctx, b.alice, "p", events[2].ID, 100)
	must(t, err)
	if len(after) != 3 || after[0].ID != events[3].ID {
		t.Errorf("events after %d: %d events", events[2].ID, len(after))
	}
	if _, err := b.svc.Events(b.ctx, service.Caller{Actor: "x", Project: "other"}, "p", 0, 10); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("events of another project: %v", err)
	}
	b.clock.Add(8 * 24 * time.Hour)
	swept, err := b.svc.Sweep(b.ctx, 7*24*time.Hour)
	must(t, err)
	if swept.EventsPruned != int64(len(events)) {
		t.Errorf("pruned %d events, want %d", swept.EventsPruned, len(events))
	}
}

// testEventIDsNeverGoBack: deleting the newest events (with their session)
// does not let a later event take an id a follower has already seen.
func testEventIDsNeverGoBack(t *testing.T, b *bundle) {
	s := b.start(t, b.alice, service.StartParams{})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, s.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote}}})
	must(t, err)
	seen, err := b.svc.LatestEventID(b.ctx, b.alice, "p")
	must(t, err)
	if seen == 0 {
		t.Fatal("no events")
	}
	_, err = b.svc.DeleteSession(b.ctx, b.alice, s.ID, false)
	must(t, err)
	next := b.start(t, b.alice, service.StartParams{})
	events, err := b.svc.Events(b.ctx, b.alice, "p", seen, 10)
	must(t, err)
	if len(events) != 1 || events[0].SessionID != next.ID || events[0].ID <= seen {
		t.Errorf("after deleting the newest events, the next one: %+v (the follower had seen %d)", events, seen)
	}
}

// testAppendedAnnounced: appends are announced by session.appended events
// that each carry how many entries and the last seq, at most one per
// logbook.AppendedEvery per session, and no entry goes unannounced: a
// quiet session's append is announced at once, the rest by Run within the
// interval, at the session's end, or, after a crash, by the next Run or
// the timeout sweep.
func testAppendedAnnounced(t *testing.T, e testdb.Engine) {
	b := setup(t, e)
	note := func(svc *service.Service, id string) {
		t.Helper()
		_, err := svc.AppendEntries(b.ctx, b.alice, id, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: "x"}}})
		must(t, err)
	}
	// announced lists a session's appended and ended events as
	// "count/last_seq" and "ended".
	announced := func(svc *service.Service, id string) string {
		t.Helper()
		events, err := svc.Events(b.ctx, b.alice, "p", 0, 500)
		must(t, err)
		var got []string
		for _, ev := range events {
			var d struct {
				Count   int64 `json:"count"`
				LastSeq int64 `json:"last_seq"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			switch {
			case ev.SessionID != id:
			case ev.Type == logbook.EventSessionAppended:
				got = append(got, fmt.Sprintf("%d/%d", d.Count, d.LastSeq))
			case ev.Type == logbook.EventSessionEnded:
				got = append(got, "ended")
			}
		}
		return strings.Join(got, " ")
	}
	waitFor := func(svc *service.Service, id, want string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if announced(svc, id) == want {
				return
			}
		}
		t.Fatalf("session %s: announced %q, want %q", id, announced(svc, id), want)
	}

	s := b.start(t, b.alice, service.StartParams{})
	note(b.svc, s.ID)
	equal(t, "a quiet session's append, at once", announced(b.svc, s.ID), "1/1")
	note(b.svc, s.ID)
	note(b.svc, s.ID) // the clock stands still: within the interval
	waitFor(b.svc, s.ID, "1/1 2/3")
	b.clock.Add(logbook.AppendedEvery)
	note(b.svc, s.ID)
	equal(t, "after the interval, at once", announced(b.svc, s.ID), "1/1 2/3 1/4")
	note(b.svc, s.ID)
	_, err := b.svc.EndSession(b.ctx, b.alice, s.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	equal(t, "the last entry before the end", announced(b.svc, s.ID), "1/1 2/3 1/4 1/5 ended")

	// A server that crashed before announcing: its entries are in the
	// sessions' rows, and the next server announces them.
	st := e.Open(t)
	crashed := service.New(st, service.Options{NowFunc: b.clock.Now}) // never Run
	revived, _, err := crashed.StartSession(b.ctx, b.alice, service.StartParams{})
	must(t, err)
	timedOut, _, err := crashed.StartSession(b.ctx, b.alice, service.StartParams{})
	must(t, err)
	for _, id := range []string{revived.ID, revived.ID, timedOut.ID, timedOut.ID} {
		note(crashed, id)
	}
	equal(t, "without Run, within the interval", announced(crashed, revived.ID), "1/1")
	b.clock.Add(3 * time.Hour) // past the session timeout
	swept, err := crashed.Sweep(b.ctx, 0)
	must(t, err)
	equal(t, "timed out", swept.TimedOut, 2)
	equal(t, "timed out: the last entry before the end", announced(crashed, timedOut.ID), "1/1 1/2 ended")
	// (the timeout sweep announces every session it ends, revived too)
	equal(t, "revived", announced(crashed, revived.ID), "1/1 1/2 ended")
	note(crashed, revived.ID) // a write revives a timed-out session
	note(crashed, revived.ID)
	equal(t, "revived, within the interval", announced(crashed, revived.ID), "1/1 1/2 ended")
	next := service.New(st, service.Options{NowFunc: b.clock.Now})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { next.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitFor(next, revived.ID, "1/1 1/2 ended 2/4")
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}
