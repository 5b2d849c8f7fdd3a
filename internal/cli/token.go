package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/logbookhq/logbook/internal/service"
)

// token makes tokens straight in the database: what an operator runs on
// the server's machine. Over HTTP the admin uses POST /v1/tokens.
func token(ctx context.Context, env Env, args []string) int {
	if len(args) > 0 && args[0] == "revoke" {
		return tokenRevoke(ctx, env, args[1:])
	}
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprint(env.Stderr, "Usage: logbook token create --project P --actor NAME [--db DB]\n       logbook token revoke TOKEN|-|ID [--db DB]\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return 0
		}
		return 2
	}
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	project := fs.String("project", "", "project the token is for (made the first time it is named)")
	actor := fs.String("actor", "", "actor the token stands for: a person or a service account")
	db := fs.String("db", "", "SQLite file or postgres:// URL (env LOGBOOK_DB; default "+defaultDB(env)+")")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook token create --project P --actor NAME [--db DB]

Makes a bearer token for an actor in a project and prints it. Tokens are
stored hashed: keep the printed value, it cannot be shown again.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return parseExit(err)
	}
	svc, st, err := openService(ctx, env, *db)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	defer st.Close()
	value, err := svc.CreateToken(ctx, service.Caller{Actor: "admin", Admin: true}, *project, *actor)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	fmt.Fprintln(env.Stdout, value)
	return 0
}
