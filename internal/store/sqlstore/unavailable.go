package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Unreachable is the reason given when the database cannot be reached: a
// lost or refused connection, a server restarting.
const Unreachable = "the database cannot be reached right now; retry shortly (nothing acknowledged was lost)"

// unavailable turns err into a *logbook.UnavailableError when it means the
// database cannot serve this now rather than that the request is wrong:
// first as the engine reads its own codes (d.Unavailable), then as any
// database/sql connection reports a lost connection. Any other error is
// returned as it is.
func (d Dialect) unavailable(err error) error {
	if d.Unavailable != nil {
		if reason, ok := d.Unavailable(err); ok {
			return logbook.Unavailable(reason, err)
		}
	}
	if lostConnection(err) {
		return logbook.Unavailable(Unreachable, err)
	}
	return err
}

// lostConnection reports whether err says the connection to the database
// was lost, refused or timed out, whatever the driver.
func lostConnection(err error) bool {
	var netErr net.Error
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.As(err, &netErr),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, context.DeadlineExceeded):
		return true
	}
	// Drivers do not always wrap the network error they met.
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "conn closed", "unexpected EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
