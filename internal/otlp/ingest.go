package otlp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// result is what an export did.
type result struct {
	Items    int // spans or log records in the export
	Known    int // of them, those logbook reads (GenAI spans, harness events)
	Sessions int // sessions written to
	Recorded int // entries stored now
	// Rejected counts spans or records that could not be stored, and
	// Message says why; OTLP reports both as partial success.
	Rejected int
	Message  string
}

// ingest maps the GenAI spans of an export onto sessions and entries and
// writes them as the caller. Spans without GenAI attributes are accepted
// and ignored. Spans the service refuses (a project the token may not
// write, an invalid field) are counted as rejected; any other error
// (the database is down) is returned, and the exporter should send the
// export again, which entry keys make safe.
//
// Sessions are started parents first; entries are appended in time order
// in batches of at most 500; then sessions whose invoke_agent span is in
// the export end, subagents before parents: success, or failed with the
// span's status message when its status is an error. A top-level session
// named by gen_ai.conversation.id is left open, for the conversation's
// next turn. A subagent that has ended takes no more entries; its late
// spans are accepted and dropped.
func ingest(ctx context.Context, l ledger.Ledger, spans []*span) (result, error) {
	p := newPlan(spans)
	res := result{Items: len(spans), Known: p.genAI}
	ids := make(map[string]string)  // hid → logbook id
	closed := make(map[string]bool) // hid → ended already, or failed
	var reasons []string
	reject := func(s *planned, err error) {
		res.Rejected += s.spans
		closed[s.hid] = true
		reasons = append(reasons, fmt.Sprintf("session %q: %v", s.hid, err))
	}
	sessions := p.ordered()
	for _, s := range sessions {
		if s.parentHID != "" && ids[s.parentHID] == "" {
			reject(s, errors.New("its parent session could not be started"))
			continue
		}
		sess, _, err := l.StartSession(ctx, ledger.StartParams{
			Project: s.project, Harness: s.harness, HarnessSessionID: s.hid, ParentID: ids[s.parentHID], Fields: s.fields(),
			StartedAt: s.startedAt()})
		if err != nil {
			if permanent(err) {
				reject(s, err)
				continue
			}
			return res, err
		}
		ids[s.hid] = sess.ID
		res.Sessions++
		if sess.ParentID != "" && sess.State == logbook.StateEnded && sess.EndReason != logbook.EndReasonTimedOut {
			closed[s.hid] = true // a finished subagent: nothing more goes in
			continue
		}
		recorded, err := appendAll(ctx, l, sess.ID, s.entries)
		res.Recorded += recorded
		switch {
		case errors.Is(err, logbook.ErrEnded):
			closed[s.hid] = true
		case err != nil && permanent(err):
			reject(s, err)
		case err != nil:
			return res, err
		}
	}
	for i := len(sessions) - 1; i >= 0; i-- { // deepest first
		s := sessions[i]
		if s.agentSpan == nil || s.conversation || closed[s.hid] || ids[s.hid] == "" {
			continue
		}
		end := ledger.EndParams{Outcome: logbook.OutcomeSuccess, EndedAt: s.agentSpan.End}
		if s.agentSpan.Failed {
			end.Outcome, end.Result = logbook.OutcomeFailed, s.agentSpan.StatusMessage
		}
		if _, err := l.EndSession(ctx, ids[s.hid], end); err != nil {
			if !permanent(err) {
				return res, err
			}
			reasons = append(reasons, fmt.Sprintf("ending session %q: %v", s.hid, err))
		}
	}
	res.Message = logbook.Clip(strings.Join(reasons, "; "), 2000)
	return res, nil
}

// startedAt is when the session began by its spans: its invoke_agent
// span's start, else its earliest entry's time (zero: the server's now).
// Spans exported late, or a trace replayed, so keep their own time.
func (s *planned) startedAt() time.Time {
	if s.agentSpan != nil && !s.agentSpan.Start.IsZero() {
		return s.agentSpan.Start
	}
	var first time.Time
	for _, e := range s.entries {
		if !e.At.IsZero() && (first.IsZero() || e.At.Before(first)) {
			first = e.At
		}
	}
	return first
}

// fields are what the spans said of a session.
func (s *planned) fields() logbook.SessionFields {
	ptr := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	model := s.model
	if s.provider != "" && model != "" && !strings.Contains(model, "/") {
		model = s.provider + "/" + model // e.g. anthropic/claude-sonnet-4
	}
	return logbook.SessionFields{Model: ptr(model), AgentType: ptr(s.agentName)}
}

// appendAll appends entries in time order, in batches of at most
// logbook.MaxBatch, and returns how many were stored.
func appendAll(ctx context.Context, l ledger.Ledger, id string, entries []logbook.Entry) (int, error) {
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].At.Before(entries[j].At) })
	recorded := 0
	for start := 0; start < len(entries); start += logbook.MaxBatch {
		batch := entries[start:min(start+logbook.MaxBatch, len(entries))]
		res, err := l.AppendEntries(ctx, id, ledger.Batch{Entries: batch})
		if err != nil {
			return recorded, err
		}
		recorded += res.Recorded
	}
	return recorded, nil
}

// permanent reports whether sending the same spans again would fail the
// same way: the request is wrong, not the server.
func permanent(err error) bool {
	for _, target := range []error{logbook.ErrInvalid, logbook.ErrForbidden, logbook.ErrNotFound, logbook.ErrConflict, logbook.ErrUnauthorized} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
