package cli

import (
	"context"
	"flag"
	"fmt"
)

// migrateCmd creates or updates the schema and exits. serve does the same
// on start; this is for deployments that migrate as a separate step.
func migrateCmd(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	db := fs.String("db", "", "SQLite file or postgres:// URL (env LOGBOOK_DB; default "+defaultDB(env)+")")
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	dbValue := dbFlagValue(env, *db)
	st, err := env.OpenStore(ctx, dbValue)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	st.Close()
	fmt.Fprintf(env.Stdout, "database %s is up to date\n", describeDB(dbValue))
	return 0
}
