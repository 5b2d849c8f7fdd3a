package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// CreatePrivate makes an empty file at path that only its owner may read
// and write (0600), unless a file is there already, which it leaves as it
// is. A SQLite database holds every transcript, and SQLite would create
// its file with the process's umask (0644 as a rule); it gives the
// file's -wal and -shm companions the file's own mode.
func CreatePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("error creating %s: %w", path, err)
	}
	return f.Close()
}

func (e executor) TokenRevoke(ctx context.Context, idOrHash string, at time.Time) (logbook.Token, error) {
	var t logbook.Token
	var created int64
	var revoked sql.NullInt64
	err := e.queryRow(ctx, `UPDATE tokens SET revoked_at = $2 WHERE (id = $1 OR hash = $1) AND revoked_at IS NULL
		RETURNING id, hash, project, actor, admin, created_at, revoked_at`, idOrHash, micros(at)).
		Scan(&t.ID, &t.Hash, &t.Project, &t.Actor, &t.Admin, &created, &revoked)
	t.CreatedAt, t.RevokedAt = fromMicros(created), fromNullMicros(revoked)
	return t, e.interpretError(err, "revoking token")
}

func (e executor) TokenRevokeActor(ctx context.Context, project, actor string, at time.Time) (int64, error) {
	res, err := e.exec(ctx, `UPDATE tokens SET revoked_at = $3 WHERE project = $1 AND actor = $2 AND NOT admin AND revoked_at IS NULL`,
		project, actor, micros(at))
	if err != nil {
		return 0, e.interpretError(err, "revoking tokens")
	}
	n, err := res.RowsAffected()
	return n, e.interpretError(err, "revoking tokens")
}

func (e executor) Backup(ctx context.Context, path string) error {
	if e.d.BackupSQL == "" {
		return e.d.NoBackup
	}
	if _, ok := e.q.(*sql.DB); !ok {
		return errors.New("a backup cannot run inside a transaction")
	}
	// The copy holds everything the database does: it is made readable by
	// its owner only, before SQLite writes into it (VACUUM INTO takes an
	// empty file).
	if err := CreatePrivate(path); err != nil {
		return err
	}
	if _, err := e.exec(ctx, e.d.BackupSQL, path); err != nil {
		return e.interpretError(err, "backing up the database to "+path)
	}
	return nil
}

func (e executor) SessionPruneEnded(ctx context.Context, before time.Time, limit int) (deleted map[string]int64, err error) {
	if e.tx == nil { // the rollups change with the sessions, in one transaction
		err = e.root.inTx(ctx, func(e executor) error { deleted, err = e.SessionPruneEnded(ctx, before, limit); return err })
		return deleted, err
	}
	roots, err := e.prunableRoots(ctx, before, limit)
	if err != nil {
		return nil, err
	}
	return e.deleteTrees(ctx, roots)
}

func (e executor) SessionPruneProject(ctx context.Context, project string, before time.Time, limit int) (deleted map[string]int64, err error) {
	if e.tx == nil { // the rollups change with the sessions, in one transaction
		err = e.root.inTx(ctx, func(e executor) error { deleted, err = e.SessionPruneProject(ctx, project, before, limit); return err })
		return deleted, err
	}
	roots, err := e.prunableRootsIn(ctx, project, before, limit)
	if err != nil {
		return nil, err
	}
	return e.deleteTrees(ctx, roots)
}

// deleteTrees deletes session trees as SessionDeleteTree does and sums
// the rows deleted per table; "sessions" is there even when 0.
func (e executor) deleteTrees(ctx context.Context, roots []string) (map[string]int64, error) {
	deleted := map[string]int64{"sessions": 0}
	for _, id := range roots {
		n, err := e.SessionDeleteTree(ctx, id)
		if err != nil {
			return nil, err
		}
		for table, rows := range n {
			deleted[table] += rows
		}
	}
	return deleted, nil
}

// prunableRoots finds up to limit top-level sessions that ended before
// before, with every subagent of their tree ended before it too, oldest
// first, project by project (so each query uses the index on
// (project, closed_at)). On PostgreSQL the roots are locked, so a late
// heartbeat that revives one either waits for the deletion or, when it
// commits first, keeps its session out of it.
func (e executor) prunableRoots(ctx context.Context, before time.Time, limit int) ([]string, error) {
	rows, err := e.query(ctx, `SELECT name FROM projects ORDER BY name`)
	if err != nil {
		return nil, e.interpretError(err, "listing projects")
	}
	var projects []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return nil, e.interpretError(err, "listing projects")
		}
		projects = append(projects, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, e.interpretError(err, "listing projects")
	}
	var roots []string
	for _, project := range projects {
		if len(roots) >= limit {
			break
		}
		found, err := e.prunableRootsIn(ctx, project, before, limit-len(roots))
		if err != nil {
			return nil, err
		}
		roots = append(roots, found...)
	}
	return roots, nil
}

// prunableRootsIn is prunableRoots in one project.
func (e executor) prunableRootsIn(ctx context.Context, project string, before time.Time, limit int) ([]string, error) {
	rows, err := e.query(ctx, `SELECT id FROM sessions s
		WHERE project = $1 AND closed_at < $2 AND status = 'ended' AND parent_id = ''
		AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.root_id = s.id AND (c.status <> 'ended' OR c.closed_at IS NULL OR c.closed_at >= $2))
		ORDER BY closed_at, id LIMIT $3`+e.d.ForUpdate, project, micros(before), limit)
	if err != nil {
		return nil, e.interpretError(err, "finding ended sessions")
	}
	defer rows.Close()
	var roots []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, e.interpretError(err, "finding ended sessions")
		}
		roots = append(roots, id)
	}
	return roots, e.interpretError(rows.Err(), "finding ended sessions")
}
