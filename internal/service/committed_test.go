package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestCommittedEvents: Options.Committed hears each event once its
// transaction committed, and never one a refused request would have
// written; on SQLite through group commit, on PostgreSQL without.
func TestCommittedEvents(t *testing.T) { testdb.Each(t, testCommittedEvents) }

func testCommittedEvents(t *testing.T, e testdb.Engine) {
	var mu sync.Mutex
	heard := map[string]int{}
	svc := service.New(e.Open(t), service.Options{Committed: func(eventType string) {
		mu.Lock()
		defer mu.Unlock()
		heard[eventType]++
	}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	alice := service.Caller{Actor: "alice", Project: "p"}
	bob := service.Caller{Actor: "bob", Project: "p"}
	mine, _, err := svc.StartSession(ctx, alice, service.StartParams{Harness: "h", HarnessSessionID: "1"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, _, err := svc.StartSession(ctx, bob, service.StartParams{Harness: "h", HarnessSessionID: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Claim(ctx, alice, service.ClaimParams{SessionID: mine.ID, Subject: "src/api/"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Claim(ctx, bob, service.ClaimParams{SessionID: theirs.ID, Subject: "src/api/"}); err == nil {
		t.Fatal("a second claim on a held subject was granted")
	}
	if _, err := svc.EndSession(ctx, alice, mine.ID, service.EndParams{Outcome: logbook.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{logbook.EventSessionStarted: 2, logbook.EventClaimTaken: 1, logbook.EventSessionEnded: 1, logbook.EventClaimReleased: 1}
	for typ, n := range want {
		if heard[typ] != n {
			t.Errorf("heard %d %s events, want %d (all heard: %v)", heard[typ], typ, n, heard)
		}
	}
}
