// Package client talks to a logbook server's JSON API. Its Ledger is the
// port (package ledger) over HTTP: it owns every /v1 path, sends a request
// again while the server asks it to wait (429), splits a batch the server
// finds too large (413), and follows the event stream. The CLI, the hooks,
// the MCP stdio server, the importers and the bench use it; it holds no
// rules, only HTTP: tokens, JSON, and problem documents turned back into
// the domain's errors.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Client is a logbook API client. It is safe for concurrent use.
type Client struct {
	// BaseURL is the server, e.g. http://127.0.0.1:7474.
	BaseURL string
	// Token is the bearer token sent with every request.
	Token string
	// HTTP is the client used (default: one with a 30 s timeout, which
	// keeps an idle connection 30 s).
	HTTP *http.Client
	// Requester, when set, sends every request instead of HTTP (a load
	// generator's own connection, say); BaseURL and Token are then its
	// business.
	Requester Requester
	// RetryPause, when set, caps the wait before sending again a request
	// the server turned away for the rate limit (429); by default the
	// client waits as long as the server's Retry-After says.
	RetryPause time.Duration
}

// idleConnTimeout is how long a client keeps an idle connection: less
// than the server's idle timeout (60 s), so that it never sends a request
// on a connection the server is closing.
const idleConnTimeout = 30 * time.Second

// New returns a client for the server at baseURL with token.
func New(baseURL, token string) *Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.IdleConnTimeout = idleConnTimeout
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{Timeout: 30 * time.Second, Transport: transport}}
}

// Problem is an error the server answered with: an RFC 9457 problem
// document, or a status without one. Its type names the domain's error,
// which Unwrap returns, so errors.Is(err, logbook.ErrEnded) and
// errors.As(err, &validationError) work on an error that came over the
// wire as they do in process.
type Problem struct {
	Type   string `json:"type"`
	Status int    `json:"status"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Field  string `json:"field,omitempty"`
	// Holder is the claim that holds a subject, for a problem of type
	// logbook.ProblemTypeClaimed.
	Holder *logbook.Claim `json:"holder,omitempty"`
	// RetryAfter is the wait the server asked for (429, 503), if any.
	RetryAfter time.Duration `json:"-"`
}

// Unwrap returns the domain's error the problem's type stands for: a
// *logbook.ValidationError for an invalid request, a
// *logbook.ClaimConflictError for a held subject, else the sentinel (nil
// for a problem without a known type).
func (p *Problem) Unwrap() error {
	switch err := logbook.ErrorOfProblemType(p.Type); {
	case err == logbook.ErrInvalid:
		return &logbook.ValidationError{Field: p.Field, Message: strings.TrimPrefix(p.Detail, p.Field+": ")}
	case p.Type == logbook.ProblemTypeClaimed && p.Holder != nil:
		return &logbook.ClaimConflictError{Subject: p.Holder.Subject, Holder: *p.Holder}
	default:
		return err
	}
}

func (p *Problem) Error() string {
	msg := fmt.Sprintf("logbook server: %d %s", p.Status, p.Title)
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	return msg
}

// ProblemFrom reads the problem document a 4xx or 5xx answer carries in
// body; without one, the Problem says only the status.
func ProblemFrom(status int, body []byte) *Problem {
	p := &Problem{Title: http.StatusText(status)}
	_ = json.Unmarshal(body, p)
	p.Status = status
	return p
}

// IsStatus reports whether err is a Problem with the status.
func IsStatus(err error, status int) bool {
	var p *Problem
	return errors.As(err, &p) && p.Status == status
}

// Requester sends one request, as Do does.
type Requester interface {
	Do(ctx context.Context, method, path string, body, out any) (int, error)
}

// Do sends a request with body (encoded as JSON unless nil) to path (which
// may carry a query) and decodes a JSON answer into out (unless nil). It
// returns the status code. A 4xx or 5xx answer is a *Problem.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) (int, error) {
	if c.Requester != nil {
		return c.Requester.Do(ctx, method, path, body, out)
	}
	var reader io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("error encoding the request: %w", err)
		}
		reader = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, reader)
	if err != nil {
		return 0, fmt.Errorf("error making the request (is %q a server URL?): %w", c.BaseURL, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	httpc := c.HTTP
	if httpc == nil {
		httpc = http.DefaultClient
	}
	res, err := httpc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot reach the logbook server at %s (is it running? set LOGBOOK_URL): %w", c.BaseURL, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, fmt.Errorf("error reading the answer: %w", err)
	}
	if res.StatusCode >= 400 {
		p := ProblemFrom(res.StatusCode, raw)
		if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && secs > 0 {
			p.RetryAfter = time.Duration(secs) * time.Second
		}
		return res.StatusCode, p
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return res.StatusCode, fmt.Errorf("error decoding the answer of %s %s: %w", method, path, err)
		}
	}
	return res.StatusCode, nil
}
