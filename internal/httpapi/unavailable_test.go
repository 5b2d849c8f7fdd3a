package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/httpapi"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestDatabaseUnavailable: while the database refuses connections, the
// API answers 503 with Retry-After and a detail an operator can act on
// (the engine read its own code as logbook.ErrUnavailable), and serves
// again once the database is back.
func TestDatabaseUnavailable(t *testing.T) {
	ctx := context.Background()
	dbURL := testdb.PostgresURL(t)
	st, err := pgstore.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := service.New(st, service.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := svc.EnsureAdminToken(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	httpapi.New(mux, svc, slog.New(slog.NewTextHandler(io.Discard, nil)), httpapi.Options{})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := &client{t: t, url: srv.URL}
	alice := c.token("demo", "alice")
	c.do("GET", "/v1/sessions?project=demo", alice, nil).expect(t, 200)

	admin, name := testdb.PostgresAdmin(t, dbURL)
	if _, err := admin.Exec(`ALTER DATABASE ` + name + ` ALLOW_CONNECTIONS false`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name); err != nil {
		t.Fatal(err)
	}
	r := c.do("GET", "/v1/sessions?project=demo", alice, nil)
	r.problem(t, 503, "")
	if r.header.Get("Retry-After") == "" {
		t.Error("a 503 without Retry-After")
	}
	if detail, _ := r.body["detail"].(string); !strings.Contains(detail, "cannot be reached") {
		t.Errorf("detail %q does not say the database cannot be reached", detail)
	}

	if _, err := admin.Exec(`ALTER DATABASE ` + name + ` ALLOW_CONNECTIONS true`); err != nil {
		t.Fatal(err)
	}
	c.do("GET", "/v1/sessions?project=demo", alice, nil).expect(t, 200)
}
