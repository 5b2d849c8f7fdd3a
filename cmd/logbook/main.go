// Command logbook is the session ledger for AI agents. main only wires the
// pieces together: the engines, and the subcommands in package cli.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // time zones for statistics by day (?tz=), whatever the machine has installed

	"github.com/logbookhq/logbook/internal/cli"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/store/sqlstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, OpenStore: openStore, ReadFrom: readFrom,
	}, os.Args[1:])
	stop()
	os.Exit(code)
}

// openStore opens PostgreSQL for a postgres:// URL, else the SQLite file.
func openStore(ctx context.Context, db string) (store.Store, error) {
	if cli.IsPostgres(db) {
		return pgstore.Open(ctx, db)
	}
	return sqlitestore.Open(ctx, db)
}

// readFrom sends a PostgreSQL store's reads to a read replica.
func readFrom(ctx context.Context, st store.Store, readDB string, maxLag time.Duration, log *slog.Logger) error {
	pg, ok := st.(*sqlstore.Store)
	if !ok {
		return errors.New("--read-db needs the store of a PostgreSQL --db")
	}
	return pgstore.ReadFrom(ctx, pg, readDB, maxLag, log)
}
