package hook

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
)

// Status is what `logbook hook status` shows: where a hook started in a
// folder reports to, whether the server takes its records, and what waits
// in or was set aside by the spool.
type Status struct {
	// Project is the project the hook names for sessions in the folder
	// ("" leaves it to the token's project); ProjectFrom says why.
	Project     string
	ProjectFrom string
	URL         string
	TokenSet    bool
	// ServerErr is why the server would not take the folder's records
	// (down, a token for another project…); nil when it would.
	ServerErr error
	SpoolDir  string
	// Pending counts the records waiting in the spool.
	Pending  int
	SetAside SetAside
	// Err is a failure to read the spool.
	Err error
}

// statusDeadline bounds the server check of Status.
const statusDeadline = 5 * time.Second

// Status says where a hook started in the folder wd reports to, asks the
// server whether it would take the folder's records, and reads the spool.
func (h *Hook) Status(ctx context.Context, wd string) Status {
	st := Status{URL: h.cfg.URL, TokenSet: h.cfg.Token != "", SpoolDir: h.cfg.SpoolDir}
	g := gitLookup(ctx, wd)
	st.Project = projectName(h.cfg.Project, g)
	switch {
	case h.cfg.Project != "":
		st.ProjectFrom = "LOGBOOK_PROJECT"
	case g.TopLevel != "":
		st.ProjectFrom = "the name of the git folder " + g.TopLevel + "; LOGBOOK_PROJECT overrides it"
	default:
		st.ProjectFrom = "the token's project: " + wd + " is in no git folder and LOGBOOK_PROJECT is not set"
	}
	ctx, cancel := context.WithTimeout(ctx, statusDeadline)
	defer cancel()
	_, st.ServerErr = h.api.Ledger().ListSessions(ctx, ledger.ListParams{Project: st.Project, Limit: 1})
	spool, err := OpenSpool(h.cfg.SpoolDir)
	if err != nil {
		st.Err = err
		return st
	}
	if st.Pending, err = spool.Pending(); err != nil {
		st.Err = err
	}
	if st.SetAside, err = spool.SetAside(); err != nil {
		st.Err = err
	}
	return st
}

// OK reports whether the hook's records reach the server and nothing is
// set aside or waiting.
func (st Status) OK() bool {
	return st.ServerErr == nil && st.Err == nil && st.Pending == 0 && st.SetAside.Empty()
}

// Print writes the status for a person to read.
func (st Status) Print(w io.Writer) {
	project := fmt.Sprintf("%q", st.Project)
	if st.Project == "" {
		project = "the token's project"
	}
	fmt.Fprintf(w, "project:   %s (from %s)\n", project, st.ProjectFrom)
	fmt.Fprintf(w, "server:    %s", st.URL)
	switch {
	case !st.TokenSet:
		fmt.Fprintf(w, ": LOGBOOK_TOKEN is not set; records wait in the spool until it is ('logbook token create')\n")
	case st.ServerErr != nil:
		fmt.Fprintf(w, ": records are not taken: %v\n", st.ServerErr)
	default:
		fmt.Fprintf(w, ": reachable; the token may record in this project\n")
	}
	fmt.Fprintf(w, "spool:     %s: %d %s waiting\n", st.SpoolDir, st.Pending, plural(st.Pending, "record", "records"))
	if st.Err != nil {
		fmt.Fprintf(w, "           %v\n", st.Err)
	}
	if st.SetAside.Empty() {
		fmt.Fprintf(w, "set aside: nothing\n")
		return
	}
	fmt.Fprintf(w, "set aside: %s\n", st.SetAside.Summary(st.SpoolDir))
	for _, r := range st.SetAside.Rejected {
		status := ""
		if r.Status != 0 {
			status = fmt.Sprintf(" (%d)", r.Status)
		}
		fmt.Fprintf(w, "  %s  %-17s project %-14q session %s%s: %s\n", r.At.Format(time.RFC3339), r.Record.Event,
			r.Record.Session.Project, r.Record.Session.HarnessSessionID, status, r.Error)
	}
	fmt.Fprintf(w, "Fix the cause (the project, the token), then delete %s and %s once read: they are never sent again.\n",
		filepath.Join(st.SpoolDir, rejectedFile), filepath.Join(st.SpoolDir, badFile))
}
