package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// prune deletes sessions that ended long ago, in small transactions, while
// the server keeps running.
func prune(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	db := fs.String("db", "", "SQLite file or postgres:// URL (env LOGBOOK_DB; default "+defaultDB(env)+")")
	endedBefore := fs.String("ended-before", "", "delete sessions that ended longer ago than this: 90d, 720h (required)")
	batch := fs.Int("batch", service.DefaultPruneBatch, "session trees deleted per transaction")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook prune --ended-before 90d [--batch N] [--db DB]

Deletes the sessions that ended longer ago than --ended-before, with their
subagents, entries, plans, claims, touches, links and events. A session
still going, or with a subagent still going, is kept. It works in small
transactions, so a server running on the same database keeps taking writes
meanwhile; stopping it (Ctrl-C) keeps what was pruned so far.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "logbook prune: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	age, ok := logbook.ParseDuration(*endedBefore)
	if !ok || age == 0 {
		fmt.Fprintf(env.Stderr, "logbook prune: --ended-before %q is not an age; write it like 90d or 720h\n", *endedBefore)
		return 2
	}
	svc, st, err := openService(ctx, env, *db)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	defer st.Close()
	before := time.Now().Add(-age)
	res, err := svc.Prune(ctx, service.Caller{Actor: "admin", Admin: true}, before, *batch)
	fmt.Fprintf(env.Stdout, "pruned %d sessions that ended before %s (%d entries) in %d transactions\n",
		res.Sessions, before.UTC().Format(time.RFC3339), res.Entries, res.Batches)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	return 0
}
