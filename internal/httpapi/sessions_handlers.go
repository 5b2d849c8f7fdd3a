package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// fieldsJSON is logbook.SessionFields as clients send it: issue and pull
// may be numbers.
type fieldsJSON struct {
	logbook.SessionFields
	Issue *flexString `json:"issue"`
	Pull  *flexString `json:"pull"`
}

func (f fieldsJSON) fields() logbook.SessionFields {
	out := f.SessionFields
	out.Issue, out.Pull = f.Issue.ptr(), f.Pull.ptr()
	return out
}

type startRequest struct {
	fieldsJSON
	Project          string `json:"project"`
	Harness          string `json:"harness"`
	HarnessSessionID string `json:"harness_session_id"`
	ParentID         string `json:"parent_id"`
}

func (h *handler) startSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req startRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sess, created, err := h.svc.StartSession(r.Context(), c, service.StartParams{
		Project: req.Project, Harness: req.Harness, HarnessSessionID: req.HarnessSessionID,
		ParentID: req.ParentID, Fields: req.fields(),
	})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, sess)
}

func (h *handler) listSessions(w http.ResponseWriter, r *http.Request, c service.Caller) {
	params, err := listParams(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	page, err := h.svc.ListSessions(r.Context(), c, params)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (h *handler) getSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	after, err := queryInt(r, "after_seq", 0)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	all, err := queryBool(r, "all")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	view, err := h.svc.GetSession(r.Context(), c, r.PathValue("id"), service.GetParams{AfterSeq: after, All: all})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

func (h *handler) updateSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req fieldsJSON
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sess, err := h.svc.UpdateSession(r.Context(), c, r.PathValue("id"), req.fields())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sess)
}

type entriesRequest struct {
	Entries []logbook.Entry `json:"entries"`
	Touched []logbook.Touch `json:"touched"`
}

func (h *handler) appendEntries(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req entriesRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.svc.AppendEntries(r.Context(), c, r.PathValue("id"), service.Batch{Entries: req.Entries, Touched: req.Touched})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) compactSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req entriesRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.svc.Compact(r.Context(), c, r.PathValue("id"), req.Entries)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

type endRequest struct {
	Outcome logbook.Outcome `json:"outcome"`
	Result  string          `json:"result"`
	Blocker logbook.Blocker `json:"blocker"`
	Reason  string          `json:"reason"`
}

func (h *handler) endSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req endRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sess, err := h.svc.EndSession(r.Context(), c, r.PathValue("id"), service.EndParams{
		Outcome: req.Outcome, Result: req.Result, Blocker: req.Blocker, Reason: req.Reason})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sess)
}

type planRequest struct {
	Steps []service.StepInput `json:"steps"`
}

type planResponse struct {
	Plan []logbook.PlanStep `json:"plan"`
}

func (h *handler) setPlan(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req planRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	plan, err := h.svc.SetPlan(r.Context(), c, r.PathValue("id"), req.Steps)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, planResponse{Plan: plan})
}

type stepRequest struct {
	Status logbook.StepStatus `json:"status"`
}

func (h *handler) updatePlanStep(w http.ResponseWriter, r *http.Request, c service.Caller) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		h.writeError(w, r, logbook.Invalid("n", "%q is not a step number; steps are numbered from 1", r.PathValue("n")))
		return
	}
	var req stepRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	plan, err := h.svc.UpdatePlanStep(r.Context(), c, r.PathValue("id"), n, req.Status)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, planResponse{Plan: plan})
}

type goalRequest struct {
	Goal string `json:"goal"`
}

func (h *handler) setGoal(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req goalRequest
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.svc.SetGoal(r.Context(), c, r.PathValue("id"), req.Goal, h.priorWindow)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) stats(w http.ResponseWriter, r *http.Request, c service.Caller) {
	since, err := queryTime(r, "since", time.Now())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	rows, err := h.svc.Stats(r.Context(), c, service.StatsParams{Project: q.Get("project"), Since: since,
		By: logbook.StatsBy(q.Get("by")), Then: logbook.StatsBy(q.Get("then"))})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, statsAnswer{q.Get("by"), rows})
}

// statsAnswer is the answer of GET /v1/stats.
type statsAnswer struct {
	By     string             `json:"by"`
	Groups []logbook.StatsRow `json:"groups"`
}

// toolCalls serves both /v1/sessions/{id}/tool_calls and /v1/tool_calls.
func (h *handler) toolCalls(w http.ResponseWriter, r *http.Request, c service.Caller) {
	q := r.URL.Query()
	since, err := queryTime(r, "since", time.Now())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	limit, err := queryInt(r, "limit", 0)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	session := r.PathValue("id")
	if session == "" {
		session = q.Get("session")
	}
	page, err := h.svc.ToolCalls(r.Context(), c, service.ToolCallParams{Project: q.Get("project"), SessionID: session,
		Tool: q.Get("tool"), Since: since, Limit: int(limit), Cursor: q.Get("cursor")})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (h *handler) deleteSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	force, err := queryBool(r, "force")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.svc.DeleteSession(r.Context(), c, r.PathValue("id"), force)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
