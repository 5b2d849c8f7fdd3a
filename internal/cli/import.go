package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/importer"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// Import is `logbook import claude|codex [flags] [PATH…]`: it reads
// Claude Code or Codex transcripts from disk into logbook, through a server
// or straight into a database (--db).
func Import(ctx context.Context, env Env, args []string) int {
	usage := `Usage: logbook import claude|codex [--db DB | --server URL --token T] [--project P] [PATH…]
       logbook import logbook [--db DB] FILE     (restore a logbook export; see logbook import logbook -h)

Imports agent transcripts: Claude Code session files (default folder
~/.claude/projects) or Codex CLI rollouts (default ~/.codex/sessions). A PATH
is a .jsonl file or a folder searched for them. Importing again adds only
what is new, so a transcript that grew is topped up.

Sessions go to the server at --server (env LOGBOOK_URL) as the token's actor,
into the token's project (with the admin token: a project per working
directory), or with --db straight into a database, owned by the actor
"import", in a project per working directory. --project puts them all in one.
A session whose last line is older than --live is ended ("imported"); a more
recent one may still be running and is left open.

Flags:
`
	if len(args) > 0 && args[0] == "logbook" {
		return importLogbook(ctx, env, args[1:])
	}
	if len(args) == 0 || (args[0] != string(importer.Claude) && args[0] != string(importer.Codex)) {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(env.Stdout, usage)
			return 0
		}
		fmt.Fprint(env.Stderr, "logbook import: say what to import: claude or codex transcripts, or a logbook export\n\n"+usage)
		return 2
	}
	format := importer.Format(args[0])
	fs := flag.NewFlagSet("import "+args[0], flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	db := fs.String("db", "", "import straight into this database (SQLite file or postgres:// URL) instead of a server")
	live := fs.Duration("live", importer.DefaultLiveWindow, "leave open the sessions whose last line is more recent than this")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, usage)
		fs.PrintDefaults()
	}
	paths, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return parseExit(err)
	}
	if len(paths) == 0 {
		dir, err := defaultTranscripts(format)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		paths = []string{dir}
	}

	opts := importer.Options{Format: format, Project: *srv.project, LiveWindow: *live}
	var sink ledger.Ledger
	if *db != "" {
		svc, st, err := openService(ctx, env, *db)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		defer st.Close()
		sink = svc.For(service.Caller{Actor: importer.ImportActor, Admin: true})
		opts.ProjectFromCwd = true
	} else {
		c := srv.client()
		hasProject, err := tokenHasProject(ctx, c)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		sink = c.Ledger()
		opts.ProjectFromCwd = !hasProject
	}

	terminal := importer.IsTerminal(env.Stderr)
	var bar *importer.Bar
	var last importer.Progress
	if terminal {
		bar = importer.NewBar(env.Stderr)
		opts.Progress = func(p importer.Progress) { last = p; bar.Update(p) }
	}
	opts.Warn = func(err error) {
		if terminal {
			fmt.Fprint(env.Stderr, "\r\033[K") // clear the bar's line
		}
		fmt.Fprintf(env.Stderr, "logbook: warning: %v\n", err)
	}
	im, err := importer.New(sink, opts)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 2
	}
	counts, err := im.Run(ctx, paths)
	if bar != nil {
		last.Counts = counts
		bar.Done(last)
	}
	fmt.Fprintln(env.Stdout, importer.Summary(counts))
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(env.Stderr, "logbook: import interrupted; run it again to finish (nothing is imported twice)")
		return 1
	case err != nil:
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	return 0
}

// defaultTranscripts is where a harness keeps its transcripts.
func defaultTranscripts(format importer.Format) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home folder to find transcripts in (%v); name a PATH", err)
	}
	if format == importer.Codex {
		return filepath.Join(home, ".codex", "sessions"), nil
	}
	return filepath.Join(home, ".claude", "projects"), nil
}

// tokenHasProject asks the server whether the token names a project: a
// list without a project is refused, naming the project field, only for
// the admin token, which has none. It also checks early that the server
// answers and takes the token.
func tokenHasProject(ctx context.Context, c *client.Client) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err := c.Ledger().ListSessions(ctx, ledger.ListParams{Limit: 1})
	var invalid *logbook.ValidationError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &invalid) && invalid.Field == "project":
		return false, nil
	case errors.Is(err, logbook.ErrUnauthorized):
		return false, fmt.Errorf("%w (set LOGBOOK_TOKEN or --token; or import straight into a database with --db)", err)
	}
	return false, err
}
