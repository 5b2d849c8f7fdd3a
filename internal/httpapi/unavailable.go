package httpapi

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/logbookhq/logbook/internal/service"
)

// retryAfterUnavailable is the Retry-After, in seconds, of a 503 answered
// while the database cannot be reached or cannot take writes.
const retryAfterUnavailable = "2"

// SQLite's primary result codes that mean "the database cannot serve this
// now" rather than "this request is wrong". An extended code carries its
// primary code in its low byte.
const (
	sqliteBusy     = 5
	sqliteReadOnly = 8
	sqliteIOErr    = 10
	sqliteFull     = 13
	sqliteCantOpen = 14
)

// unavailable reports whether err means the database is out of reach or
// cannot take writes for now (a lost or refused connection, a server
// restarting, a full disk, a read-only file), as opposed to a bug or a bad
// request. Such errors are answered 503 with Retry-After: the client should
// retry the same request, and nothing it was told was stored is lost. The
// detail says which case it is, in words an operator can act on.
func unavailable(err error) (detail string, ok bool) {
	const unreachable = "the database cannot be reached right now; retry shortly (nothing acknowledged was lost)"
	if errors.Is(err, service.ErrShuttingDown) {
		return err.Error(), true
	}
	var pgErr *pgconn.PgError
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	var coded interface{ Code() int } // modernc.org/sqlite's *sqlite.Error
	switch {
	case err == nil:
		return "", false
	case errors.As(err, &connectErr):
		// Whatever the server said while connecting (restarting, refusing
		// connections, too many clients), the request did not reach it.
		return unreachable, true
	case errors.As(err, &pgErr):
		// Class 08: connection exception; 57P01-57P03: the server is
		// shutting down, crashed or not yet accepting connections;
		// 53300: too many connections.
		code := pgErr.Code
		if strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03" || code == "53300" {
			return unreachable, true
		}
		return "", false
	case errors.As(err, &coded):
		switch coded.Code() & 0xff {
		case sqliteFull:
			return "the database's disk is full; free space on the server, then retry (nothing acknowledged was lost)", true
		case sqliteReadOnly:
			return "the database file is read-only; make it writable on the server, then retry (nothing acknowledged was lost)", true
		case sqliteIOErr, sqliteCantOpen:
			return "the database file cannot be read or written right now (disk error or full disk); retry shortly", true
		case sqliteBusy:
			return "the database is busy; retry shortly", true
		}
		return "", false
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, pgconn.ErrConnClosed),
		pgconn.Timeout(err), errors.As(err, &netErr),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, context.DeadlineExceeded):
		return unreachable, true
	}
	// Drivers do not always wrap the network error they met.
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "conn closed", "unexpected EOF"} {
		if strings.Contains(msg, s) {
			return unreachable, true
		}
	}
	return "", false
}
