package httpapi

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// readOnlySQLiteError is the error a real write to a read-only SQLite
// database gives.
func readOnlySQLiteError(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ro.db")
	st, err := sqlitestore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`INSERT INTO projects (name, created_at) VALUES ('p', 0)`)
	if err == nil {
		t.Fatal("a write to a read-only SQLite database succeeded")
	}
	return fmt.Errorf("error storing: %w", err)
}

func TestUnavailable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("error reading session: %w", err) }
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"admin shutdown (pg_terminate_backend)", wrap(&pgconn.PgError{Code: "57P01"}), true},
		{"server starting up", wrap(&pgconn.PgError{Code: "57P03"}), true},
		{"connection failure class 08", wrap(&pgconn.PgError{Code: "08006"}), true},
		{"too many connections", wrap(&pgconn.PgError{Code: "53300"}), true},
		{"bad connection", wrap(driver.ErrBadConn), true},
		{"closed connection", wrap(pgconn.ErrConnClosed), true},
		{"network error", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{"connection reset", wrap(syscall.ECONNRESET), true},
		{"deadline", wrap(context.DeadlineExceeded), true},
		{"unwrapped message", errors.New("failed to receive message: unexpected EOF"), true},
		{"read-only SQLite", readOnlySQLiteError(t), true},

		{"unique violation", wrap(&pgconn.PgError{Code: "23505"}), false},
		{"syntax error", wrap(&pgconn.PgError{Code: "42601"}), false},
		{"not found", wrap(logbook.ErrNotFound), false},
		{"a bug", errors.New("index out of range"), false},
		{"closed store (shutdown)", wrap(errors.New("sql: database is closed")), false},
	}
	for _, c := range cases {
		detail, got := unavailable(c.err)
		if got != c.want {
			t.Errorf("%s: unavailable(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
		if got && detail == "" {
			t.Errorf("%s: no detail for the 503", c.name)
		}
	}
}
