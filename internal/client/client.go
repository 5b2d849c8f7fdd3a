// Package client talks to a logbook server's JSON API. The CLI, the hooks,
// the MCP stdio server and the importers use it; it holds no rules, only
// HTTP: tokens, JSON, and problem documents turned into errors.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client is a logbook API client. It is safe for concurrent use.
type Client struct {
	// BaseURL is the server, e.g. http://127.0.0.1:7474.
	BaseURL string
	// Token is the bearer token sent with every request.
	Token string
	// HTTP is the client used (default: one with a 30 s timeout).
	HTTP *http.Client
}

// New returns a client for the server at baseURL with token.
func New(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Problem is an error the server answered with: an RFC 9457 problem
// document, or a status without one.
type Problem struct {
	Status int    `json:"status"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Field  string `json:"field,omitempty"`
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

// Do sends a request with body (encoded as JSON unless nil) to path (which
// may carry a query) and decodes a JSON answer into out (unless nil). It
// returns the status code. A 4xx or 5xx answer is a *Problem.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) (int, error) {
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
		return res.StatusCode, ProblemFrom(res.StatusCode, raw)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return res.StatusCode, fmt.Errorf("error decoding the answer of %s %s: %w", method, path, err)
		}
	}
	return res.StatusCode, nil
}
