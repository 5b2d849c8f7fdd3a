package sqlstore

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestUnavailable: a lost, refused or timed-out connection is unavailable
// on every engine, an engine's own codes as its dialect reads them; other
// errors pass through as they are.
func TestUnavailable(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("error reading session: %w", err) }
	engineCode := errors.New("engine code 42")
	d := Dialect{Unavailable: func(err error) (string, bool) { return "the engine says so", errors.Is(err, engineCode) }}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"bad connection", wrap(driver.ErrBadConn), true},
		{"network error", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{"connection reset", wrap(syscall.ECONNRESET), true},
		{"deadline", wrap(context.DeadlineExceeded), true},
		{"unwrapped message", errors.New("failed to receive message: unexpected EOF"), true},
		{"the engine's own code", wrap(engineCode), true},

		{"not found", wrap(logbook.ErrNotFound), false},
		{"a bug", errors.New("index out of range"), false},
		{"closed store (shutdown)", wrap(errors.New("sql: database is closed")), false},
	}
	for _, c := range cases {
		got := d.unavailable(c.err)
		if errors.Is(got, logbook.ErrUnavailable) != c.want {
			t.Errorf("%s: unavailable(%v) = %v, want ErrUnavailable: %v", c.name, c.err, got, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: %v no longer wraps %v", c.name, got, c.err)
		}
	}
}
