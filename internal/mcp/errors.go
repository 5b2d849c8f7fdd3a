package mcp

import (
	"errors"
	"strconv"
	"strings"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Messages an agent reads for errors that have one fix whichever Ledger
// answered.
const (
	msgEnded  = "this session has ended: start a new one with start_session"
	claimHint = "; work on something else, or wait until it is released"
	msgFailed = "logbook could not complete this call"
)

// describe says what went wrong in words an agent can act on, the same
// whichever ledger answered: the service's errors and the API's problem
// documents match the same domain errors (the client turns a problem's
// type back into its error), so nothing here reads a title.
//
//   - invalid input: "<field>: <what is allowed>";
//   - a session ended on purpose: msgEnded;
//   - a claim held by another session: who holds it until when, and what to do;
//   - not found, forbidden, unauthorized: the service's sentence, e.g.
//     `no session "X" in your projects`;
//   - anything else (the server cannot be reached): the error as it is.
func describe(err error) string {
	var held *logbook.ClaimConflictError
	var problem *client.Problem
	switch {
	case errors.Is(err, logbook.ErrEnded):
		return msgEnded
	case errors.As(err, &held):
		return held.Error() + claimHint
	case errors.As(err, &problem):
		// The server's answer: its detail is the service's sentence.
		switch {
		case errors.Is(err, logbook.ErrUnauthorized):
			return problem.Detail + "; give logbook mcp a token of the server (LOGBOOK_TOKEN)"
		case problem.Detail != "":
			return problem.Detail
		}
		return msgFailed + ": the server answered " + strconv.Itoa(problem.Status) + " " + problem.Title
	}
	// A *logbook.ValidationError prints as "field: message"; the sentinels
	// only repeat at the end what the sentence says.
	for _, sentinel := range []error{logbook.ErrInvalid, logbook.ErrNotFound, logbook.ErrForbidden,
		logbook.ErrUnauthorized, logbook.ErrConflict} {
		if errors.Is(err, sentinel) {
			return strings.TrimSuffix(err.Error(), ": "+sentinel.Error())
		}
	}
	return err.Error()
}
