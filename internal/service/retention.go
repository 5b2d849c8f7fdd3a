package service

import (
	"context"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Retention returns a project's retention: how many days after a session
// ended it is deleted, and its tool results and large payloads removed
// (zero: kept for ever).
func (s *Service) Retention(ctx context.Context, c Caller, project string) (logbook.Retention, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return logbook.Retention{}, err
	}
	r, err := s.store.ProjectRetentionGet(ctx, project)
	if isNotFound(err) {
		return logbook.Retention{}, nil
	}
	return r, err
}

// SetRetention sets a project's retention, which the sweeper enforces
// from its next round. Only the admin may.
func (s *Service) SetRetention(ctx context.Context, c Caller, project string, r logbook.Retention) (logbook.Retention, error) {
	if !c.Admin {
		return logbook.Retention{}, fmt.Errorf("only the admin token sets a project's retention: %w", logbook.ErrForbidden)
	}
	project, err := logbook.Name("project", project, logbook.MaxID)
	if err != nil {
		return logbook.Retention{}, err
	}
	if project == "" {
		return logbook.Retention{}, logbook.Invalid("project", "name the project")
	}
	if err := r.Validate(); err != nil {
		return logbook.Retention{}, err
	}
	err = s.inTx(ctx, func(tx *work) error {
		if err := tx.ProjectEnsure(ctx, project, s.now()); err != nil {
			return err
		}
		return tx.ProjectRetentionSet(ctx, project, r)
	})
	return r, err
}

// RetentionResult says what enforcing retention removed.
type RetentionResult struct {
	// Sessions counts the sessions deleted (subagents too), Entries
	// their entries.
	Sessions, Entries int64
	// Payloads counts the entries whose tool output or large payload was
	// removed.
	Payloads int64
	// Messages counts the messages between agents deleted: those sent
	// longer ago than the project keeps its ended sessions.
	Messages int64
	// Partitions counts the months of entries emptied whole (PostgreSQL),
	// whose sessions and entries Sessions and Entries count too.
	Partitions int64
	// Batches is how many transactions it took.
	Batches int
}

// retentionTrimBatch is how many entries one transaction of payload
// retention trims at most (a session with more takes several).
const retentionTrimBatch = 500

// enforceRetention applies every project's retention (see
// logbook.Retention), a small batch per transaction so writers wait
// milliseconds, each batch under the sweep lock, so one replica at a time
// does it. It goes on until nothing is left to do, another replica holds
// the lock, or ctx ends.
func (s *Service) enforceRetention(ctx context.Context, now time.Time) (RetentionResult, error) {
	var res RetentionResult
	projects, err := s.store.ProjectRetentionList(ctx)
	if err != nil {
		return res, err
	}
	if len(projects) > 0 {
		if err := s.enforceRetentionByMonth(ctx, now, &res); err != nil {
			return res, err
		}
	}
	for _, p := range projects {
		if days := p.Retention.SessionsDays; days > 0 {
			before := now.Add(-time.Duration(days) * 24 * time.Hour)
			won, err := s.sweepBatches(ctx, &res, func(tx *work) (map[string]int64, bool, error) {
				deleted, err := tx.SessionPruneProject(ctx, p.Project, before, DefaultPruneBatch)
				return deleted, deleted["sessions"] > 0, err
			})
			if err != nil || !won {
				return res, err
			}
			// Messages go as old: read long ago, or never to be.
			won, err = s.sweepBatches(ctx, &res, func(tx *work) (map[string]int64, bool, error) {
				deleted, err := tx.MessagePrune(ctx, p.Project, before, DefaultPruneBatch)
				return map[string]int64{"messages": deleted}, deleted > 0, err
			})
			if err != nil || !won {
				return res, err
			}
		}
		if days := p.Retention.PayloadsDays; days > 0 {
			before := now.Add(-time.Duration(days) * 24 * time.Hour)
			won, err := s.sweepBatches(ctx, &res, func(tx *work) (map[string]int64, bool, error) {
				trimmed, sessions, err := trimPayloads(ctx, tx, p.Project, before, now)
				return map[string]int64{"payloads": int64(trimmed)}, sessions > 0, err
			})
			if err != nil || !won {
				return res, err
			}
		}
	}
	return res, nil
}

// enforceRetentionByMonth empties, one per transaction, the partitions of
// entries (PostgreSQL) whose sessions are all due, which costs a month's
// sessions rather than all their entries; the rows of partly due months
// are left to the per-project batches. The emptied partitions are dropped
// at the end (EntryPartitionsMaintain).
func (s *Service) enforceRetentionByMonth(ctx context.Context, now time.Time, res *RetentionResult) error {
	dropped := false
	for {
		var deleted map[string]int64
		won, err := s.sweepBatch(ctx, func(tx *work) (err error) {
			deleted, err = tx.EntryPartitionPrune(ctx, now)
			return err
		})
		if err != nil || !won {
			return err
		}
		if deleted["sessions"] == 0 {
			break
		}
		dropped = true
		res.Batches++
		res.Partitions += deleted["partitions"]
		res.Sessions += deleted["sessions"]
		res.Entries += deleted["entries"]
		s.removed("sessions", deleted["sessions"])
		s.removed("entries", deleted["entries"])
	}
	if !dropped {
		return nil
	}
	return s.store.EntryPartitionsMaintain(ctx, now, store.PartitionMonthsAhead)
}

// trimPayloads trims up to retentionTrimBatch entries of the project's
// sessions that ended before before, and marks the sessions it finished
// trimmed. It says how many entries it trimmed, and how many sessions it
// worked on (0: nothing was left).
func trimPayloads(ctx context.Context, tx *work, project string, before, now time.Time) (trimmed, sessions int, err error) {
	ids, err := tx.SessionListTrimmable(ctx, project, before, retentionTrimBatch)
	if err != nil {
		return 0, 0, err
	}
	for _, id := range ids {
		if trimmed == retentionTrimBatch {
			break
		}
		left := retentionTrimBatch - trimmed
		entries, err := tx.EntryListTrimmable(ctx, id, left)
		if err != nil {
			return 0, 0, err
		}
		for i := range entries {
			logbook.TrimEntry(&entries[i])
		}
		if err := tx.EntryUpdateContent(ctx, entries); err != nil {
			return 0, 0, err
		}
		trimmed += len(entries)
		sessions++
		if len(entries) < left { // nothing of it is left to trim
			if err := tx.SessionMarkTrimmed(ctx, id, now); err != nil {
				return 0, 0, err
			}
		}
	}
	return trimmed, sessions, nil
}

// sweepBatch runs fn in a transaction of its own if this process wins the
// sweep lock, and says whether it did.
func (s *Service) sweepBatch(ctx context.Context, fn func(tx *work) error) (won bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	err = s.inTx(ctx, func(tx *work) error {
		if won, err = tx.SweepLock(ctx); err != nil || !won {
			return err
		}
		return fn(tx)
	})
	return won, err
}

// sweepBatches runs batch, each time in a sweep transaction of its own
// (sweepBatch), until it finds nothing more to do, another replica holds
// the sweep lock (won is false: the sweep stops), or it fails. batch says
// what it removed, by the names of Options.Removed ("sessions",
// "entries", "payloads", "messages"), and whether it did anything; once
// its transaction commits, that is counted in res and told to
// Options.Removed.
func (s *Service) sweepBatches(ctx context.Context, res *RetentionResult, batch func(tx *work) (removed map[string]int64, did bool, err error)) (won bool, err error) {
	for {
		var removed map[string]int64
		var did bool
		won, err := s.sweepBatch(ctx, func(tx *work) (err error) {
			removed, did, err = batch(tx)
			return err
		})
		if err != nil || !won || !did {
			return won, err
		}
		res.Batches++
		for what, n := range removed {
			if res.count(what, n) {
				s.removed(what, n)
			}
		}
	}
}

// count adds n removed of what, a name of Options.Removed, and reports
// whether it is one (a prune also says what it removed of other tables).
func (r *RetentionResult) count(what string, n int64) bool {
	switch what {
	case "sessions":
		r.Sessions += n
	case "entries":
		r.Entries += n
	case "payloads":
		r.Payloads += n
	case "messages":
		r.Messages += n
	default:
		return false
	}
	return true
}

// removed counts what retention removed (see Options.Removed).
func (s *Service) removed(what string, n int64) {
	if s.removedFunc != nil && n > 0 {
		s.removedFunc(what, n)
	}
}
