package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

// piped is a statement that answers no rows, for execPiped: what it is
// doing (for its error) and whether it must change a row.
type piped struct {
	statement
	doing string
	one   bool // changing no row is ErrNotFound
}

// execPiped runs statements that answer no rows, in order. Inside a
// transaction on an engine that pipelines (Dialect.Pipeline: PostgreSQL)
// they go in one round trip, where each would be one of its own: a group
// writes its session rows, one UPDATE each, with one. An error stops the
// statements after it and, inside a transaction, fails it.
func (e executor) execPiped(ctx context.Context, statements []piped) error {
	if e.conn == nil || e.d.Pipeline == nil || len(statements) < 2 {
		for _, st := range statements {
			res, err := e.exec(ctx, st.sql, st.args...)
			if err != nil {
				return e.interpretError(err, st.doing)
			}
			if st.one {
				if err := e.expectOne(res, st.doing); err != nil {
					return err
				}
			}
		}
		return nil
	}
	ctx = e.statementContext(ctx)
	if e.held != nil {
		if err := e.held.before(ctx, e); err != nil {
			return err
		}
	}
	queries, args := make([]string, len(statements)), make([][]any, len(statements))
	for i, st := range statements {
		queries[i], args[i] = st.sql, st.args
	}
	var changed []int64
	err := e.conn.Raw(func(driverConn any) error {
		var err error
		changed, err = e.d.Pipeline(ctx, driverConn, queries, args)
		return err
	})
	if err != nil {
		doing := "running statements"
		if len(changed) < len(statements) {
			doing = statements[len(changed)].doing
		}
		return e.interpretError(err, doing)
	}
	if len(changed) != len(statements) {
		return fmt.Errorf("%s: the pipeline answered %d statements of %d", statements[0].doing, len(changed), len(statements))
	}
	for i, st := range statements {
		if st.one && changed[i] == 0 {
			return e.interpretError(sql.ErrNoRows, st.doing)
		}
	}
	return nil
}
