package service

import (
	"context"
	"time"
)

// statsBackfillBatch is how many sessions one transaction of the
// statistics backfill counts. On SQLite the writer (and the one
// connection every read shares) waits for it: BENCHMARKS.md gives its
// time at a million sessions.
const statsBackfillBatch = 2000

// BackfillStats counts into the statistics' rollups the sessions a
// migration left for it to count (store.Store.StatsBackfill), a batch a
// transaction, so that writes go on between batches. It calls progress,
// when not nil, after each batch with the sessions counted and how many
// there were to count, and returns once every session is counted or ctx
// ends (and once with 0 before the first batch). Statistics are exact
// meanwhile, read from the sessions themselves.
func (s *Service) BackfillStats(ctx context.Context, progress func(counted, total int64)) error {
	total, err := s.store.StatsPending(ctx)
	if err != nil || total == 0 {
		return err
	}
	if progress != nil {
		progress(0, total)
	}
	var counted int64
	for {
		n, finished, err := s.store.StatsBackfill(ctx, statsBackfillBatch)
		if err != nil {
			return err
		}
		counted += int64(n)
		if progress != nil {
			progress(counted, max(total, counted))
		}
		if finished {
			return nil
		}
		if n == 0 { // the writers did not let it in (PostgreSQL): later
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
		}
	}
}

// backfillStats runs BackfillStats for a server, logging where it stands
// every 10 seconds; a failure is logged and retried a minute later.
func (s *Service) backfillStats(ctx context.Context) {
	for ctx.Err() == nil {
		start, last := time.Now(), time.Now()
		var counted int64
		err := s.BackfillStats(ctx, func(n, total int64) {
			counted = n
			if n == 0 || time.Since(last) < 10*time.Second {
				return
			}
			last = time.Now()
			s.log.InfoContext(ctx, "counting sessions into the statistics' rollups", "counted", n, "of", total)
		})
		if err == nil {
			if counted > 0 {
				s.log.InfoContext(ctx, "the statistics' rollups count every session", "counted", counted, "took", time.Since(start).Round(time.Millisecond))
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		s.log.WarnContext(ctx, "counting sessions into the statistics' rollups failed; statistics read the sessions until it succeeds, retrying in a minute",
			"err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
		}
	}
}
