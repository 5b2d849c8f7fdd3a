package cli

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// claims is `logbook claims`: who holds what now.
func claims(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("claims", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	subject := fs.String("subject", "", "only who holds this subject (or a folder above it)")
	session := fs.String("session", "", "only this session's claims")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: logbook claims [flags]\n\nLists the active claims of a project: who holds which subject until when.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	claims, err := srv.ledger().Claims(ctx, ledger.ClaimsParams{Project: *srv.project, Subject: *subject, SessionID: *session})
	if done, code := answered(env, ledger.ClaimsAnswer{Claims: claims}, err, *asJSON); done {
		return code
	}
	if len(claims) == 0 {
		fmt.Fprintln(env.Stdout, "no active claims")
		return 0
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUBJECT\tACTOR\tSESSION\tEXPIRES IN\tTITLE")
	for _, c := range claims {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Subject, c.Actor, c.SessionID, time.Until(c.ExpiresAt).Round(time.Second), logbook.Clip(c.Title, 50))
	}
	tw.Flush()
	return 0
}
