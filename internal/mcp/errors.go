package mcp

import (
	"errors"
	"net/http"
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

// describe says what went wrong in words an agent can act on, the same for
// an error of the service (serviceLedger) and for the problem document the
// API answered with for it (httpLedger):
//
//   - invalid input: "<field>: <what is allowed>";
//   - a session ended on purpose: msgEnded;
//   - a claim held by another session: who holds it until when, and what to do;
//   - not found, forbidden, unauthorized: the service's sentence, e.g.
//     `no session "X" in your projects`;
//   - anything else (the server cannot be reached): the error as it is.
func describe(err error) string {
	var problem *client.Problem
	var held *logbook.ClaimConflictError
	switch {
	case errors.Is(err, logbook.ErrEnded):
		return msgEnded
	case errors.As(err, &held):
		return held.Error() + claimHint
	case errors.As(err, &problem):
		return describeProblem(problem)
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

// describeProblem is describe for a problem document of the API, whose
// detail is the service's sentence.
func describeProblem(p *client.Problem) string {
	switch {
	case p.Status == http.StatusConflict && p.Title == "Session ended":
		return msgEnded
	case p.Status == http.StatusConflict && p.Title == "Claimed by another session":
		return p.Detail + claimHint
	case p.Status == http.StatusUnauthorized:
		return p.Detail + "; give logbook mcp a token of the server (LOGBOOK_TOKEN)"
	case p.Detail != "":
		return p.Detail
	}
	return msgFailed + ": the server answered " + strconv.Itoa(p.Status) + " " + p.Title
}
