package httpapi_test

import (
	"bufio"
	"context"
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
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// newLimitedServer is newServer on SQLite with the service's limits set
// by opts; wrap, when given, wraps the server's handler.
func newLimitedServer(t *testing.T, opts service.Options, wrap ...func(http.Handler) http.Handler) *client {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Logger = quiet
	svc := service.New(testdb.SQLite(t), opts)
	if _, err := svc.EnsureAdminToken(context.Background(), adminToken); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	var h http.Handler = mux
	for _, w := range wrap {
		h = w(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &client{t: t, url: srv.URL}
}

// stepClock is a clock a test moves by hand.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// nested returns a JSON value nesting arrays depth levels deep.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func TestLimitJSONDepth(t *testing.T) {
	c := newLimitedServer(t, service.Options{})
	alice := c.token("demo", "alice")
	id := c.do("POST", "/v1/sessions", alice, `{"project":"demo"}`).expect(t, 201).body["id"].(string)

	// A payload as deep as the limit allows is stored: {"entries":[{"payload": …}]}
	// takes three levels.
	ok := `{"entries":[{"kind":"note","text":"deep","payload":` + nested(httpapi.MaxJSONDepth-3) + `}]}`
	c.do("POST", "/v1/sessions/"+id+"/entries", alice, ok).expect(t, 200)

	// One level more is refused before decoding, naming the limit.
	tooDeep := `{"entries":[{"kind":"note","text":"deeper","payload":` + nested(httpapi.MaxJSONDepth-2) + `}]}`
	r := c.do("POST", "/v1/sessions/"+id+"/entries", alice, tooDeep)
	r.problem(t, 400, "")
	if !strings.Contains(r.body["detail"].(string), strconv.Itoa(httpapi.MaxJSONDepth)) {
		t.Errorf("the problem does not name the limit: %s", r.raw)
	}
	// Far deeper (the kind of body that exhausts a recursive decoder) is
	// refused the same way, on every JSON route.
	c.do("POST", "/v1/sessions", alice, `{"project":"demo","goal":`+nested(100000)+`}`).problem(t, 400, "")

	// Brackets inside strings are text, not nesting.
	text := strings.Repeat("[{", 1000) + `\"` + strings.Repeat("[", 100)
	c.do("POST", "/v1/sessions/"+id+"/entries", alice, `{"entries":[{"kind":"note","text":"`+text+`"}]}`).expect(t, 200)

	// Nothing refused was stored.
	got := c.do("GET", "/v1/sessions/"+id, alice, nil).expect(t, 200)
	if n := got.body["session"].(map[string]any)["entry_count"]; n != float64(2) {
		t.Errorf("entry_count = %v, want 2 (the refused batch must store nothing)", n)
	}
}

func TestLimitRate(t *testing.T) {
	clock := &stepClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	c := newLimitedServer(t, service.Options{RateLimit: 20, RateBurst: 5, RateClock: clock.Now})
	alice, bob := c.token("demo", "alice"), c.token("demo", "bob")

	for i := range 5 {
		if r := c.do("GET", "/v1/sessions", alice, nil); r.status != 200 {
			t.Fatalf("request %d of the burst: %d %s", i+1, r.status, r.raw)
		}
	}
	r := c.do("GET", "/v1/sessions", alice, nil)
	r.problem(t, 429, "")
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || retry < 1 {
		t.Errorf("Retry-After %q, want a whole number of seconds of 1 or more", r.header.Get("Retry-After"))
	}
	if strings.Contains(r.raw, alice) {
		t.Errorf("the 429 body shows the token: %s", r.raw)
	}

	// Another token has its own bucket.
	c.do("GET", "/v1/sessions", bob, nil).expect(t, 200)
	// An unknown token is 401, never 429: it has no bucket to run out of.
	c.do("GET", "/v1/sessions", "not-a-token", nil).problem(t, 401, "")

	// At 20 a second the bucket gives one request back every 50 ms: none
	// after 40 ms, two after 120.
	clock.step(40 * time.Millisecond)
	c.do("GET", "/v1/sessions", alice, nil).problem(t, 429, "")
	clock.step(80 * time.Millisecond)
	c.do("GET", "/v1/sessions", alice, nil).expect(t, 200)
	c.do("GET", "/v1/sessions", alice, nil).expect(t, 200)
	c.do("GET", "/v1/sessions", alice, nil).problem(t, 429, "")
}

func TestLimitRateOff(t *testing.T) {
	c := newLimitedServer(t, service.Options{RateLimit: -1, RateBurst: 1})
	alice := c.token("demo", "alice")
	for range 20 {
		c.do("GET", "/v1/sessions", alice, nil).expect(t, 200)
	}
}

func TestLimitStreams(t *testing.T) {
	// ended tells when an event stream's handler has returned, its place
	// given back.
	ended := make(chan struct{}, 16)
	c := newLimitedServer(t, service.Options{MaxStreams: 2}, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if r.URL.Path == "/v1/events" {
				ended <- struct{}{}
			}
		})
	})
	alice, bob := c.token("demo", "alice"), c.token("demo", "bob")

	// open starts an event stream and waits for its first line, so the
	// server counts it before the next one is tried.
	open := func(token string) (status int, close func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", c.url+"/v1/events?project=demo", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if res.StatusCode == 200 {
			if _, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
		}
		return res.StatusCode, func() { cancel(); res.Body.Close() }
	}

	_, close1 := open(alice)
	_, close2 := open(alice)
	defer close2()
	r := c.do("GET", "/v1/events?project=demo", alice, nil)
	r.problem(t, 429, "")
	if r.header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	<-ended // the refused one
	// Another token has its own allowance.
	status, closeBob := open(bob)
	defer closeBob()
	if status != 200 {
		t.Errorf("bob's first stream: %d", status)
	}

	// Closing a stream gives its place back once the server notices the
	// closed connection (the request's context ends).
	close1()
	<-ended
	status, closeAgain := open(alice)
	defer closeAgain()
	if status != 200 {
		t.Errorf("a stream in the place of a closed one: %d", status)
	}
}

// TestUnavailablePostgres cuts a server off its PostgreSQL database: while
// the database refuses connections every request is a 503 with Retry-After
// (never a 500, never a hang), and the server recovers by itself when the
// database takes connections again.
func TestUnavailablePostgres(t *testing.T) {
	dbURL := testdb.PostgresURL(t)
	st, err := pgstore.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := service.New(st, service.Options{Logger: quiet})
	if _, err := svc.EnsureAdminToken(context.Background(), adminToken); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, quiet, httpapi.Options{})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := &client{t: t, url: srv.URL}
	alice := c.token("demo", "alice")
	id := c.do("POST", "/v1/sessions", alice, `{"project":"demo"}`).expect(t, 201).body["id"].(string)

	// The server's maintenance database to run the cut from.
	admin, name := testdb.PostgresAdmin(t, dbURL)
	exec := func(q string) {
		t.Helper()
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS false")
	t.Cleanup(func() { admin.Exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS true") })
	exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name + "'")

	for _, req := range []struct{ method, path, body string }{
		{"GET", "/v1/sessions/" + id, ""},
		{"POST", "/v1/sessions/" + id + "/entries", `{"entries":[{"kind":"note","text":"while down","key":"k1"}]}`},
		{"GET", "/v1/sessions?project=demo", ""},
	} {
		r := c.do(req.method, req.path, alice, req.body)
		r.problem(t, 503, "")
		if r.header.Get("Retry-After") == "" {
			t.Errorf("%s %s: 503 without Retry-After", req.method, req.path)
		}
		// PostgreSQL's code, read by its engine, names the cause.
		if detail, _ := r.body["detail"].(string); !strings.Contains(detail, "cannot be reached") {
			t.Errorf("%s %s: detail %q does not say the database cannot be reached", req.method, req.path, detail)
		}
	}

	exec("ALTER DATABASE " + name + " ALLOW_CONNECTIONS true")
	r := c.do("POST", "/v1/sessions/"+id+"/entries", alice, `{"entries":[{"kind":"note","text":"back","key":"k1"}]}`).expect(t, 200)
	if r.body["recorded"] != float64(1) {
		t.Errorf("after recovery: %s (the batch refused with 503 must not have been stored)", r.raw)
	}
}
