package web

import (
	"context"
	"math"
	"net/http"
	"strconv"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// The subagent tree is read a level at a time; these bound the reads.
const (
	treeDepth = 4
	treeNodes = 100
)

// sessionPage is the data of the session view.
type sessionPage struct {
	View     service.SessionView
	Timeline []timelineItem
	Tree     []treeNode
	// FromSeq is where this page of the transcript starts, LastSeq the
	// last entry shown; More says entries follow beyond this page.
	FromSeq, LastSeq int64
	More             bool
	// LiveIDs are the sessions whose events refresh the header and the
	// side panels: this one and the top of its tree.
	LiveIDs string
	// Messages are the newest messages for or from the session.
	Messages []logbook.Message
}

// sessionMessages is how many messages the session page shows.
const sessionMessages = 20

// treeNode is a subagent with its own subagents.
type treeNode struct {
	Session  logbook.Session
	Children []treeNode
}

// showSession shows a session: its header, its transcript as a timeline
// (500 entries a page, superseded ones included and greyed), its subagent
// tree, plan, files, claims and links. ?part=header and ?part=aside draw
// only those parts, for the live refresh.
func (h *handler) showSession(w http.ResponseWriter, r *http.Request, v viewer) {
	id := r.PathValue("id")
	from, err := afterSeq(r)
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	part := r.URL.Query().Get("part")
	params := service.GetParams{AfterSeq: from, All: true}
	if part != "" {
		params.AfterSeq = math.MaxInt64 // the parts show no entries
	}
	view, err := h.svc.GetSession(r.Context(), v.Caller, id, params)
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	if v.Project == "" || v.Caller.Admin {
		v.Project = view.Session.Project
	}
	data := sessionPage{View: view, FromSeq: from, LiveIDs: view.Session.ID + " " + view.Session.Root()}
	data.Tree, err = h.subagentTree(r.Context(), v, view.Subagents)
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	if part != "header" {
		data.Messages, err = h.svc.Messages(r.Context(), v.Caller, ledger.MessagesParams{Project: view.Session.Project,
			SessionID: view.Session.ID, Limit: sessionMessages})
		if err != nil {
			h.renderError(w, r, v, err)
			return
		}
	}
	switch part {
	case "header", "aside":
		h.renderPart(w, r, "session_show", part, v.page("", "", data))
		return
	case "":
	default:
		http.Error(w, "no such part", http.StatusNotFound)
		return
	}
	data.Timeline = buildTimeline(view.Entries)
	data.LastSeq = view.NextAfterSeq
	data.More = data.LastSeq < view.Session.EntryCount && len(view.Entries) == logbook.MaxEntryPage
	h.render(w, r, http.StatusOK, "session_show", v.page(view.Session.Title, "sessions", data))
}

// sessionEntries draws the timeline rows after ?after_seq=N, for the live
// refresh: the rows are escaped here, never built by the script. The
// X-Last-Seq header says where the next request starts.
func (h *handler) sessionEntries(w http.ResponseWriter, r *http.Request, v viewer) {
	after, err := afterSeq(r)
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	view, err := h.svc.GetSession(r.Context(), v.Caller, r.PathValue("id"), service.GetParams{AfterSeq: after, All: true})
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	w.Header().Set("X-Last-Seq", strconv.FormatInt(view.NextAfterSeq, 10))
	h.renderPart(w, r, "session_show", "entries", buildTimeline(view.Entries))
}

// afterSeq reads ?after_seq, 0 when absent.
func afterSeq(r *http.Request) (int64, error) {
	raw := r.URL.Query().Get("after_seq")
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, logbook.Invalid("after_seq", "%q is not an entry number", raw)
	}
	return n, nil
}

// subagentTree reads the subagents of each subagent that has some, level
// by level, at most treeDepth levels and treeNodes sessions.
func (h *handler) subagentTree(ctx context.Context, v viewer, children []logbook.Session) ([]treeNode, error) {
	budget := treeNodes
	var grow func(sessions []logbook.Session, depth int) ([]treeNode, error)
	grow = func(sessions []logbook.Session, depth int) ([]treeNode, error) {
		nodes := make([]treeNode, 0, len(sessions))
		for _, s := range sessions {
			if budget == 0 {
				break
			}
			budget--
			node := treeNode{Session: s}
			if s.SubagentCount > 0 && depth < treeDepth {
				page, err := h.svc.ListSessions(ctx, v.Caller, service.ListParams{Project: s.Project,
					Filter: logbook.SessionFilter{ParentID: s.ID, Subagents: true}, Sort: logbook.SortStarted, Limit: logbook.MaxPageSize})
				if err != nil {
					return nil, err
				}
				if node.Children, err = grow(page.Sessions, depth+1); err != nil {
					return nil, err
				}
			}
			nodes = append(nodes, node)
		}
		return nodes, nil
	}
	return grow(children, 1)
}
