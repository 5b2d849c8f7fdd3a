package service

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// GetSession reads a session the caller can see, with its active entries
// after p.AfterSeq (at most 500), its direct subagents (with their own
// counts), its plan, links, touched files and active claims.
func (s *Service) GetSession(ctx context.Context, c Caller, id string, p GetParams) (SessionView, error) {
	now := s.now()
	sess, err := s.store.SessionGet(ctx, store.SessionGetParams{ID: id})
	if err != nil || !c.sees(sess.Project) {
		return SessionView{}, sessionNotFound(id, errOr(err, logbook.ErrNotFound))
	}
	if p.Limit <= 0 || p.Limit > logbook.MaxEntryPage {
		p.Limit = logbook.MaxEntryPage
	}
	view := SessionView{Session: s.withState(sess, now), NextAfterSeq: p.AfterSeq}
	if view.Entries, err = s.store.EntryList(ctx, store.EntryListParams{SessionID: id, AfterSeq: p.AfterSeq, Limit: p.Limit, IncludeSuperseded: p.All}); err != nil {
		return SessionView{}, err
	}
	if n := len(view.Entries); n > 0 {
		view.NextAfterSeq = view.Entries[n-1].Seq
	}
	if view.Subagents, err = s.store.SessionList(ctx, store.SessionListParams{
		Project: sess.Project, Filter: logbook.SessionFilter{ParentID: id}, Sort: logbook.SortStarted,
		Limit: logbook.MaxPageSize, Now: now, IdleBefore: now.Add(-s.idle)}); err != nil {
		return SessionView{}, err
	}
	for i := range view.Subagents {
		view.Subagents[i] = s.withState(view.Subagents[i], now)
	}
	view.Session.SubagentCount = int64(len(view.Subagents))
	if view.Plan, err = s.store.PlanList(ctx, id); err != nil {
		return SessionView{}, err
	}
	if view.Links, err = s.store.LinkList(ctx, id); err != nil {
		return SessionView{}, err
	}
	if view.Touched, err = s.store.TouchList(ctx, id); err != nil {
		return SessionView{}, err
	}
	if view.Claims, err = s.store.ClaimList(ctx, store.ClaimListParams{Project: sess.Project, SessionID: id, Now: now}); err != nil {
		return SessionView{}, err
	}
	if view.Skills, err = s.store.SkillList(ctx, sess.Root()); err != nil {
		return SessionView{}, err
	}
	return view, nil
}

func errOr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

// ListSessions lists a project's sessions that match the filter, most
// recent (or longest) first, with their counters, subagent count and
// duration, in one query per page. The cursor is opaque to callers: it
// names the last session of a page, and the next page starts after it, so
// pages stay stable while new sessions arrive.
func (s *Service) ListSessions(ctx context.Context, c Caller, p ListParams) (SessionPage, error) {
	project, err := c.projectFor(p.Project)
	if err != nil {
		return SessionPage{}, err
	}
	switch {
	case p.Limit == 0:
		p.Limit = 50
	case p.Limit < 0 || p.Limit > logbook.MaxPageSize:
		return SessionPage{}, logbook.Invalid("limit", "give a limit from 1 to %d", logbook.MaxPageSize)
	}
	if p.Sort == "" {
		p.Sort = logbook.SortLastSeen
	}
	if !p.Sort.Valid() {
		return SessionPage{}, logbook.Invalid("sort", "%q is not a sort; use last_seen, started or duration", p.Sort)
	}
	if err := p.Filter.Normalize(); err != nil {
		return SessionPage{}, err
	}
	now := s.now()
	params := store.SessionListParams{Project: project, Filter: p.Filter, Sort: p.Sort, Limit: p.Limit + 1, Now: now, IdleBefore: now.Add(-s.idle)}
	if p.Cursor != "" {
		if params.After, err = decodeCursor(p.Cursor, p.Sort); err != nil {
			return SessionPage{}, err
		}
	}
	sessions, err := s.store.SessionList(ctx, params)
	if err != nil {
		return SessionPage{}, err
	}
	page := SessionPage{Sessions: sessions}
	if len(sessions) > p.Limit {
		page.Sessions = sessions[:p.Limit]
		page.NextCursor = encodeCursor(p.Sort, page.Sessions[p.Limit-1])
	}
	for i := range page.Sessions {
		page.Sessions[i] = s.withState(page.Sessions[i], now)
	}
	return page, nil
}

// encodeCursor writes the sort, the last session's sort value and its id.
func encodeCursor(sort logbook.SessionSort, last logbook.Session) string {
	var value int64
	switch sort {
	case logbook.SortStarted:
		value = last.StartedAt.UnixMicro()
	case logbook.SortDuration:
		value = last.DurationSeconds
	default:
		value = last.LastSeenAt.UnixMicro()
	}
	return base64.RawURLEncoding.EncodeToString([]byte(string(sort) + "/" + strconv.FormatInt(value, 10) + "/" + last.ID))
}

func decodeCursor(cursor string, sort logbook.SessionSort) (*store.SessionCursor, error) {
	bad := logbook.Invalid("cursor", "this cursor cannot be read; pass the next_cursor of the previous page as it was, with the same sort")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, bad
	}
	parts := strings.SplitN(string(raw), "/", 3)
	if len(parts) != 3 || parts[0] != string(sort) || parts[2] == "" {
		return nil, bad
	}
	value, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return nil, bad
	}
	return &store.SessionCursor{Value: value, ID: parts[2]}, nil
}

// DefaultPriorWindow is how far back goal memory looks.
const DefaultPriorWindow = 24 * time.Hour

// SetGoal sets a session's goal (a heartbeat) and answers the project's
// partial and failed sessions of the last window (default 24 hours) on a
// similar goal or the same issue, pull or subject, newest first, so the
// agent picks up the thread instead of rediscovering it. Similarity is
// logbook.GoalSimilarity.
func (s *Service) SetGoal(ctx context.Context, c Caller, id, goal string) (GoalResult, error) {
	if logbook.Clip(goal, logbook.MaxLongText) == "" {
		return GoalResult{}, logbook.Invalid("goal", "say what the session is trying to do")
	}
	sess, err := s.UpdateSession(ctx, c, id, logbook.SessionFields{Goal: &goal})
	if err != nil {
		return GoalResult{}, err
	}
	candidates, err := s.store.SessionListPrior(ctx, store.SessionListPriorParams{
		Project: sess.Project, Since: s.now().Add(-s.prior), ExcludeID: sess.ID, Limit: 1000})
	if err != nil {
		return GoalResult{}, err
	}
	result := GoalResult{Session: sess, Prior: []Prior{}}
	for _, old := range candidates {
		why, score := priorReason(sess, old)
		if why == "" {
			continue
		}
		result.Prior = append(result.Prior, Prior{ID: old.ID, Title: old.Title, Goal: old.Goal, Actor: old.Actor,
			Outcome: old.Outcome, Blocker: old.Blocker, Result: old.Result, ClosedAt: old.ClosedAt, Why: why, Similarity: score})
	}
	return result, nil
}

// priorReason says why old is worth knowing about for sess, or "".
func priorReason(sess, old logbook.Session) (string, float64) {
	score := logbook.GoalSimilarity(sess.Goal, old.Goal+" "+old.GivenTitle)
	switch {
	case sess.Issue != "" && sess.Issue == old.Issue:
		return "same issue " + string(sess.Issue), score
	case sess.Pull != "" && sess.Pull == old.Pull:
		return "same pull " + string(sess.Pull), score
	case sess.Subject != "" && sess.Subject == old.Subject:
		return "same subject " + sess.Subject, score
	case score >= logbook.SimilarGoal:
		return "similar goal (" + strconv.FormatFloat(score, 'f', 2, 64) + ")", score
	}
	return "", score
}

// Stats counts a project's sessions (subagents too) started since a time,
// with their total durations, tokens and tool calls, grouped by outcome,
// blocker, harness, agent, actor, model or day, and optionally within that
// by a second grouping (outcomes per day: By day, Then outcome). Days are
// UTC unless p.Zone names another zone. It reads rollups the writes keep,
// so its time does not grow with the sessions in the window.
func (s *Service) Stats(ctx context.Context, c Caller, p StatsParams) ([]logbook.StatsRow, error) {
	project, err := c.projectFor(p.Project)
	if err != nil {
		return nil, err
	}
	if p.By == "" {
		p.By = logbook.ByOutcome
	}
	if !p.By.Valid() {
		return nil, logbook.Invalid("by", "%q is not a grouping; use one of %v", p.By, logbook.StatsGroupings)
	}
	if p.Then != "" && (!p.Then.Valid() || p.Then == p.By) {
		return nil, logbook.Invalid("then", "%q is not a second grouping; use another of %v", p.Then, logbook.StatsGroupings)
	}
	now := s.now()
	if p.Since.IsZero() {
		p.Since = now.AddDate(0, 0, -30)
	}
	return s.store.SessionStats(ctx, store.SessionStatsParams{Project: project, Since: p.Since, By: p.By, Then: p.Then, Now: now, Zone: p.Zone,
		TopLevel: p.TopLevel})
}

// ToolCalls lists tool calls paired with their results by tool_call_id,
// flat, for audit scripts: input, result (clipped to 2,000 characters),
// status (ok, error, denied or asked by the gate, pending) and how long
// the tool took.
func (s *Service) ToolCalls(ctx context.Context, c Caller, p ToolCallParams) (ToolCallPage, error) {
	params := store.ToolCallListParams{SessionID: p.SessionID, Tool: p.Tool, Since: p.Since}
	if p.SessionID != "" {
		sess, err := s.store.SessionGet(ctx, store.SessionGetParams{ID: p.SessionID})
		if err != nil || !c.sees(sess.Project) {
			return ToolCallPage{}, sessionNotFound(p.SessionID, errOr(err, logbook.ErrNotFound))
		}
		if p.Project != "" {
			if err := sessionOf(c, p.Project, sess); err != nil {
				return ToolCallPage{}, err
			}
		}
	} else {
		project, err := c.projectFor(p.Project)
		if err != nil {
			return ToolCallPage{}, err
		}
		params.Project, params.Newest = project, true
	}
	switch {
	case p.Limit == 0:
		p.Limit = 100
	case p.Limit < 0 || p.Limit > logbook.MaxEntryPage:
		return ToolCallPage{}, logbook.Invalid("limit", "give a limit from 1 to %d", logbook.MaxEntryPage)
	}
	if p.Cursor != "" {
		after, err := strconv.ParseInt(p.Cursor, 36, 64)
		if err != nil || after < 0 {
			return ToolCallPage{}, logbook.Invalid("cursor", "this cursor cannot be read; pass next_cursor as it was")
		}
		params.AfterID = after
	}
	params.Limit = p.Limit + 1
	calls, err := s.store.ToolCallList(ctx, params)
	if err != nil {
		return ToolCallPage{}, err
	}
	page := ToolCallPage{ToolCalls: calls}
	if len(calls) > p.Limit {
		page.ToolCalls = calls[:p.Limit]
		page.NextCursor = strconv.FormatInt(page.ToolCalls[p.Limit-1].EntryID, 36)
	}
	for i := range page.ToolCalls {
		finishToolCall(&page.ToolCalls[i])
	}
	return page, nil
}

// finishToolCall derives a paired call's status and duration and clips its result.
func finishToolCall(tc *logbook.ToolCall) {
	tc.Result = logbook.Clip(tc.Result, 2000)
	tc.Status, tc.Reason = logbook.ToolCallStatus(tc.ResultAt != nil, tc.ResultPayload, tc.NotePayload)
	if tc.ResultAt != nil {
		ms := tc.ResultAt.Sub(tc.At).Milliseconds()
		tc.DurationMS = &ms
	}
}
