package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

func (h *handler) startSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.StartParams
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sess, created, err := h.svc.StartSession(r.Context(), c, req)
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
	params, err := ledger.ParseListParams(r.URL.Query(), time.Now())
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
	after, err := ledger.QueryInt(r.URL.Query(), "after_seq", 0)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	all, err := ledger.QueryBool(r.URL.Query(), "all")
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
	var req ledger.FieldsBody
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sess, err := h.svc.UpdateSession(r.Context(), c, r.PathValue("id"), req.Fields())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sess)
}

func (h *handler) appendEntries(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.Batch
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.svc.AppendEntries(r.Context(), c, r.PathValue("id"), req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) compactSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.Batch
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

func (h *handler) endSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.EndParams
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	sess, err := h.svc.EndSession(r.Context(), c, r.PathValue("id"), req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sess)
}

func (h *handler) setPlan(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.PlanBody
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	plan, err := h.svc.SetPlan(r.Context(), c, r.PathValue("id"), req.Steps)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.PlanAnswer{Plan: plan})
}

func (h *handler) updatePlanStep(w http.ResponseWriter, r *http.Request, c service.Caller) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		h.writeError(w, r, logbook.Invalid("n", "%q is not a step number; steps are numbered from 1", r.PathValue("n")))
		return
	}
	var req ledger.StepBody
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	plan, err := h.svc.UpdatePlanStep(r.Context(), c, r.PathValue("id"), n, req.Status)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.PlanAnswer{Plan: plan})
}

func (h *handler) setGoal(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.GoalBody
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.svc.SetGoal(r.Context(), c, r.PathValue("id"), req.Goal)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) stats(w http.ResponseWriter, r *http.Request, c service.Caller) {
	params, err := ledger.ParseStatsParams(r.URL.Query(), time.Now())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rows, err := h.svc.Stats(r.Context(), c, params)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.StatsAnswer{By: string(params.By), Groups: rows})
}

// toolCalls serves both /v1/sessions/{id}/tool_calls and /v1/tool_calls.
func (h *handler) toolCalls(w http.ResponseWriter, r *http.Request, c service.Caller) {
	params, err := ledger.ParseToolCallParams(r.URL.Query(), r.PathValue("id"), time.Now())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	page, err := h.svc.ToolCalls(r.Context(), c, params)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (h *handler) deleteSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	force, err := ledger.QueryBool(r.URL.Query(), "force")
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
