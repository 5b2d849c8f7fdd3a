package mcp

import (
	"context"
	"errors"

	"github.com/logbookhq/logbook/internal/logbook"
)

// errInternal is what an agent reads when the service failed for a reason
// of its own (a database error): like the API's 500, it reveals nothing.
var errInternal = errors.New("logbook could not complete this call; the error was logged on the server")

// domainErrors are the errors an agent can act on: they pass to it as
// they are.
var domainErrors = []error{logbook.ErrInvalid, logbook.ErrNotFound, logbook.ErrForbidden, logbook.ErrUnauthorized,
	logbook.ErrEnded, logbook.ErrConflict, logbook.ErrUnavailable, logbook.ErrLimited}

// hideInternal passes on the errors an agent can act on and logs any
// other, answering it with errInternal. It serves the in-process ledger,
// whose other errors are the database's; the HTTP ledger's are the
// server's answers or a failure to reach it, which the agent should read.
func (ts *toolset) hideInternal(ctx context.Context, tool string, err error) error {
	for _, known := range domainErrors {
		if errors.Is(err, known) {
			return err
		}
	}
	ts.log.ErrorContext(ctx, "mcp tool call failed", "tool", tool, "err", err)
	return errInternal
}
