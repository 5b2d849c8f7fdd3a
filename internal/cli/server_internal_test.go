package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestBodyBudget: a large body waits until the budget has room for it and
// counts against it until its handler returns; a small one goes straight
// in even when the budget is full.
func TestBodyBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	budget := semaphore.NewWeighted(bodyBudget)
	var testHolds atomic.Bool // the test holds the budget
	srv := httptest.NewServer(limitBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			t.Errorf("reading the body: %v", err)
		}
		if r.ContentLength >= smallBody {
			if testHolds.Load() {
				t.Error("a large body was let in while the budget was full")
			}
			if budget.TryAcquire(bodyBudget) {
				budget.Release(bodyBudget)
				t.Error("a large body does not count against the budget")
			}
		}
	}), time.Minute, budget))
	defer srv.Close()
	post := func(size int) {
		t.Helper()
		res, err := http.Post(srv.URL, "application/octet-stream", strings.NewReader(strings.Repeat("x", size)))
		if err != nil {
			t.Error(err)
			return
		}
		res.Body.Close()
	}

	if err := budget.Acquire(ctx, bodyBudget); err != nil {
		t.Fatal(err)
	}
	testHolds.Store(true)
	post(smallBody - 1) // goes straight in

	done := make(chan struct{})
	go func() { defer close(done); post(smallBody) }()
	// Wait until the large body waits for room: a request for one byte is
	// then refused though one is free (the semaphore serves its waiters
	// first). A large body let in at once is answered instead.
	budget.Release(1)
	for budget.TryAcquire(1) {
		budget.Release(1)
		select {
		case <-done:
			t.Fatal("a large body was answered while the budget was full")
		case <-time.After(time.Millisecond):
		}
	}
	// The test holds all but one byte; the large body waits for more.
	testHolds.Store(false)
	budget.Release(bodyBudget - 1)
	<-done
	if !budget.TryAcquire(bodyBudget) {
		t.Error("the large body's weight was not given back after its handler returned")
	}
}

// TestBodyWeight: a body counts what it may come to, so that an unknown
// length or a compressed body cannot slip past the budget as small.
func TestBodyWeight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		length   int64
		encoding string
		atLeast  int64
	}{
		{"small", smallBody - 1, "", 0},
		{"large", smallBody, "", smallBody},
		{"unknown length", -1, "", logbook.MaxRequestLen},
		{"compressed", 100, "gzip", bodyBudget}, // inflates past the budget
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader("x"))
		r.ContentLength = tc.length
		if tc.encoding != "" {
			r.Header.Set("Content-Encoding", tc.encoding)
		}
		got := bodyWeight(r)
		if got < tc.atLeast || got > bodyBudget || (tc.atLeast == 0 && got != 0) {
			t.Errorf("%s: weight %d, want 0 for a small body, else from %d to the budget %d", tc.name, got, tc.atLeast, bodyBudget)
		}
	}
}
