package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/testdb"
	"github.com/logbookhq/logbook/internal/web"
)

// TestRevokedTokenStreamsEnd: a token revoked by another process
// (logbook token revoke, on the same database) loses its open event
// streams, on the API (/v1/events) and in the web UI (/ui/events), as its
// requests stop working: within the auth cache's lifetime. Streams of
// other tokens go on.
func TestRevokedTokenStreamsEnd(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		ctx := context.Background()
		url := e.URL(t)
		open := func() store.Store {
			t.Helper()
			var st store.Store
			var err error
			if e.Name == "sqlite" {
				st, err = sqlitestore.Open(ctx, url)
			} else {
				st, err = pgstore.Open(ctx, url)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		svc := service.New(open(), service.Options{Logger: quiet, AuthCacheTTL: 200 * time.Millisecond})
		if _, err := svc.EnsureAdminToken(ctx, adminToken); err != nil {
			t.Fatal(err)
		}
		run(t, svc)
		mux := http.NewServeMux()
		httpapi.New(mux, svc, quiet, httpapi.Options{})
		web.New(mux, svc, quiet, web.Options{})
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		c := &client{t: t, url: srv.URL}
		bob, carol := c.token("demo", "bob"), c.token("demo", "carol")

		// stream opens an event stream and reads its first line; lines
		// delivers the rest, and is closed when the stream ends.
		stream := func(path string, auth func(*http.Request)) <-chan string {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard against a hang only
			t.Cleanup(cancel)
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
			auth(req)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { res.Body.Close() })
			if res.StatusCode != 200 {
				t.Fatalf("%s: %d", path, res.StatusCode)
			}
			scanner := bufio.NewScanner(res.Body)
			if !scanner.Scan() || !strings.HasPrefix(scanner.Text(), ": logbook events") {
				t.Fatalf("%s: first line %q", path, scanner.Text())
			}
			lines := make(chan string, 100)
			go func() {
				defer close(lines)
				for scanner.Scan() {
					lines <- scanner.Text()
				}
			}()
			return lines
		}
		bearer := func(token string) func(*http.Request) {
			return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
		}
		cookie := func(token string) func(*http.Request) {
			return func(r *http.Request) { r.AddCookie(&http.Cookie{Name: "logbook_token", Value: token}) }
		}
		bobAPI := stream("/v1/events?project=demo&after=latest", bearer(bob))
		bobUI := stream("/ui/events?project=demo", cookie(bob))
		carolAPI := stream("/v1/events?project=demo&after=latest", bearer(carol))

		// logbook token revoke: another process on the same database.
		cli := service.New(open(), service.Options{Logger: quiet})
		if _, err := cli.RevokeToken(ctx, service.Caller{Actor: "admin", Admin: true}, bob); err != nil {
			t.Fatal(err)
		}
		for name, lines := range map[string]<-chan string{"/v1/events": bobAPI, "/ui/events": bobUI} {
			var last string
			for line := range lines {
				if line != "" {
					last = line
				}
			}
			if last != ": the token was revoked; the stream ends" {
				t.Errorf("bob's %s stream ended with %q, want the revocation", name, last)
			}
		}
		c.do("GET", "/v1/sessions?project=demo", bob, nil).problem(t, 401, "")

		// Carol's stream goes on: it carries what happens next.
		started := c.do("POST", "/v1/sessions", carol, map[string]string{"project": "demo", "harness": "h"}).expect(t, 201)
		for line := range carolAPI {
			if strings.HasPrefix(line, "data: ") && strings.Contains(line, started.body["id"].(string)) {
				return
			}
		}
		t.Errorf("carol's stream ended: it should go on")
	})
}
