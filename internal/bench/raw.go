package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// RawResult is the storage engine alone doing the same inserts.
type RawResult struct {
	Rows       int64   `json:"rows"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_sec"`
	// Writers is how many connections inserted side by side: one on an
	// engine that commits one transaction at a time (SQLite), rawWriters
	// on one whose transactions commit side by side (PostgreSQL), as the
	// server's own writes do.
	Writers int `json:"writers"`
}

// rawWriters is how many connections insert side by side into an engine
// whose transactions commit in parallel. One would leave PostgreSQL's
// other cores idle while the server under test keeps them all busy,
// making the ceiling lower than what it bounds.
const rawWriters = 4

// RawInsert inserts rows entries like the load's straight into st, in
// transactions of 5,000 rows with multi-row statements: no HTTP, no rules,
// no per-request transaction. It is the ceiling the server is measured
// against.
func RawInsert(ctx context.Context, st store.Store, project string, rows int64) (RawResult, error) {
	writers := rawWriters
	if st.SingleWriter() {
		writers = 1
	}
	start := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	for w := range writers {
		share := rows / int64(writers)
		if w == 0 {
			share += rows % int64(writers)
		}
		g.Go(func() error { return rawInsertShare(ctx, st, project, w, share) })
	}
	if err := g.Wait(); err != nil {
		return RawResult{}, err
	}
	secs := time.Since(start).Seconds()
	return RawResult{Rows: rows, Seconds: secs, RowsPerSec: float64(rows) / secs, Writers: writers}, nil
}

// rawInsertShare is one writer's part of RawInsert: rows entries, a new
// session every 500.
func rawInsertShare(ctx context.Context, st store.Store, project string, writer int, rows int64) error {
	const perTx, perSession = 5000, 500
	now := time.Now().UTC().Truncate(time.Microsecond)
	var done int64
	var sess logbook.Session
	for done < rows {
		tx, err := st.Begin(ctx)
		if err != nil {
			return err
		}
		batch := make([]logbook.Entry, 0, perTx)
		for end := min(done+perTx, rows); done < end; done++ {
			if done%perSession == 0 { // a new session every 500 rows
				if err := flush(ctx, tx, &batch); err != nil {
					tx.Rollback()
					return err
				}
				sess = logbook.Session{ID: logbook.NewID(now), Project: project, Actor: "raw", Harness: "raw",
					Status: logbook.StatusActive, StartedAt: now, LastSeenAt: now}
				if _, err := tx.SessionInsert(ctx, &sess); err != nil {
					tx.Rollback()
					return fmt.Errorf("raw baseline: %w", err)
				}
			}
			e := LoadEntry(fmt.Sprintf("raw_%d_%d", writer, done/3), int(done))
			e.SessionID, e.Seq, e.At = sess.ID, done%perSession+1, now
			batch = append(batch, e)
		}
		if err := flush(ctx, tx, &batch); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func flush(ctx context.Context, tx store.Tx, batch *[]logbook.Entry) error {
	if len(*batch) == 0 {
		return nil
	}
	_, err := tx.EntryInsert(ctx, *batch)
	*batch = (*batch)[:0]
	return err
}

// FreshStore opens an empty database of the same engine as st, beside
// it, for the raw baseline: inserted into the database the load just
// filled, the raw rows would pay for the load's rows (bigger indexes, and
// PostgreSQL's autovacuum of them running at the same time), and the
// ceiling would sink below what it bounds. dsn is st's --db value (a
// SQLite path or a postgres:// URL); open opens a --db value as logbook
// does, migrating it. The cleanup removes the new database.
func FreshStore(ctx context.Context, st store.Store, dsn string, open func(context.Context, string) (store.Store, error)) (store.Store, func(), error) {
	if st.Engine() != "postgres" {
		path := filepath.Join(filepath.Dir(dsn), "raw-"+filepath.Base(dsn))
		remove := func() {
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(path + suffix)
			}
		}
		remove()
		fresh, err := open(ctx, path)
		if err != nil {
			return nil, nil, fmt.Errorf("raw baseline: a fresh SQLite file beside the load's: %w", err)
		}
		return fresh, func() { fresh.Close(); remove() }, nil
	}
	withDB, ok := st.(interface{ DB() *sql.DB })
	u, err := url.Parse(dsn)
	if !ok || err != nil {
		return nil, nil, fmt.Errorf("raw baseline: cannot make a database beside %s", describeURL(dsn))
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := strings.TrimPrefix(u.Path, "/") + "_raw_" + hex.EncodeToString(b[:])
	if _, err := withDB.DB().ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil {
		return nil, nil, fmt.Errorf("raw baseline: creating the database %s beside the load's (the role needs CREATEDB): %w", name, err)
	}
	drop := func() {
		_, _ = withDB.DB().ExecContext(context.Background(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`)
	}
	u.Path = "/" + name
	fresh, err := open(ctx, u.String())
	if err != nil {
		drop()
		return nil, nil, fmt.Errorf("raw baseline: %w", err)
	}
	return fresh, func() { fresh.Close(); drop() }, nil
}

// describeURL is a database URL without its password, for messages.
func describeURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "the database"
	}
	return u.Redacted()
}
