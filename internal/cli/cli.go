// Package cli holds logbook's subcommands. Each one is a function of an Env
// (arguments, standard streams, environment, how to open a store), so it
// runs the same from main and from a test.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/buildinfo"
	"github.com/logbookhq/logbook/internal/store"
)

// Env is what a subcommand may use of the world.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads an environment variable (os.Getenv in main).
	Getenv func(string) string
	// OpenStore opens the database a --db value names: a postgres:// URL or
	// a SQLite file path. main wires the engines in.
	OpenStore func(ctx context.Context, db string) (store.Store, error)
	// ReadFrom sends a PostgreSQL store's reads to the read replica at
	// readDB (logbook serve --read-db) while it is at most maxLag behind.
	// main wires it in; nil where no engine can.
	ReadFrom func(ctx context.Context, st store.Store, readDB string, maxLag time.Duration, log *slog.Logger) error
}

// command is one subcommand.
type command struct {
	name, summary string
	run           func(ctx context.Context, env Env, args []string) int
}

func commands() []command {
	return []command{
		{"serve", "run the server (web UI, API, MCP) on an embedded SQLite file or PostgreSQL", serve},
		{"token", "make bearer tokens for actors in projects", token},
		{"migrate", "create or update the database schema, then exit", migrateCmd},
		{"classify", "say how risky a shell command is (needs no server)", func(ctx context.Context, env Env, args []string) int {
			return Classify(ctx, env, args)
		}},
		{"sessions", "list, show, follow and count sessions on a server", sessions},
		{"search", "search every transcript of a project on a server", search},
		{"claims", "list who holds what on a server", claims},
		{"send", "send a message to a session, an agent or an actor of a project", send},
		{"inbox", "list messages between agents, mark one read or acknowledged", inbox},
		{"hook", "Claude Code and Codex hooks: record sessions, answer PreToolUse, install them", Hook},
		{"mcp", "serve the MCP tools on stdin/stdout, calling a logbook server", MCP},
		{"import", "read Claude Code or Codex transcripts from disk into logbook, or restore an export", Import},
		{"export", "write a database's recorded data, or a project's, as JSON Lines to restore elsewhere", exportCmd},
		{"why", "show the recorded sessions behind a line of code (git blame)", Why},
		{"backup", "copy the SQLite database while it runs (PostgreSQL: prints pg_dump)", backup},
		{"prune", "delete ended sessions older than a cutoff, in small batches", prune},
		{"retention", "show or set how long a project keeps ended sessions and their tool output", retention},
		{"alerts", "a project's alert rules and the alerts they posted to webhooks: list, add, rm, test, log", alerts},
		{"prices", "show the prices a project's model calls are costed at, or set its own", prices},
		{"bench", "measure: realistic agent load, the raw engine, read paths", benchCmd},
		{"version", "print logbook's version and the commit it was built from (also --version)", version},
	}
}

// Run runs the subcommand args name and returns the process exit code.
func Run(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(env.Stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		return version(ctx, env, args[1:])
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	fmt.Fprintf(env.Stderr, "logbook: unknown command %q\n\n", args[0])
	usage(env.Stderr)
	return 2
}

// version is `logbook version`: the module version and the commit the
// binary was built from.
func version(_ context.Context, env Env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(env.Stderr, "Usage: logbook version\n\nPrints logbook's module version and the commit it was built from.")
		if args[0] == "-h" || args[0] == "--help" {
			return 0
		}
		return 2
	}
	fmt.Fprintln(env.Stdout, "logbook "+buildinfo.Read().String())
	return 0
}

func usage(w io.Writer) {
	fmt.Fprint(w, `logbook is the flight recorder and coordination desk for AI agents.

Usage:
  logbook <command> [flags]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run 'logbook <command> --help' for a command's flags.

Environment:
  LOGBOOK_ADDR          address to listen on (default 127.0.0.1:7474)
  LOGBOOK_DB            database: a SQLite file path or a postgres:// URL
  LOGBOOK_ADMIN_TOKEN   the admin token to create on first start
  LOGBOOK_PUBLIC_URL    the https:// address browsers reach the server at, behind a proxy
  LOGBOOK_URL           the server client commands talk to (default http://127.0.0.1:7474)
  LOGBOOK_TOKEN         the bearer token client commands send
  LOGBOOK_PROJECT       the project client commands ask about
`)
}

// defaultDB is the SQLite file used when neither --db nor LOGBOOK_DB says
// otherwise: logbook.db in the user's data directory
// ($XDG_DATA_HOME/logbook, else ~/.local/share/logbook).
func defaultDB(env Env) string {
	dir := env.Getenv("XDG_DATA_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(dir, "logbook", "logbook.db")
}

// dbFlagValue is the database to use: the flag, else LOGBOOK_DB, else the default.
func dbFlagValue(env Env, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := env.Getenv("LOGBOOK_DB"); v != "" {
		return v
	}
	return defaultDB(env)
}

// IsPostgres reports whether db names a PostgreSQL database.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// describeDB says which database db is, without a password.
func describeDB(db string) string {
	if IsPostgres(db) {
		return "PostgreSQL " + redactPassword(db)
	}
	return "SQLite " + db
}

func redactPassword(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	userinfo, host, ok := strings.Cut(rest, "@")
	if !ok {
		return url
	}
	if user, _, hasPass := strings.Cut(userinfo, ":"); hasPass {
		return scheme + "://" + user + ":xxxxx@" + host
	}
	return url
}

func logger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// parseExit is the exit code for a flag parsing error: 0 for -h/--help,
// which printed the usage, else 2.
func parseExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// parseInterleaved parses flags given before, between and after the
// positional arguments (logbook backup PATH --db X as well as logbook
// backup --db X PATH) and returns the positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
