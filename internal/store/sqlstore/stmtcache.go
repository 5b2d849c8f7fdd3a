package sqlstore

import (
	"context"
	"database/sql"
)

// stmtCache keeps a transaction's prepared statements by their SQL text,
// so a statement run again in the same transaction is parsed once. It
// matters on SQLite, where preparing a statement costs more than running
// it, and where the service's group commit runs hundreds of requests, each
// the same few statements, in one transaction. (pgx caches prepared
// statements on its own.) Statements prepared in a transaction close when
// it ends; they are never prepared on the pool, which on SQLite holds a
// single connection that the transaction already has.
//
// The cache is bounded: queries built from filters come in many shapes, and
// past maxStatements a new shape runs unprepared rather than growing it.
type stmtCache map[string]*sql.Stmt

const maxStatements = 256

// stmt returns query's prepared statement in this transaction, or nil when
// statements are not cached here (outside a transaction, or on an engine
// that caches them itself).
func (e executor) stmt(ctx context.Context, query string) *sql.Stmt {
	if e.stmts == nil || e.tx == nil {
		return nil
	}
	if stmt, ok := e.stmts[query]; ok {
		return stmt
	}
	if len(e.stmts) >= maxStatements {
		return nil
	}
	stmt, err := e.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil // run it unprepared; that reports the error
	}
	e.stmts[query] = stmt
	return stmt
}

func (e executor) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if stmt := e.stmt(ctx, query); stmt != nil {
		return stmt.ExecContext(ctx, args...)
	}
	return e.q.ExecContext(ctx, query, args...)
}

func (e executor) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if stmt := e.stmt(ctx, query); stmt != nil {
		return stmt.QueryContext(ctx, args...)
	}
	return e.q.QueryContext(ctx, query, args...)
}

func (e executor) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if stmt := e.stmt(ctx, query); stmt != nil {
		return stmt.QueryRowContext(ctx, args...)
	}
	return e.q.QueryRowContext(ctx, query, args...)
}
