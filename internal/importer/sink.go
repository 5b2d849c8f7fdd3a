package importer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// Sink is where an import writes: the three session calls it needs.
// An Append on a session that was ended on purpose must fail with an error
// matching logbook.ErrEnded.
type Sink interface {
	// Start starts a session, or finds the one already started with the
	// same harness session id and applies the fields to it.
	Start(ctx context.Context, p service.StartParams) (sess logbook.Session, created bool, err error)
	// Append records a batch of at most logbook.MaxBatch entries.
	Append(ctx context.Context, id string, b service.Batch) (service.AppendResult, error)
	// End ends a session.
	End(ctx context.Context, id string, p service.EndParams) error
}

// ImportActor is the actor ServiceSink acts as by default. Sessions belong
// to the actor that started them, so sessions imported straight into a
// database belong to "import": tokens of other actors can read them but
// not write to them, which suits history.
const ImportActor = "import"

// ServiceSink writes through a service in this process: `logbook import
// --db`.
type ServiceSink struct {
	Svc    *service.Service
	Caller service.Caller // default: the admin acting as ImportActor
}

// NewServiceSink returns a sink on svc acting as ImportActor with admin
// rights, so it may write into any project.
func NewServiceSink(svc *service.Service) *ServiceSink {
	return &ServiceSink{Svc: svc, Caller: service.Caller{Actor: ImportActor, Admin: true}}
}

// Start implements Sink.
func (s *ServiceSink) Start(ctx context.Context, p service.StartParams) (logbook.Session, bool, error) {
	return s.Svc.StartSession(ctx, s.Caller, p)
}

// Append implements Sink.
func (s *ServiceSink) Append(ctx context.Context, id string, b service.Batch) (service.AppendResult, error) {
	return s.Svc.AppendEntries(ctx, s.Caller, id, b)
}

// End implements Sink.
func (s *ServiceSink) End(ctx context.Context, id string, p service.EndParams) error {
	_, err := s.Svc.EndSession(ctx, s.Caller, id, p)
	return err
}

// ClientSink writes to a logbook server over its JSON API, as the token's
// actor. A request the server turns away for the token's rate limit (429)
// is sent again after a pause, so a large import paces itself.
type ClientSink struct {
	Client *client.Client
	// Pause is how long to wait before sending a rate-limited request again
	// (default one second, the server's smallest Retry-After).
	Pause time.Duration
}

// maxRateLimitedTries bounds how often one request is sent while the
// server keeps answering 429.
const maxRateLimitedTries = 60

// do sends one request, again after a pause while the server answers 429.
func (s *ClientSink) do(ctx context.Context, method, path string, body, out any) (int, error) {
	pause := s.Pause
	if pause <= 0 {
		pause = time.Second
	}
	for try := 1; ; try++ {
		status, err := s.Client.Do(ctx, method, path, body, out)
		if !client.IsStatus(err, http.StatusTooManyRequests) || try == maxRateLimitedTries {
			return status, err
		}
		select {
		case <-ctx.Done():
			return status, ctx.Err()
		case <-time.After(pause):
		}
	}
}

// startBody is the body of POST /v1/sessions.
type startBody struct {
	Project          string `json:"project,omitempty"`
	Harness          string `json:"harness"`
	HarnessSessionID string `json:"harness_session_id"`
	ParentID         string `json:"parent_id,omitempty"`
	logbook.SessionFields
}

// Start implements Sink.
func (s *ClientSink) Start(ctx context.Context, p service.StartParams) (logbook.Session, bool, error) {
	var sess logbook.Session
	status, err := s.do(ctx, http.MethodPost, "/v1/sessions", startBody{
		Project: p.Project, Harness: p.Harness, HarnessSessionID: p.HarnessSessionID, ParentID: p.ParentID,
		SessionFields: p.Fields.NonEmpty(),
	}, &sess)
	if err != nil {
		return sess, false, err
	}
	return sess, status == http.StatusCreated, nil
}

// entriesBody is the body of POST /v1/sessions/{id}/entries.
type entriesBody struct {
	Entries []logbook.Entry `json:"entries"`
	Touched []logbook.Touch `json:"touched,omitempty"`
}

// Append implements Sink. A batch the server finds too large (413) is sent
// again in halves: entries are keyed, so nothing is recorded twice.
func (s *ClientSink) Append(ctx context.Context, id string, b service.Batch) (service.AppendResult, error) {
	var res service.AppendResult
	_, err := s.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/entries",
		entriesBody{Entries: b.Entries, Touched: b.Touched}, &res)
	switch {
	case client.IsStatus(err, http.StatusRequestEntityTooLarge) && len(b.Entries) > 1:
		half := len(b.Entries) / 2
		first, err := s.Append(ctx, id, service.Batch{Entries: b.Entries[:half], Touched: b.Touched})
		if err != nil {
			return first, err
		}
		second, err := s.Append(ctx, id, service.Batch{Entries: b.Entries[half:]})
		second.Recorded += first.Recorded
		second.Duplicates += first.Duplicates
		return second, err
	case client.IsStatus(err, http.StatusConflict) && isEndedProblem(err):
		return res, fmt.Errorf("%w: %w", err, logbook.ErrEnded)
	}
	return res, err
}

// isEndedProblem reports whether a 409 says the session has ended (rather
// than another conflict).
func isEndedProblem(err error) bool {
	var p *client.Problem
	return errors.As(err, &p) && p.Title == "Session ended"
}

// endBody is the body of POST /v1/sessions/{id}/end.
type endBody struct {
	Outcome logbook.Outcome `json:"outcome"`
	Result  string          `json:"result,omitempty"`
	Blocker logbook.Blocker `json:"blocker,omitempty"`
	Reason  string          `json:"reason,omitempty"`
}

// End implements Sink.
func (s *ClientSink) End(ctx context.Context, id string, p service.EndParams) error {
	_, err := s.do(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(id)+"/end",
		endBody{Outcome: p.Outcome, Result: p.Result, Blocker: p.Blocker, Reason: p.Reason}, nil)
	return err
}
