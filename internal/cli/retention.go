package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/logbookhq/logbook/internal/logbook"
)

// retention is `logbook retention`: how long a project keeps ended
// sessions and their tool output, and with the admin token, setting it.
func retention(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("retention", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the API's JSON")
	sessionsDays := fs.Int("sessions-days", 0, "delete a session this many days after it ended, with everything of its (0: never)")
	payloadsDays := fs.Int("payloads-days", 0, "remove tool output and payloads over 4 KB this many days after a session ended (0: never)")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook retention [--project P] [--sessions-days N] [--payloads-days M]

Shows how long the project keeps its ended sessions (--sessions-days) and
their tool results and large payloads (--payloads-days); summaries, results
and the rest of a transcript stay until the session goes. Given either
flag, sets both (the admin token only; a flag left out is 0, kept for
ever). The server's sweeper enforces it every minute, in small batches;
logbook prune deletes old sessions once, by hand.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "logbook retention: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *srv.project == "" {
		fmt.Fprintln(env.Stderr, "logbook retention: name the project: --project P (or LOGBOOK_PROJECT)")
		return 2
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "sessions-days" || f.Name == "payloads-days" })
	l := srv.ledger()
	var r logbook.Retention
	var err error
	if set {
		r, err = l.SetRetention(ctx, *srv.project, logbook.Retention{SessionsDays: *sessionsDays, PayloadsDays: *payloadsDays})
	} else {
		r, err = l.Retention(ctx, *srv.project)
	}
	if done, code := answered(env, r, err, *asJSON); done {
		return code
	}
	days := func(n int) string {
		if n == 0 {
			return "for ever"
		}
		return fmt.Sprintf("%d days after it ended", n)
	}
	fmt.Fprintf(env.Stdout, "project %s keeps an ended session %s, and its tool output and large payloads %s\n",
		*srv.project, days(r.SessionsDays), days(r.PayloadsDays))
	return 0
}
