package httpapi

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

func (h *handler) sendMessage(w http.ResponseWriter, r *http.Request, c service.Caller) {
	var p ledger.SendParams
	if err := decode(w, r, &p); err != nil {
		h.writeError(w, r, err)
		return
	}
	m, err := h.svc.SendMessage(r.Context(), c, p)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, m)
}

func (h *handler) listMessages(w http.ResponseWriter, r *http.Request, c service.Caller) {
	p, err := ledger.ParseMessagesParams(r.URL.Query())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	msgs, err := h.svc.Messages(r.Context(), c, p)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.MessagesAnswer{Messages: msgs})
}

func (h *handler) readInbox(w http.ResponseWriter, r *http.Request, c service.Caller) {
	msgs, err := h.svc.ReadInbox(r.Context(), c, r.PathValue("id"))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ledger.MessagesAnswer{Messages: msgs})
}

// markMessage returns the handler that marks a message read or acked.
func (h *handler) markMessage(mark logbook.MessageMark) func(http.ResponseWriter, *http.Request, service.Caller) {
	return func(w http.ResponseWriter, r *http.Request, c service.Caller) {
		m, err := h.svc.MarkMessage(r.Context(), c, r.PathValue("id"), mark)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, m)
	}
}
