package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// sseEvent is one event as a follower reads it.
type sseEvent struct {
	ID   int64
	Type string
	Data json.RawMessage
}

// followLimit bounds how long follow waits for its events: it ends a test
// whose events never come, and is never reached by one that passes.
const followLimit = time.Minute

// follow reads SSE events from url until n arrive (or followLimit
// passes). It sends lastID as Last-Event-ID when it is not zero, and closes
// connected, when given, once the stream is open: the server has then
// fixed where it resumes from, so whatever is written afterwards reaches
// this follower.
func follow(t *testing.T, url, token string, lastID int64, n int, connected chan<- struct{}) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), followLimit)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(lastID, 10))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("following %s: %v", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("following: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if connected != nil {
		close(connected)
	}
	var got []sseEvent
	var cur sseEvent
	lines := bufio.NewScanner(res.Body)
	for len(got) < n && lines.Scan() {
		line := lines.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.ID, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			cur.Type = line[7:]
		case strings.HasPrefix(line, "data: "):
			var ev logbook.Event
			if err := json.Unmarshal([]byte(line[6:]), &ev); err != nil || ev.ID != cur.ID {
				t.Errorf("event data %q does not match id %d: %v", line, cur.ID, err)
			}
			cur.Data = ev.Data
		case line == "" && cur.ID != 0:
			got = append(got, cur)
			cur = sseEvent{}
		}
	}
	return got
}

// TestEventStreamResumes disconnects a follower mid-stream and resumes
// with Last-Event-ID: every event arrives once, in order.
func TestEventStreamResumes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		s := c.do("POST", "/v1/sessions", alice, map[string]string{"project": "demo"}).expect(t, 201)
		id := s.body["id"].(string)

		// Written while a follower listens live: claims, as each makes an
		// event (appends are announced together, see logbook.AppendedEvery).
		var wg sync.WaitGroup
		wg.Add(1)
		connected := make(chan struct{})
		go func() {
			defer wg.Done()
			<-connected
			for i := range 10 {
				c.do("POST", "/v1/claims", alice, map[string]any{"session_id": id, "subject": "src/f" + strconv.Itoa(i) + ".go"}).expect(t, 201)
			}
		}()
		first := follow(t, c.url+"/v1/events?project=demo", alice, 0, 5, connected)
		wg.Wait()
		if len(first) != 5 {
			t.Fatalf("first connection got %d events", len(first))
		}
		// More happens while the follower is away.
		c.do("POST", "/v1/sessions/"+id+"/end", alice, map[string]string{"outcome": "success"}).expect(t, 200)
		// started, progressed, 10 claims taken, 10 released, ended: 23, of
		// which the first connection read 5.
		rest := follow(t, c.url+"/v1/events?project=demo", alice, first[len(first)-1].ID, 23-len(first), nil)
		all := append(first, rest...)
		if len(all) != 23 {
			t.Fatalf("got %d events in all, want 23: %v", len(all), all)
		}
		for i := 1; i < len(all); i++ {
			if all[i].ID <= all[i-1].ID {
				t.Errorf("event %d repeats or goes back: %v", i, all)
			}
		}
		if all[0].Type != logbook.EventSessionStarted || all[22].Type != logbook.EventSessionEnded {
			t.Errorf("first and last: %v, %v", all[0], all[22])
		}
		resumed := follow(t, c.url+"/v1/events?project=demo&after="+strconv.FormatInt(all[20].ID, 10), alice, 0, 2, nil)
		if len(resumed) != 2 || resumed[0].ID != all[21].ID {
			t.Errorf("?after= resume: %v", resumed)
		}
		c.do("GET", "/v1/events?project=other", alice, nil).problem(t, 403, "")
		c.do("GET", "/v1/events?project=demo&after=x", alice, nil).problem(t, 400, "after")
	})
}

// replica is one logbook serve process on a shared PostgreSQL database.
type replica struct {
	*client
	svc *service.Service
}

func startReplica(t *testing.T, url string) replica {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st, err := pgstore.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, service.Options{Logger: quiet})
	if _, err := svc.EnsureAdminToken(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	go svc.Listen(ctx)
	run(t, svc)
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return replica{client: &client{t: t, url: srv.URL}, svc: svc}
}

// TestTwoReplicas runs two servers on one PostgreSQL database: idempotent
// start, claims and events behave as one server.
func TestTwoReplicas(t *testing.T) {
	url := testdb.PostgresURL(t)
	a, b := startReplica(t, url), startReplica(t, url)
	token := a.token("demo", "alice")

	// Events written through A reach a follower of B.
	followed := make(chan []sseEvent)
	connected := make(chan struct{})
	go func() { followed <- follow(t, b.url+"/v1/events?project=demo", token, 0, 1, connected) }()
	<-connected
	start := time.Now()

	// The same harness session started through both at once: one session.
	var wg sync.WaitGroup
	ids := make(chan string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := []replica{a, b}[i%2]
			res := r.do("POST", "/v1/sessions", token, map[string]string{"project": "demo", "harness": "h", "harness_session_id": "one"})
			if res.status != 200 && res.status != 201 {
				t.Errorf("start: %d %s", res.status, res.raw)
				return
			}
			ids <- res.body["id"].(string)
		}()
	}
	wg.Wait()
	close(ids)
	distinct := map[string]bool{}
	for id := range ids {
		distinct[id] = true
	}
	if len(distinct) != 1 {
		t.Fatalf("20 starts across two replicas made %d sessions", len(distinct))
	}
	events := <-followed
	if len(events) != 1 || events[0].Type != logbook.EventSessionStarted {
		t.Fatalf("the follower of replica B got %v", events)
	}
	t.Logf("an event written through one replica reached the other's follower in %v", time.Since(start))

	// 20 sessions claim one subject through both replicas: one wins.
	var sessions []string
	for i := range 20 {
		r := []replica{a, b}[i%2]
		sessions = append(sessions, r.do("POST", "/v1/sessions", token, map[string]string{"project": "demo"}).expect(t, 201).body["id"].(string))
	}
	statuses := make(chan int, 20)
	for i, id := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := []replica{a, b}[i%2]
			statuses <- r.do("POST", "/v1/claims", token, map[string]any{"session_id": id, "subject": "infra/"}).status
		}()
	}
	wg.Wait()
	close(statuses)
	won := 0
	for s := range statuses {
		switch s {
		case 201:
			won++
		case 409:
		default:
			t.Errorf("claim answered %d", s)
		}
	}
	if won != 1 {
		t.Errorf("%d claims won across two replicas, want 1", won)
	}

	// 50 batches into one session through both replicas at once: numbered
	// 1..n without a gap or a repeat; then both end it, one wins.
	shared := a.do("POST", "/v1/sessions", token, map[string]string{"project": "demo"}).expect(t, 201).body["id"].(string)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := []replica{a, b}[i%2]
			r.do("POST", "/v1/sessions/"+shared+"/entries", token, map[string]any{"entries": []map[string]any{
				{"kind": "note", "text": "a", "key": "k" + strconv.Itoa(i)}, {"kind": "note", "text": "b"}}}).expect(t, 200)
		}()
	}
	wg.Wait()
	view := b.do("GET", "/v1/sessions/"+shared, token, nil).expect(t, 200)
	entries := view.body["entries"].([]any)
	if len(entries) != 100 || view.body["session"].(map[string]any)["entry_count"] != float64(100) {
		t.Fatalf("100 entries through two replicas: got %d", len(entries))
	}
	for i, e := range entries {
		if seq := e.(map[string]any)["seq"]; seq != float64(i+1) {
			t.Fatalf("entry %d has seq %v: a gap or a repeat", i, seq)
		}
	}
	ends := make(chan int, 2)
	for _, r := range []replica{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ends <- r.do("POST", "/v1/sessions/"+shared+"/end", token, map[string]string{"outcome": "success"}).status
		}()
	}
	wg.Wait()
	close(ends)
	for status := range ends {
		if status != 200 {
			t.Errorf("ending through both replicas: %d", status)
		}
	}
	ended := a.do("GET", "/v1/sessions/"+shared, token, nil).expect(t, 200).body["session"].(map[string]any)
	if ended["state"] != "ended" || ended["closed_at"] == nil {
		t.Errorf("after two ends: %v", ended)
	}

	// Only one replica sweeps at a time.
	results := make(chan service.SweepResult, 2)
	for _, r := range []replica{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.svc.Sweep(context.Background(), 0)
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("sweep: %v", err)
			}
			results <- res
		}()
	}
	wg.Wait()
	close(results)
	swept := 0
	for r := range results {
		if r.Swept {
			swept++
		}
	}
	if swept < 1 {
		t.Errorf("no replica swept")
	}
}
