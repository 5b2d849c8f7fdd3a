package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/logbookhq/logbook/internal/buildinfo"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Delivery of alerts from the outbox to the rules' webhooks. A deliverer
// leases a few due alerts (store.AlertClaimDue), posts each, and records
// the attempt; the lease is the alert's next attempt moved past the time
// a post may take, so with several replicas on one database each alert
// is posted by one at a time, and one that died holding it lets it go
// when its lease lapses. A webhook that answers 2xx has the alert; any
// other answer, or none, is tried again after AlertRetryAfter, up to
// logbook.MaxAlertAttempts times.
//
// An alert is posted once, unless a deliverer dies (or loses the
// database) between a webhook's 2xx and recording it: then it is posted
// again after its lease lapses. Every post carries the alert's id in
// Logbook-Alert-Id (and in a json body), the same on every retry, so a
// receiver that must act once drops one it has seen.

// Delivery's bounds.
const (
	// AlertTimeout bounds one post, from connecting to reading the answer.
	AlertTimeout = 10 * time.Second
	// alertLease is how long a deliverer holds the alerts it took: longer
	// than a batch of posts may take (they go side by side).
	alertLease = 2 * time.Minute
	// alertBatch is how many due alerts a deliverer takes at once.
	alertBatch = 8
	// alertPoll is how often a deliverer looks for due alerts when no
	// commit of its own process raised one: retries, and alerts other
	// replicas raised.
	alertPoll = 2 * time.Second
	// maxAlertAnswer bounds what is read of a webhook's answer.
	maxAlertAnswer = 64 << 10
)

// newAlertClient is the client alerts are posted with: a timeout, and no
// redirect followed (a webhook is posted to where its rule says, never
// sent on elsewhere with the alert).
func newAlertClient() *http.Client {
	return &http.Client{Timeout: AlertTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// AlertDelivery says what one round of delivery did.
type AlertDelivery struct {
	// Taken is how many due alerts this deliverer took; Delivered,
	// Retrying and Failed what became of them; Lost how many it no
	// longer held when it came to record the attempt (their rule was
	// deleted, or their lease lapsed).
	Taken, Delivered, Retrying, Failed, Lost int
}

// DeliverDue posts the alerts due now, a batch at a time, until none is
// due or ctx ends.
func (s *Service) DeliverDue(ctx context.Context) (AlertDelivery, error) {
	var total AlertDelivery
	for {
		round, err := s.deliverBatch(ctx)
		total.Taken += round.Taken
		total.Delivered += round.Delivered
		total.Retrying += round.Retrying
		total.Failed += round.Failed
		total.Lost += round.Lost
		if err != nil || round.Taken < alertBatch {
			return total, err
		}
	}
}

// deliverBatch leases up to alertBatch due alerts and posts them side by
// side.
func (s *Service) deliverBatch(ctx context.Context) (AlertDelivery, error) {
	var res AlertDelivery
	now := s.now()
	lease := now.Add(alertLease)
	due, err := s.store.AlertClaimDue(ctx, now, lease, alertBatch)
	if err != nil || len(due) == 0 {
		return res, err
	}
	res.Taken = len(due)
	rules := map[string]logbook.AlertRule{}
	for _, a := range due {
		if _, ok := rules[a.RuleID]; ok {
			continue
		}
		r, err := s.store.AlertRuleGet(ctx, a.RuleID)
		if err != nil && !isNotFound(err) {
			return res, err
		}
		rules[a.RuleID] = r // the zero rule when deleted meanwhile
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	for _, a := range due {
		wg.Go(func() {
			status, err := s.deliverOne(ctx, rules[a.RuleID], a, lease)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				firstErr = cmpErr(firstErr, err)
			case status == "":
				res.Lost++
			case status == logbook.AlertDelivered:
				res.Delivered++
			case status == logbook.AlertFailed:
				res.Failed++
			default:
				res.Retrying++
			}
		})
	}
	wg.Wait()
	return res, firstErr
}

// cmpErr keeps the first error.
func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// deliverOne posts an alert to its rule's webhook and records the attempt
// under the lease; it says what the alert became ("" when the lease was
// no longer held, or the rule is gone).
func (s *Service) deliverOne(ctx context.Context, r logbook.AlertRule, a logbook.Alert, lease time.Time) (logbook.AlertStatus, error) {
	if r.ID == "" {
		return "", nil // its rule was deleted, and the alert with it
	}
	attempt := s.post(ctx, r, a, a.Attempts+1, false)
	p := store.AlertFinishParams{ID: a.ID, Lease: lease, Attempt: attempt, Status: logbook.AlertPending}
	switch {
	case attempt.Error == "":
		p.Status = logbook.AlertDelivered
	case a.Attempts+1 >= logbook.MaxAlertAttempts:
		p.Status = logbook.AlertFailed
	default:
		p.NextAttemptAt = attempt.At.Add(logbook.AlertRetryAfter(a.Attempts + 1))
	}
	if ctx.Err() != nil && p.Status != logbook.AlertDelivered {
		// Stopped, not failed: the alert is tried again once its lease lapses.
		return "", nil
	}
	// Recorded even when ctx ends: the webhook has the alert.
	held, err := s.store.AlertFinish(context.WithoutCancel(ctx), p)
	if err != nil {
		return "", fmt.Errorf("recording the delivery of alert %s: %w", a.ID, err)
	}
	if !held {
		s.log.WarnContext(ctx, "an alert's lease lapsed before its delivery was recorded; it may be posted again", "alert", a.ID, "rule", r.ID)
		return "", nil
	}
	if s.alertAttempted != nil {
		s.alertAttempted(attemptResult(p.Status))
	}
	if p.Status != logbook.AlertDelivered {
		s.log.WarnContext(ctx, "posting an alert failed", "alert", a.ID, "rule", r.ID, "project", r.Project,
			"attempt", a.Attempts+1, "status", attempt.StatusCode, "err", attempt.Error, "next", p.Status)
	}
	return p.Status, nil
}

// attemptResult names what came of a post by the alert's new status, for
// Options.AlertAttempted.
func attemptResult(status logbook.AlertStatus) string {
	if status == logbook.AlertPending {
		return "retrying"
	}
	return string(status)
}

// post sends an alert to a rule's webhook once and says how it went: the
// status code, and an error unless it was 2xx. The webhook's URL appears
// in no error (it may hold a secret); at most maxAlertAnswer bytes of the
// answer are read, and its first line kept for a failure.
func (s *Service) post(ctx context.Context, r logbook.AlertRule, a logbook.Alert, attemptNo int, test bool) logbook.AlertAttempt {
	attempt := logbook.AlertAttempt{At: s.now()}
	started := time.Now()
	defer func() { attempt.DurationMS = time.Since(started).Milliseconds() }()
	fail := func(format string, args ...any) logbook.AlertAttempt {
		attempt.Error = logbook.Clip(fmt.Sprintf(format, args...), logbook.MaxAttemptError)
		attempt.DurationMS = time.Since(started).Milliseconds()
		return attempt
	}
	body := logbook.AlertPayload(r, a, test)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.WebhookURL, bytes.NewReader(body))
	if err != nil {
		return fail("the webhook URL cannot be posted to: %v", unwrapURLError(err))
	}
	timestamp := attempt.At.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "logbook/"+buildinfo.Read().Version)
	req.Header.Set("Logbook-Alert-Id", a.ID)
	req.Header.Set("Logbook-Attempt", strconv.Itoa(attemptNo))
	req.Header.Set("Logbook-Timestamp", strconv.FormatInt(timestamp, 10))
	req.Header.Set("Logbook-Signature", logbook.SignAlert(r.Secret, timestamp, body))
	resp, err := s.alertClient.Do(req)
	if err != nil {
		return fail("posting to %s: %v", logbook.MaskWebhookURL(r.WebhookURL), unwrapURLError(err))
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAlertAnswer))
	attempt.StatusCode = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		line, _, _ := strings.Cut(strings.TrimSpace(string(answer)), "\n")
		return fail("%s answered %s %s", logbook.MaskWebhookURL(r.WebhookURL), resp.Status, logbook.Clip(line, 200))
	}
	attempt.DurationMS = time.Since(started).Milliseconds()
	return attempt
}

// unwrapURLError drops the URL a *url.Error names (it may hold a
// secret), keeping what went wrong.
func unwrapURLError(err error) error {
	var u *url.Error
	if errors.As(err, &u) {
		if u.Timeout() {
			return fmt.Errorf("no answer within %s", AlertTimeout)
		}
		return u.Err
	}
	return err
}

// TestAlertRule posts a sample alert to a project's rule's webhook now,
// signed as a real one and marked "test", and says how it went; the
// outbox is left alone. Only the admin may.
func (s *Service) TestAlertRule(ctx context.Context, c Caller, project, id string) (logbook.AlertAttempt, error) {
	project, err := adminProject(c, project, "tests alert rules")
	if err != nil {
		return logbook.AlertAttempt{}, err
	}
	r, err := ruleOf(ctx, s.store, project, id)
	if err != nil {
		return logbook.AlertAttempt{}, err
	}
	now := s.now()
	sample := logbook.Alert{ID: "test-" + logbook.NewID(now), RuleID: r.ID, Project: project, Kind: r.Kind, Subject: "test",
		Summary: fmt.Sprintf("a test of alert rule %q (%s) of project %s: its webhook is reached", r.Name, r.Kind, project),
		Details: []byte(`{"test":true}`), RaisedAt: now}
	return s.post(ctx, r, sample, 1, true), nil
}

// DeliverAlerts delivers alerts until ctx ends: at once when a commit of
// this process raised one, and every alertPoll for retries and the
// alerts other replicas raised. `logbook serve` runs it.
func (s *Service) DeliverAlerts(ctx context.Context) {
	tick := time.NewTicker(alertPoll)
	defer tick.Stop()
	for {
		if _, err := s.DeliverDue(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "delivering alerts failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-s.alertRaised:
		}
	}
}

// wakeDeliverer pokes DeliverAlerts, without waiting.
func (s *Service) wakeDeliverer() {
	select {
	case s.alertRaised <- struct{}{}:
	default:
	}
}
