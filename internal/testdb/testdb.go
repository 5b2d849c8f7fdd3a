// Package testdb gives tests a fresh, migrated store on each engine.
//
// SQLite runs everywhere (a file in a temporary folder). PostgreSQL runs
// against LOGBOOK_TEST_POSTGRES (default: the local server as user
// postgres), in a new database with a unique name that is dropped after
// the test. When no PostgreSQL answers, its tests skip with a loud
// message, unless CI=true or LOGBOOK_REQUIRE_POSTGRES=1, when they fail.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for creating test databases

	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// DefaultPostgres is the server tests use when LOGBOOK_TEST_POSTGRES is unset.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Engine opens fresh stores of one engine.
type Engine struct {
	Name string
	// Open returns a fresh, migrated store, closed (and for PostgreSQL
	// dropped) when the test ends.
	Open func(t testing.TB) store.Store
	// URL returns a database URL or path for a fresh database without
	// opening it, for tests that run a server process on it.
	URL func(t testing.TB) string
}

// Engines lists both engines.
func Engines() []Engine {
	return []Engine{
		{Name: "sqlite", Open: SQLite, URL: SQLitePath},
		{Name: "postgres", Open: Postgres, URL: PostgresURL},
	}
}

// Each runs fn as a subtest on each engine.
func Each(t *testing.T, fn func(t *testing.T, e Engine)) {
	for _, e := range Engines() {
		t.Run(e.Name, func(t *testing.T) { fn(t, e) })
	}
}

// SQLitePath returns the path of a new SQLite file in a temporary folder.
func SQLitePath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "logbook.db")
}

// SQLite opens a fresh SQLite store.
func SQLite(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), SQLitePath(t))
	if err != nil {
		t.Fatalf("opening SQLite: %v", err)
	}
	if _, benchmark := t.(*testing.B); !benchmark {
		st.CheckSessionCache() // tests hold every session row found in memory to the file's
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Postgres opens a fresh PostgreSQL store in a new database.
func Postgres(t testing.TB) store.Store {
	t.Helper()
	st, err := pgstore.Open(context.Background(), PostgresURL(t))
	if err != nil {
		t.Fatalf("opening PostgreSQL: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// PostgresURL creates a database with a unique name and returns its URL;
// the database is dropped when the test ends (after the test's own
// cleanups, which close its connections).
func PostgresURL(t testing.TB) string {
	t.Helper()
	server := os.Getenv("LOGBOOK_TEST_POSTGRES")
	if server == "" {
		server = DefaultPostgres
	}
	admin, err := sql.Open("pgx", server)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = admin.PingContext(ctx)
		cancel()
	}
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("LOGBOOK_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PostgreSQL is required here (CI) but does not answer at %s: %v", server, err)
		}
		t.Skipf("SKIPPING PostgreSQL test: no server answers at %s (%v); set LOGBOOK_TEST_POSTGRES", server, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "logbook_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("dropping test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("LOGBOOK_TEST_POSTGRES is not a URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// PostgresAdmin opens the maintenance database of the server that holds the
// test database at dbURL (from PostgresURL), for tests that act on that
// database from outside, such as cutting its connections. It returns the
// connection, closed when the test ends, and the test database's name.
func PostgresAdmin(t testing.TB, dbURL string) (*sql.DB, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("not a database URL: %v", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin, name
}
