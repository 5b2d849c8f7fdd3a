package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// RawResult is the storage engine alone doing the same inserts.
type RawResult struct {
	Rows       int64   `json:"rows"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_sec"`
}

// RawInsert inserts rows entries like the load's straight into st, in
// transactions of 5,000 rows with multi-row statements: no HTTP, no rules,
// no per-request transaction. It is the ceiling the server is measured
// against.
func RawInsert(ctx context.Context, st store.Store, project string, rows int64) (RawResult, error) {
	const perTx, perSession = 5000, 500
	now := time.Now().UTC().Truncate(time.Microsecond)
	start := time.Now()
	var done int64
	var sess logbook.Session
	for done < rows {
		tx, err := st.Begin(ctx)
		if err != nil {
			return RawResult{}, err
		}
		batch := make([]logbook.Entry, 0, perTx)
		for end := min(done+perTx, rows); done < end; done++ {
			if done%perSession == 0 { // a new session every 500 rows
				if err := flush(ctx, tx, &batch); err != nil {
					tx.Rollback()
					return RawResult{}, err
				}
				sess = logbook.Session{ID: logbook.NewID(now), Project: project, Actor: "raw", Harness: "raw",
					Status: logbook.StatusActive, StartedAt: now, LastSeenAt: now}
				if _, err := tx.SessionInsert(ctx, &sess); err != nil {
					tx.Rollback()
					return RawResult{}, fmt.Errorf("raw baseline: %w", err)
				}
			}
			e := LoadEntry(fmt.Sprintf("raw_%d", done/3), int(done))
			e.SessionID, e.Seq, e.At = sess.ID, done%perSession+1, now
			batch = append(batch, e)
		}
		if err := flush(ctx, tx, &batch); err != nil {
			tx.Rollback()
			return RawResult{}, err
		}
		if err := tx.Commit(); err != nil {
			return RawResult{}, err
		}
	}
	secs := time.Since(start).Seconds()
	return RawResult{Rows: rows, Seconds: secs, RowsPerSec: float64(rows) / secs}, nil
}

func flush(ctx context.Context, tx store.Tx, batch *[]logbook.Entry) error {
	if len(*batch) == 0 {
		return nil
	}
	_, err := tx.EntryInsert(ctx, *batch)
	*batch = (*batch)[:0]
	return err
}
