package httpapi

import (
	"net/http"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

func (h *handler) ensureAgentSession(w http.ResponseWriter, r *http.Request, c service.Caller) {
	sess, created, err := h.svc.EnsureAgentSession(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("agent"))
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

func (h *handler) rotateAgent(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.RotateBody
	if r.ContentLength != 0 {
		if err := decode(w, r, &req); err != nil {
			h.writeError(w, r, err)
			return
		}
	}
	if req.Project == "" {
		req.Project = r.URL.Query().Get("project")
	}
	rot, err := h.svc.RotateAgent(r.Context(), c, req.Project, r.PathValue("agent"), req.Reason)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, rot)
}

func (h *handler) addTask(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.TaskInput
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.svc.AddTask(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("agent"), req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Added {
		status = http.StatusCreated
	}
	writeJSON(w, status, res)
}

func (h *handler) listTasks(w http.ResponseWriter, r *http.Request, c service.Caller) {
	tasks, err := h.svc.Tasks(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("agent"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.TasksAnswer{Tasks: tasks})
}

func (h *handler) getTask(w http.ResponseWriter, r *http.Request, c service.Caller) {
	task, err := h.svc.Task(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("task_id"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, task)
}

func (h *handler) getAgent(w http.ResponseWriter, r *http.Request, c service.Caller) {
	view, err := h.svc.Agent(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("agent"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

func (h *handler) setRotationPolicy(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var req ledger.RotationPolicyBody
	if err := decode(w, r, &req); err != nil {
		h.writeError(w, r, err)
		return
	}
	var age time.Duration
	if req.MaxAge != "" {
		var ok bool
		if age, ok = logbook.ParseDuration(req.MaxAge); !ok {
			h.writeError(w, r, logbook.Invalid("max_age", "%q is not a duration; write it like 24h or 7d", req.MaxAge))
			return
		}
	}
	a, err := h.svc.SetRotationPolicy(r.Context(), c, r.URL.Query().Get("project"), r.PathValue("agent"), age, req.MaxInputTokens)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (h *handler) addNote(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var p ledger.NoteParams
	if err := decode(w, r, &p); err != nil {
		h.writeError(w, r, err)
		return
	}
	res, err := h.svc.AddNote(r.Context(), c, p)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
