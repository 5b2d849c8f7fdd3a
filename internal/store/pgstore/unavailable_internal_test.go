package pgstore

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestUnavailableCodes: PostgreSQL's codes for a server that cannot serve
// now are unavailable; codes that say the request is wrong are not.
func TestUnavailableCodes(t *testing.T) {
	cases := []struct {
		code string
		want bool
	}{
		{"57P01", true},  // admin shutdown (pg_terminate_backend)
		{"57P02", true},  // crash shutdown
		{"57P03", true},  // starting up
		{"08006", true},  // connection failure
		{"08001", true},  // cannot connect
		{"53300", true},  // too many connections
		{"40001", true},  // serialization failure
		{"40P01", true},  // deadlock
		{"23505", false}, // unique violation
		{"42601", false}, // syntax error
		{"22021", false}, // a NUL byte in text
	}
	for _, c := range cases {
		err := fmt.Errorf("error reading session: %w", &pgconn.PgError{Code: c.code})
		reason, got := unavailable(err)
		if got != c.want {
			t.Errorf("code %s: unavailable = %v, want %v", c.code, got, c.want)
		}
		if got && reason == "" {
			t.Errorf("code %s: no reason", c.code)
		}
	}
	if _, got := unavailable(fmt.Errorf("reading: %w", pgconn.ErrConnClosed)); !got {
		t.Error("a closed connection is not unavailable")
	}
}
