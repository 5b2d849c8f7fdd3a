package logbook

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Sentinel errors shared by every layer. Check them with errors.Is.
var (
	// ErrNotFound means the thing asked for does not exist, or the caller
	// may not know that it exists (another project's session).
	ErrNotFound = errors.New("logbook: not found")
	// ErrConflict means the request clashes with what is stored (a unique
	// key, a claim held by someone else).
	ErrConflict = errors.New("logbook: conflict")
	// ErrInvalid means the request itself is wrong; a *ValidationError
	// says which field and what is allowed.
	ErrInvalid = errors.New("logbook: invalid input")
	// ErrForbidden means the caller is known but may not do this (another
	// actor's session, an admin-only route).
	ErrForbidden = errors.New("logbook: forbidden")
	// ErrUnauthorized means no valid token came with the request.
	ErrUnauthorized = errors.New("logbook: unauthorized")
	// ErrEnded means the session was ended on purpose and takes no more
	// writes; the caller should start a new session.
	ErrEnded = errors.New("logbook: session has ended")
	// ErrUnavailable means the database cannot serve the request for now
	// (out of reach, restarting, busy, a full disk, a read-only file), as
	// opposed to a bug or a bad request: nothing of the request was stored
	// and the caller should send it again shortly. Each engine recognises
	// its own codes for it; an *UnavailableError says why.
	ErrUnavailable = errors.New("logbook: unavailable")
	// ErrLimited means the caller is over a limit on how much it may ask
	// at once (requests a second, open event streams); a *LimitError says
	// when to retry.
	ErrLimited = errors.New("logbook: over a limit")
)

// UnavailableError says why the database cannot serve a request now, in
// words an operator can act on. It matches ErrUnavailable with errors.Is
// and unwraps to the engine's own error.
type UnavailableError struct {
	Reason string // e.g. "the database's disk is full; free space on the server, then retry"
	Err    error  // the engine's error; nil when there is none
}

// Unavailable returns an *UnavailableError for reason, caused by err.
func Unavailable(reason string, err error) *UnavailableError {
	return &UnavailableError{Reason: reason, Err: err}
}

func (e *UnavailableError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}

// Is makes an *UnavailableError match ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap returns the engine's error.
func (e *UnavailableError) Unwrap() error { return e.Err }

// ValidationError names the field that is wrong and what would be right.
// It matches ErrInvalid with errors.Is.
type ValidationError struct {
	Field   string // JSON name of the field, e.g. "entries[3].kind"
	Message string // what is allowed, in words a person can act on
}

// Invalid returns a *ValidationError for field with a formatted message.
func Invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Is makes a *ValidationError match ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// LimitError says which limit a request went over and when to retry. It
// matches ErrLimited with errors.Is.
type LimitError struct {
	Message    string // the limit, in words a person can act on
	RetryAfter time.Duration
}

func (e *LimitError) Error() string { return e.Message }

// Is makes a *LimitError match ErrLimited.
func (e *LimitError) Is(target error) bool { return target == ErrLimited }

// Seconds is d in whole seconds, rounded up and at least 1: a Retry-After
// header's value.
func Seconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// Problem types. The API answers each error of this package with an RFC
// 9457 problem document whose type is the error's URI below; a client
// turns the type back into the same error (ErrorOfProblemType), so
// errors.Is(err, ErrEnded) holds on both sides of the wire and nobody
// matches titles as strings.
const problemTypePrefix = "urn:logbook:problem:"

// problemTypes names each sentinel's problem type, most specific first:
// an error is answered with the first it matches.
var problemTypes = []struct {
	err  error
	name string
}{
	{ErrEnded, "session-ended"},
	{ErrInvalid, "invalid"},
	{ErrUnauthorized, "unauthorized"},
	{ErrForbidden, "forbidden"},
	{ErrNotFound, "not-found"},
	{ErrConflict, "conflict"},
	{ErrUnavailable, "unavailable"},
	{ErrLimited, "limited"},
}

// ProblemTypeClaimed is the problem type of a *ClaimConflictError: the
// subject is held by another session, named in the problem's holder.
const ProblemTypeClaimed = problemTypePrefix + "claimed"

// ProblemType returns the problem type URI err is answered with:
// ProblemTypeClaimed for a *ClaimConflictError, the URI of the first
// sentinel it matches, else "about:blank" (RFC 9457's "no type").
func ProblemType(err error) string {
	var held *ClaimConflictError
	if errors.As(err, &held) {
		return ProblemTypeClaimed
	}
	for _, p := range problemTypes {
		if errors.Is(err, p.err) {
			return problemTypePrefix + p.name
		}
	}
	return "about:blank"
}

// ErrorOfProblemType returns the sentinel a problem type URI stands for
// (ErrConflict for ProblemTypeClaimed), or nil for any other URI.
func ErrorOfProblemType(uri string) error {
	if uri == ProblemTypeClaimed {
		return ErrConflict
	}
	for _, p := range problemTypes {
		if uri == problemTypePrefix+p.name {
			return p.err
		}
	}
	return nil
}
