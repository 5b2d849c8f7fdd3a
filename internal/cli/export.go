package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/importer"
	"github.com/logbookhq/logbook/internal/service"
)

// exportCmd is `logbook export [--db DB] [--project P] [--out FILE]`.
func exportCmd(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	db := fs.String("db", "", "SQLite file or postgres:// URL (env LOGBOOK_DB; default "+defaultDB(env)+")")
	project := fs.String("project", "", "export this project only (default: every project)")
	out := fs.String("out", "", "write the export to this file, which must not exist yet (default: standard output)")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook export [--db DB] [--project P] [--out FILE]

Writes everything the database recorded, or one project's, as JSON Lines:
projects with their command policy and retention, sessions with every
field, entries (superseded ones too), plans, touched files, links, claims
(released ones too), agents, their tasks and rotations, messages, alert
rules (with their webhook secrets) and alerts. It reads one
snapshot while logbook serve keeps running and writing. Restore it into
another database, SQLite or PostgreSQL, with logbook import logbook FILE.

Tokens are not exported: they are secrets that open the database they were
made for; make new ones on the new database with logbook token. Events and
what is derived from the rows (statistics, the search index) are not
exported either; a restore writes the derived data again.

Progress goes to standard error.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "logbook export: unexpected argument %q; write to a file with --out FILE\n", fs.Arg(0))
		return 2
	}
	w := env.Stdout
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: cannot write the export: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	svc, st, err := openService(ctx, env, *db)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	defer st.Close()
	meter := newTransferMeter(env.Stderr, "exported")
	n, err := svc.Export(ctx, service.Caller{Actor: "admin", Admin: true},
		service.ExportParams{Project: *project, Out: w, Progress: meter.update})
	meter.done()
	if err == nil && *out != "" {
		err = w.(*os.File).Sync()
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		if *out != "" {
			os.Remove(*out) // a partial export must not pass for a whole one
		}
		return 1
	}
	what := "every project"
	if *project != "" {
		what = "project " + *project
	}
	fmt.Fprintf(env.Stderr, "exported %s rows of %s from %s\n", importer.Thousands(n), what, describeDB(dbFlagValue(env, *db)))
	return 0
}

// importLogbook is `logbook import logbook [--db DB] FILE`: it restores an
// export into a database.
func importLogbook(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("import logbook", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	db := fs.String("db", "", "SQLite file or postgres:// URL to restore into (env LOGBOOK_DB; default "+defaultDB(env)+")")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook import logbook [--db DB] FILE

Restores a logbook export (logbook export) into a database, SQLite or
PostgreSQL, made and migrated if it is new: "-" reads standard input. Ids
are kept. Rows the database holds already are left as they are (a
project's policy and retention are set as exported), so restoring the same
file again changes nothing, and a restore stopped half way finishes when
run again. Statistics and the search index are written as the rows are.

It refuses rows the database holds as other rows (another database's data
under the same ids): restore into an empty database, or one that holds an
earlier restore of the same data.

Flags:
`)
		fs.PrintDefaults()
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(files) != 1 {
		fmt.Fprintln(env.Stderr, "logbook import logbook: name one export file (or - for standard input)")
		return 2
	}
	var in io.Reader = env.Stdin
	if files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: cannot read the export: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	svc, st, err := openService(ctx, env, *db)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	defer st.Close()
	meter := newTransferMeter(env.Stderr, "restored")
	res, err := svc.Import(ctx, service.Caller{Actor: "admin", Admin: true}, service.ImportParams{In: in, Progress: meter.update})
	meter.done()
	fmt.Fprintln(env.Stdout, importSummary(res, describeDB(dbFlagValue(env, *db))))
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(env.Stderr, "logbook: restore interrupted; run it again to finish (nothing is restored twice)")
		return 1
	case err != nil:
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	return 0
}

// importSummary is the line a restore ends with, e.g.
//
//	restored 1,234 rows into SQLite x.db (1,200 new, 34 there already): entries 1,000, sessions 200, …
func importSummary(res service.ImportResult, into string) string {
	var total, inserted int64
	tables := make([]string, 0, len(res.Rows))
	for t, n := range res.Rows {
		total += n
		inserted += res.Inserted[t]
		tables = append(tables, t)
	}
	sort.Slice(tables, func(i, j int) bool { return res.Rows[tables[i]] > res.Rows[tables[j]] })
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = t + " " + importer.Thousands(res.Rows[t])
	}
	line := fmt.Sprintf("restored %s rows into %s (%s new, %s there already)", importer.Thousands(total), into, importer.Thousands(inserted), importer.Thousands(total-inserted))
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	return line
}

// transferMeter shows an export's or a restore's progress on standard
// error: a line redrawn in place on a terminal, a line every 10 seconds
// elsewhere.
type transferMeter struct {
	w        io.Writer
	verb     string
	terminal bool
	last     time.Time
	shown    bool
	at       service.TransferProgress
}

func newTransferMeter(w io.Writer, verb string) *transferMeter {
	return &transferMeter{w: w, verb: verb, terminal: importer.IsTerminal(w)}
}

func (m *transferMeter) update(p service.TransferProgress) {
	m.at = p
	every := 10 * time.Second
	if m.terminal {
		every = 100 * time.Millisecond
	}
	if now := time.Now(); now.Sub(m.last) >= every {
		m.last = now
		m.draw()
	}
}

func (m *transferMeter) draw() {
	line := fmt.Sprintf("%s %s of %s rows", m.verb, importer.Thousands(m.at.Done), importer.Thousands(m.at.Total))
	if m.at.Total > 0 {
		line += fmt.Sprintf(" (%d%%)", m.at.Done*100/m.at.Total)
	}
	if m.at.Table != "" {
		line += ", now " + m.at.Table
	}
	if m.terminal {
		fmt.Fprintf(m.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(m.w, line)
	}
	m.shown = true
}

// done ends the meter's line on a terminal.
func (m *transferMeter) done() {
	if m.terminal && m.shown {
		m.draw()
		fmt.Fprintln(m.w)
	}
}
