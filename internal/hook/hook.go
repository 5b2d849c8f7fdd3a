package hook

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/logbookhq/logbook/internal/client"
)

// maxPayloadBytes bounds what is read of a hook payload; Claude Code's
// largest (a PostToolUse of a big Read) stay far below it.
const maxPayloadBytes = 64 << 20

// Hook runs hook invocations: one per process in the binary. Problems are
// reported on Stderr and never stop the agent.
type Hook struct {
	cfg    Config
	api    *client.Client
	stderr io.Writer
}

// New returns a Hook with cfg (zero durations take the defaults) that
// reports problems on stderr.
func New(cfg Config, stderr io.Writer) *Hook {
	cfg = cfg.withDefaults()
	api := client.New(cfg.URL, cfg.Token)
	api.HTTP = &http.Client{Timeout: cfg.Deadline}
	return &Hook{cfg: cfg, api: api, stderr: stderr}
}

// report writes a problem on stderr, where Claude Code shows it in its
// verbose mode without treating the hook as failed.
func (h *Hook) report(format string, args ...any) {
	fmt.Fprintf(h.stderr, "logbook hook: "+format+"\n", args...)
}

// spool opens the spool, reporting when it cannot.
func (h *Hook) spool() *Spool {
	s, err := OpenSpool(h.cfg.SpoolDir)
	if err != nil {
		h.report("%v", err)
		return nil
	}
	return s
}

// save writes records to the spool. When there is no spool to write to,
// it delivers them directly, so they are lost only when the server is down
// too, and says so.
func (h *Hook) save(ctx context.Context, spool *Spool, recs []Record) {
	if len(recs) == 0 {
		return
	}
	if spool != nil {
		err := spool.Append(recs...)
		if err == nil {
			return
		}
		h.report("%v; sending the records directly", err)
	}
	done, rejected, err := newSender(h.api.Ledger(), nil).deliver(ctx, recs)
	for _, r := range rejected {
		h.report("the server refused a %s record: %s", r.Record.Event, r.Error)
	}
	if err != nil {
		h.report("%d records are lost: there is no spool to keep them and the server did not take them (%v)", len(recs)-done, err)
	}
}

// deliver drains the spool within ctx and reports what went wrong.
func (h *Hook) deliver(ctx context.Context, spool *Spool) DrainReport {
	if spool == nil {
		return DrainReport{}
	}
	rep, err := spool.Drain(ctx, newSender(h.api.Ledger(), spool).deliver)
	if err != nil {
		h.report("%v", err)
	}
	for _, r := range rep.Rejected {
		h.report("the server refused a %s record for good (%s); it is set aside in %s",
			r.Record.Event, r.Error, spool.path(rejectedFile))
	}
	if rep.Bad > 0 {
		h.report("%d unreadable spool lines were set aside in %s", rep.Bad, spool.path(badFile))
	}
	if rep.Remaining > 0 && rep.Err != nil {
		h.report("%d records wait in %s for the server (%v); the next hook call or `logbook hook flush` delivers them",
			rep.Remaining, spool.path(spoolFile), rep.Err)
	}
	return rep
}

// Flush delivers the spool, waiting for the server as long as ctx allows
// (the configured deadline does not apply), and says what it did.
func (h *Hook) Flush(ctx context.Context) (DrainReport, error) {
	spool, err := OpenSpool(h.cfg.SpoolDir)
	if err != nil {
		return DrainReport{}, err
	}
	api := *h.api
	api.HTTP = &http.Client{} // ctx bounds it
	rep, err := spool.Drain(ctx, newSender(api.Ledger(), spool).deliver)
	return rep, err
}

// SpoolDir is the folder of the spool this hook uses.
func (h *Hook) SpoolDir() string { return h.cfg.SpoolDir }
