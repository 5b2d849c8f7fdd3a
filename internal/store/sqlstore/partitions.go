package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Entries partitioned by the month of their session (PostgreSQL, migration
// 0026): a range partition of session ids per UTC month, since ids sort by
// the time their session was created (logbook.NewID). Retention empties a
// month whose sessions are all due, instead of deleting its entries one by
// one. Where the engine has no partitions (Dialect.MonthPartitions false),
// or the database was not migrated to them, every method here does nothing.

// entryPartition is one partition of entries: the session ids from lo
// (inclusive; "" for no lower bound) to hi (exclusive; "" for none).
type entryPartition struct {
	name   string
	lo, hi string
}

// partitionLockID is the advisory lock key under which one replica at a
// time makes and drops partitions.
const partitionLockID = 7474_0026

// partitionBound reads a partition's bound as PostgreSQL prints it
// (pg_get_expr of relpartbound): FOR VALUES FROM ('…') TO ('…'), with
// MINVALUE or MAXVALUE for no bound.
var partitionBound = regexp.MustCompile(`^FOR VALUES FROM \((MINVALUE|'[^']*')\) TO \((MAXVALUE|'[^']*')\)$`)

// partitioned reports whether entries is a partitioned table here.
func (e executor) partitioned(ctx context.Context) (bool, error) {
	if !e.d.MonthPartitions {
		return false, nil
	}
	var kind string
	err := e.queryRow(ctx, `SELECT relkind::text FROM pg_class WHERE oid = 'entries'::regclass`).Scan(&kind)
	return kind == "p", e.interpretError(err, "reading how entries are stored")
}

// entryPartitions lists the range partitions of entries, oldest first;
// the default partition is not among them.
func (e executor) entryPartitions(ctx context.Context) ([]entryPartition, error) {
	rows, err := e.query(ctx, `SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'entries'::regclass`)
	if err != nil {
		return nil, e.interpretError(err, "listing the partitions of entries")
	}
	defer rows.Close()
	var parts []entryPartition
	for rows.Next() {
		var name, bound string
		if err := rows.Scan(&name, &bound); err != nil {
			return nil, e.interpretError(err, "listing the partitions of entries")
		}
		m := partitionBound.FindStringSubmatch(bound)
		if m == nil { // DEFAULT
			continue
		}
		unquote := func(s string) string {
			if s == "MINVALUE" || s == "MAXVALUE" {
				return ""
			}
			return strings.Trim(s, "'")
		}
		parts = append(parts, entryPartition{name: name, lo: unquote(m[1]), hi: unquote(m[2])})
	}
	if err := rows.Err(); err != nil {
		return nil, e.interpretError(err, "listing the partitions of entries")
	}
	// Session ids are hexadecimal with dashes in the same places, which
	// every collation sorts as bytes.
	for i := 1; i < len(parts); i++ {
		for j := i; j > 0 && parts[j].lo < parts[j-1].lo; j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
	return parts, nil
}

// monthStart returns the first instant of t's UTC month.
func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// MonthSessionID returns the smallest session id (logbook.NewID) made in
// t's UTC month: where that month's partition of entries begins. The
// migration's SQL function logbook_month_id says the same.
func MonthSessionID(t time.Time) string {
	h := fmt.Sprintf("%012x", monthStart(t).UnixMilli())
	return h[:8] + "-" + h[8:12] + "-0000-0000-000000000000"
}

// EntryPartitionsMaintain makes a partition of entries for each UTC month
// from now's through ahead months later, unless one holds that month
// already, so that the sessions started then have their own; and drops
// the partitions of past months that retention emptied (no session of
// theirs is left). Replicas do it one at a time; dropping waits at most
// 200 ms for the lock it takes on entries (it tries again at the next
// sweep). A month whose ids the default partition holds already (the
// server was down for the months ahead, or a clock was wrong) is left
// there and logged by the caller through the error.
func (s *Store) EntryPartitionsMaintain(ctx context.Context, now time.Time, ahead int) error {
	ok, err := s.partitioned(ctx)
	if err != nil || !ok {
		return err
	}
	return s.inTx(ctx, func(e executor) error {
		if _, err := e.exec(ctx, `SELECT pg_advisory_xact_lock($1)`, partitionLockID); err != nil {
			return e.interpretError(err, "locking the partitions of entries")
		}
		parts, err := e.entryPartitions(ctx)
		if err != nil {
			return err
		}
		var problems []string
		first := monthStart(now)
		for i := 0; i <= ahead; i++ {
			month := first.AddDate(0, i, 0)
			lo, hi := MonthSessionID(month), MonthSessionID(month.AddDate(0, 1, 0))
			if covered(parts, lo, hi) {
				continue
			}
			name := fmt.Sprintf("entries_%04d_%02d", month.Year(), int(month.Month()))
			err := e.withShortLock(ctx, fmt.Sprintf(`CREATE TABLE %s PARTITION OF entries FOR VALUES FROM ('%s') TO ('%s')`, name, lo, hi), 5)
			switch {
			case err == nil:
				parts = append(parts, entryPartition{name: name, lo: lo, hi: hi})
			case e.d.IsLockTimeout != nil && e.d.IsLockTimeout(err):
				// Readers held entries for a second: the next sweep tries again,
				// months ahead of need.
			default:
				// The default partition holds ids of this month already.
				problems = append(problems, fmt.Sprintf("%s: %v", name, err))
				if _, err := e.exec(ctx, `ROLLBACK TO SAVEPOINT short_lock`); err != nil {
					return e.interpretError(err, "making a partition of entries")
				}
			}
		}
		if err := e.dropEmptied(ctx, parts, MonthSessionID(now)); err != nil {
			return err
		}
		if len(problems) > 0 {
			return fmt.Errorf("months of entries left in the default partition, which holds some of their sessions' entries already (move them to a partition of their own by hand): %s", strings.Join(problems, "; "))
		}
		return nil
	})
}

// covered reports whether a partition holds some of the ids from lo to hi.
func covered(parts []entryPartition, lo, hi string) bool {
	for _, p := range parts {
		if (p.hi == "" || lo < p.hi) && (p.lo == "" || p.lo < hi) {
			return true
		}
	}
	return false
}

// dropEmptied drops the partitions wholly before current (the first id
// of this month) that hold no entries and whose months have no sessions
// left: those retention emptied (EntryPartitionPrune).
func (e executor) dropEmptied(ctx context.Context, parts []entryPartition, current string) error {
	for _, p := range parts {
		if p.hi == "" || p.hi > current {
			continue
		}
		var left bool
		err := e.queryRow(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s) OR EXISTS (SELECT 1 FROM sessions WHERE id >= $1 AND id < $2)`, p.name),
			p.lo, p.hi).Scan(&left)
		if err != nil {
			return e.interpretError(err, "reading a partition of entries")
		}
		if left {
			continue
		}
		if err := e.withShortLock(ctx, `DROP TABLE `+p.name, 1); err != nil {
			if e.d.IsLockTimeout != nil && e.d.IsLockTimeout(err) {
				return nil // the next sweep tries again
			}
			return e.interpretError(err, "dropping a partition of entries")
		}
	}
	return nil
}

// EntryPartitionPrune enforces retention a month at a time where entries
// are partitioned: it finds the oldest partition of a past month whose
// sessions are all due (each one's tree is one SessionPruneProject would
// delete now, under its own project's retention), empties it whole, and
// deletes those sessions' trees. It returns the rows deleted per table as
// SessionPruneProject does ("sessions" 0: no month was due). The
// partition's sessions and their roots are locked first, so a late
// heartbeat that revives one either waits for this or keeps the month.
func (e executor) EntryPartitionPrune(ctx context.Context, now time.Time) (deleted map[string]int64, err error) {
	if e.tx == nil { // the rollups change with the sessions, in one transaction
		err = e.root.inTx(ctx, func(e executor) error { deleted, err = e.EntryPartitionPrune(ctx, now); return err })
		return deleted, err
	}
	deleted = map[string]int64{"sessions": 0}
	ok, err := e.partitioned(ctx)
	if err != nil || !ok {
		return deleted, err
	}
	parts, err := e.entryPartitions(ctx)
	if err != nil {
		return nil, err
	}
	current := MonthSessionID(now)
	for _, p := range parts {
		if p.hi == "" || p.hi > current {
			break // sessions may still start in it
		}
		roots, due, err := e.partitionDue(ctx, p, now)
		if err != nil {
			return nil, err
		}
		if !due || len(roots) == 0 {
			continue
		}
		var entries int64
		if err := e.queryRow(ctx, `SELECT COUNT(*) FROM `+p.name).Scan(&entries); err != nil {
			return nil, e.interpretError(err, "counting a partition's entries")
		}
		// TRUNCATE fires no trigger: the entries' documents go first.
		if _, err := e.exec(ctx, `DELETE FROM entry_docs WHERE entry_id IN (SELECT id FROM `+p.name+`)`); err != nil {
			return nil, e.interpretError(err, "unindexing a partition's entries")
		}
		if err := e.withShortLock(ctx, `TRUNCATE `+p.name, 25); err != nil {
			return nil, e.interpretError(err, "emptying a partition of entries")
		}
		deleted, err = e.deleteTrees(ctx, roots)
		if err != nil {
			return nil, err
		}
		deleted["entries"] += entries
		deleted["partitions"] = 1
		return deleted, nil
	}
	return deleted, nil
}

// withShortLock runs statement, which takes a table lock, waiting at most
// 200 ms for it each time and trying up to tries times: a statement that
// waits for a lock holds up every later one that wants the table, so it
// must not wait long behind a slow reader. It returns the last error.
func (e executor) withShortLock(ctx context.Context, statement string, tries int) error {
	var err error
	for range tries {
		if _, err = e.exec(ctx, `SAVEPOINT short_lock`); err != nil {
			return err
		}
		if _, err = e.exec(ctx, `SET LOCAL lock_timeout = '200ms'`); err != nil {
			return err
		}
		_, err = e.exec(ctx, statement)
		if err == nil {
			_, err = e.exec(ctx, `RELEASE SAVEPOINT short_lock`)
			if err == nil {
				_, err = e.exec(ctx, `SET LOCAL lock_timeout TO DEFAULT`)
			}
			return err
		}
		if e.d.IsLockTimeout == nil || !e.d.IsLockTimeout(err) {
			return err
		}
		if _, rollbackErr := e.exec(ctx, `ROLLBACK TO SAVEPOINT short_lock`); rollbackErr != nil {
			return rollbackErr
		}
	}
	return err
}

// partitionDue locks the sessions of partition p and the roots of their
// trees, and says whether every one of those trees is due at now, with
// the roots.
func (e executor) partitionDue(ctx context.Context, p entryPartition, now time.Time) (roots []string, due bool, err error) {
	lo := sql.NullString{String: p.lo, Valid: p.lo != ""}
	rows, err := e.query(ctx, `SELECT id, root_id FROM sessions WHERE ($1::text IS NULL OR id >= $1) AND id < $2 FOR UPDATE`, lo, p.hi)
	if err != nil {
		return nil, false, e.interpretError(err, "locking a month's sessions")
	}
	seen := map[string]bool{}
	for rows.Next() {
		var id, root string
		if err := rows.Scan(&id, &root); err != nil {
			rows.Close()
			return nil, false, e.interpretError(err, "locking a month's sessions")
		}
		if root == "" {
			root = id
		}
		if !seen[root] {
			seen[root] = true
			roots = append(roots, root)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, e.interpretError(err, "locking a month's sessions")
	}
	if len(roots) == 0 {
		return nil, false, nil
	}
	// The condition is prunableRootsIn's, with each root's own project's
	// retention.
	var dueRoots int
	err = e.queryRow(ctx, `SELECT COUNT(*) FROM (SELECT r.id FROM sessions r JOIN projects p ON p.name = r.project
		WHERE r.id = ANY($1) AND p.retention_sessions_days > 0 AND r.status = 'ended' AND r.parent_id = ''
		AND r.closed_at < $2 - p.retention_sessions_days * 86400000000
		AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.root_id = r.id
			AND (c.status <> 'ended' OR c.closed_at IS NULL OR c.closed_at >= $2 - p.retention_sessions_days * 86400000000))
		FOR UPDATE OF r) due`, roots, micros(now)).Scan(&dueRoots)
	if err != nil {
		return nil, false, e.interpretError(err, "checking a month's sessions are due")
	}
	return roots, dueRoots == len(roots), nil
}
