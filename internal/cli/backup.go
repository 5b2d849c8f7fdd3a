package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/logbookhq/logbook/internal/service"
)

// backup writes a consistent copy of the SQLite database to a new file
// while the server keeps running; on PostgreSQL it says how to use pg_dump.
func backup(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	db := fs.String("db", "", "SQLite file or postgres:// URL (env LOGBOOK_DB; default "+defaultDB(env)+")")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook backup [--db DB] PATH

Writes a consistent copy of the database to PATH, a file that must not
exist yet, while logbook serve keeps running and writing (SQLite's VACUUM
INTO reads one snapshot). To restore, stop the server and put the copy in
place of the database file (remove its -wal and -shm files), or start the
server with --db PATH.

On PostgreSQL, use pg_dump; this command prints the exact one.

Flags:
`)
		fs.PrintDefaults()
	}
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(positional) != 1 {
		fmt.Fprintln(env.Stderr, "logbook backup: name one file to write the backup to")
		return 2
	}
	path := positional[0]
	dbValue := dbFlagValue(env, *db)
	if IsPostgres(dbValue) {
		fmt.Fprintf(env.Stderr, `logbook: PostgreSQL is backed up with pg_dump, which takes a consistent snapshot while logbook runs:
  pg_dump --format=custom --file=%[1]q %[2]q
Restore into a new, empty database (then point logbook serve --db at it):
  createdb logbook_restored
  pg_restore --no-owner --dbname=%[3]q %[1]q
`, path, redactPassword(dbValue), "postgres://USER@HOST:5432/logbook_restored")
		return 1
	}
	svc, st, err := openService(ctx, env, dbValue)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	defer st.Close()
	if err := svc.Backup(ctx, service.Caller{Actor: "admin", Admin: true}, path); err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	fmt.Fprintf(env.Stdout, "backed up %s to %s\n", describeDB(dbValue), path)
	return 0
}
