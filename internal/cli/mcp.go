package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"

	"github.com/logbookhq/logbook/internal/mcp"
)

const mcpUsage = `Usage: logbook mcp [flags]

Serves logbook's MCP tools on standard input and output, for harnesses that
start MCP servers as processes (Claude Code, Claude Desktop, Codex CLI):
start_session, set_goal, record, plan, classify_command, claim, release,
complete_task, list_sessions, get_session. Every tool calls the logbook
server's /v1 API with the token, so the agent acts as the token's actor in
its project; with --project (LOGBOOK_PROJECT) the tools act in that project
when the agent names none, which an admin token, having no project of its
own, needs. logbook serve serves the same tools over HTTP at /mcp.

It logs to standard error; standard output carries the protocol only.

Flags:
`

// MCP is 'logbook mcp': the MCP tools over standard input and output,
// calling a logbook server. It returns when the client closes its end.
func MCP(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := serverFlags{
		server: fs.String("server", env.Getenv("LOGBOOK_URL"), "logbook server URL (env LOGBOOK_URL; default http://127.0.0.1:7474)"),
		token:  tokenFlag(fs, env, "bearer `token` the tools act with (default: env LOGBOOK_TOKEN)"),
	}
	project := fs.String("project", env.Getenv("LOGBOOK_PROJECT"), "the project tools act in when the agent names none (env LOGBOOK_PROJECT; default: the token's)")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, mcpUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if *srv.token == "" {
		fmt.Fprintln(env.Stderr, "logbook mcp: no token: set LOGBOOK_TOKEN (or --token) to a token of the server; make one with 'logbook token create'")
		return 2
	}
	log := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := mcp.ServeStdio(ctx, mcp.WithProject(srv.client().Ledger(), *project), env.Stdin, env.Stdout, log)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(env.Stderr, "logbook mcp: %v\n", err)
		return 1
	}
	return 0
}
