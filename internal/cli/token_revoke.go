package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/logbookhq/logbook/internal/service"
)

// tokenRevoke revokes tokens straight in the database: one by its value
// (or id), or every token of an actor in a project. Revocation holds at
// once on every replica: each request looks its token up.
func tokenRevoke(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("token revoke", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	project := fs.String("project", "", "with --actor: revoke every token of this actor in this project")
	actor := fs.String("actor", "", "with --project: the actor whose tokens to revoke")
	db := fs.String("db", "", "SQLite file or postgres:// URL (env LOGBOOK_DB; default "+defaultDB(env)+")")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook token revoke TOKEN|- [--db DB]
       logbook token revoke --project P --actor NAME [--db DB]

Revokes a token, given its value (or its id; "-" reads the value from
standard input, which keeps it out of the process list and the shell
history), or every token of an actor in a project when the value is lost. A revoked token gets 401 from then on, on
every replica. Revoking the admin token makes the server generate a new one
at its next start (unless LOGBOOK_ADMIN_TOKEN names one).

Flags:
`)
		fs.PrintDefaults()
	}
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return parseExit(err)
	}
	byActor := *project != "" || *actor != ""
	if byActor == (len(positional) == 1) || len(positional) > 1 {
		fmt.Fprintln(env.Stderr, "logbook token revoke: give one token, or --project and --actor")
		fs.Usage()
		return 2
	}
	svc, st, err := openService(ctx, env, *db)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	defer st.Close()
	admin := service.Caller{Actor: "admin", Admin: true}
	if byActor {
		n, err := svc.RevokeActorTokens(ctx, admin, *project, *actor)
		if err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
		fmt.Fprintf(env.Stdout, "revoked %d tokens of actor %s in project %s\n", n, *actor, *project)
		return 0
	}
	value := positional[0]
	if value == "-" {
		line, err := bufio.NewReader(env.Stdin).ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintf(env.Stderr, "logbook: reading the token from standard input: %v\n", err)
			return 1
		}
		value = strings.TrimSpace(line)
	}
	t, err := svc.RevokeToken(ctx, admin, value)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	if t.Admin {
		fmt.Fprintf(env.Stdout, "revoked the admin token %s\n", t.ID)
	} else {
		fmt.Fprintf(env.Stdout, "revoked token %s of actor %s in project %s\n", t.ID, t.Actor, t.Project)
	}
	return 0
}
