package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// claims is `logbook claims`: who holds what now.
func claims(ctx context.Context, env Env, args []string) int {
	if len(args) > 0 && args[0] == "check" {
		return claimsCheck(ctx, env, args[1:])
	}
	fs := flag.NewFlagSet("claims", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	subject := fs.String("subject", "", "only who holds this subject (or a folder above it)")
	session := fs.String("session", "", "only this session's claims")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: logbook claims [flags]\n       logbook claims check [flags] PATH...\n\nLists the active claims of a project: who holds which subject until when.\n\nFlags:\n")
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
		subject := c.Subject
		if c.Auto {
			subject += " (by a write)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", subject, c.Actor, c.SessionID, time.Until(c.ExpiresAt).Round(time.Second), logbook.Clip(c.Title, 50))
	}
	tw.Flush()
	return 0
}

// claimsCheck is `logbook claims check PATH...`: the claims gate's
// decision on writing the paths, as the hooks get it. It exits 1 when
// another live session holds one of them (deny or ask), so a script can
// stop.
func claimsCheck(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("claims check", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	srv := addServerFlags(fs, env)
	session := fs.String("session", "", "the session that would write: its own claims, its parent's and its subagents' pass")
	asJSON := fs.Bool("json", false, "print the API's JSON")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, "Usage: logbook claims check [flags] PATH...\n\n"+
			"Asks the claims gate whether PATHs (relative to the repository's top folder) may be written:\n"+
			"defer when no other live session holds them, else the project's claims guard (deny or ask)\n"+
			"naming the holder; exit status 1 then. It never claims: auto claims are taken by writes.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(env.Stderr, "logbook claims check: name the paths to check")
		return 2
	}
	p := ledger.GateParams{Project: *srv.project, SessionID: *session, Paths: fs.Args()}
	ans, err := srv.ledger().Gate(ctx, p)
	if done, code := answered(env, ans, err, *asJSON); done {
		if code == 0 && len(ans.Held) > 0 && ans.Decision != classify.Defer {
			return 1
		}
		return code
	}
	if len(ans.Held) == 0 {
		fmt.Fprintf(env.Stdout, "%s: no other live session holds %s\n", ans.Decision, strings.Join(ans.Paths, ", "))
		return 0
	}
	if ans.Decision == classify.Defer { // the guard is off: claims are advisory
		h := ans.Held[0]
		fmt.Fprintf(env.Stdout, "defer: the project's claims guard is off; %s is held by session %s of %s\n", h.Path, h.Holder.SessionID, h.Holder.Actor)
		return 0
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", ans.Decision, ans.Reason)
	return 1
}
