package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"github.com/logbookhq/logbook/internal/logbook"
)

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// problem is an RFC 9457 problem document, with the field at fault when
// there is one.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Field  string `json:"field,omitempty"`
}

// writeProblem answers with a problem of no particular type (about:blank).
func writeProblem(w http.ResponseWriter, status int, title, detail, field string) {
	writeTypedProblem(w, problem{Type: "about:blank", Title: title, Status: status, Detail: detail, Field: field})
}

func writeTypedProblem(w http.ResponseWriter, p problem) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeErrorProblem answers with the problem of one of the domain's
// errors: its type names the error (logbook.ProblemType), so a client
// turns it back into the same error.
func writeErrorProblem(w http.ResponseWriter, err error, status int, title, detail, field string) {
	writeTypedProblem(w, problem{Type: logbook.ProblemType(err), Title: title, Status: status, Detail: detail, Field: field})
}

// writeError answers with the problem err stands for. Unexpected errors are
// logged with the request and answered with a 500 that reveals nothing.
func (h *handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var invalid *logbook.ValidationError
	var tooBig *http.MaxBytesError
	var held *logbook.ClaimConflictError
	var unavailable *logbook.UnavailableError
	var limited *logbook.LimitError
	switch {
	case errors.As(err, &limited):
		w.Header().Set("Retry-After", strconv.Itoa(logbook.Seconds(limited.RetryAfter)))
		writeErrorProblem(w, err, http.StatusTooManyRequests, "Too many requests", limited.Error(), "")
	case errors.As(err, &held):
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(struct {
			problem
			Holder logbook.Claim `json:"holder"`
		}{problem{Type: logbook.ProblemTypeClaimed, Title: "Claimed by another session", Status: http.StatusConflict, Detail: held.Error()}, held.Holder})
	case errors.As(err, &invalid):
		writeErrorProblem(w, err, http.StatusBadRequest, "Invalid request", invalid.Error(), invalid.Field)
	case errors.As(err, &tooBig):
		writeProblem(w, http.StatusRequestEntityTooLarge, "Request too large",
			fmt.Sprintf("the body is over %d bytes; send fewer entries per batch", tooBig.Limit), "")
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The body came too slowly (serve's --body-timeout); nothing of it
		// was used.
		writeProblem(w, http.StatusRequestTimeout, "Request timeout",
			"the request body did not arrive in time; send it again, faster or in smaller batches", "")
	case errors.Is(err, logbook.ErrInvalid):
		writeErrorProblem(w, err, http.StatusBadRequest, "Invalid request", err.Error(), "")
	case errors.Is(err, logbook.ErrUnauthorized):
		w.Header().Set("WWW-Authenticate", `Bearer realm="logbook"`)
		writeErrorProblem(w, err, http.StatusUnauthorized, "Unauthorized", detail(err, logbook.ErrUnauthorized), "")
	case errors.Is(err, logbook.ErrForbidden):
		writeErrorProblem(w, err, http.StatusForbidden, "Forbidden", detail(err, logbook.ErrForbidden), "")
	case errors.Is(err, logbook.ErrNotFound):
		writeErrorProblem(w, err, http.StatusNotFound, "Not found", detail(err, logbook.ErrNotFound), "")
	case errors.Is(err, logbook.ErrEnded):
		writeErrorProblem(w, err, http.StatusConflict, "Session ended", "This session has ended. Start a new one.", "")
	case errors.Is(err, logbook.ErrConflict):
		writeErrorProblem(w, err, http.StatusConflict, "Conflict", detail(err, logbook.ErrConflict), "")
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client closed the request before it was answered (a hook past
		// its deadline, which keeps the call to send again). Nothing failed
		// here, and no one is left to read the answer.
		h.log.InfoContext(r.Context(), "client went away", "method", r.Method, "path", r.URL.Path)
		writeProblem(w, http.StatusServiceUnavailable, "Request cancelled", "the client closed the request before it was answered", "")
	case errors.As(err, &unavailable):
		// The client should send the same request again shortly; nothing
		// it was told was stored is lost. The reason is the engine's, in
		// words an operator can act on, without the driver's message.
		h.log.WarnContext(r.Context(), "database unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", retryAfterUnavailable)
		writeErrorProblem(w, err, http.StatusServiceUnavailable, "Service unavailable", unavailable.Reason, "")
	default:
		h.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		writeProblem(w, http.StatusInternalServerError, "Internal error", "the server could not complete this request; it was logged", "")
	}
}

// retryAfterUnavailable is the Retry-After, in seconds, of a 503 answered
// while the database cannot be reached or cannot take writes.
const retryAfterUnavailable = "2"

// detail is err's message without the sentinel's own text at its end, which
// would only repeat the title.
func detail(err, sentinel error) string {
	msg, suffix := err.Error(), ": "+sentinel.Error()
	if len(msg) > len(suffix) && msg[len(msg)-len(suffix):] == suffix {
		return msg[:len(msg)-len(suffix)]
	}
	return msg
}
