package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
)

// stmtCache keeps prepared statements by their SQL text, so a statement is
// parsed once and not once per transaction or query. It matters on SQLite,
// where preparing a statement costs more than running it, and where the
// service's group commit runs hundreds of requests, each the same few
// statements, in a transaction after another. (pgx caches prepared
// statements on its own.)
//
// Statements are prepared on the database, where every transaction reuses
// them. A statement first met inside a transaction cannot be prepared on
// the database then: on SQLite the pool holds a single connection, which
// the transaction has. So it is prepared in the transaction for its
// remaining uses there, and on the database once the transaction ends.
//
// The cache is bounded: queries built from filters come in many shapes, and
// past maxStatements a new shape runs unprepared rather than growing it.
type stmtCache struct {
	db *sql.DB
	// positional prepares each statement with its $N parameters written
	// as ?, when they come in order (see positional).
	positional bool
	mu         sync.Mutex
	shared     map[string]*sql.Stmt
}

const maxStatements = 256

func newStmtCache(db *sql.DB, positional bool) *stmtCache {
	return &stmtCache{db: db, positional: positional, shared: map[string]*sql.Stmt{}}
}

// prepared is the text query is prepared as.
func (c *stmtCache) prepared(query string) string {
	if c.positional {
		return positional(query)
	}
	return query
}

// positional writes query's parameters $1, $2, … $n as ?, when each
// appears once and in that order outside quotes and comments, and returns
// query unchanged otherwise. SQLite binds a ? by its place, but looks each
// $N up by name in a list as long as the statement's parameters: binding
// a multi-row INSERT's hundreds of them took time that grew with their
// square (modernc's bind asks for every parameter's name).
func positional(query string) string {
	var out strings.Builder
	next := 1
	for i := 0; i < len(query); i++ {
		switch c := query[i]; {
		case c == '\'' || c == '"': // a literal or a quoted name: copy to its end
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				return query
			}
			out.WriteString(query[i : i+end+2])
			i += end + 1
		case c == '-' && strings.HasPrefix(query[i:], "--"), c == '/' && strings.HasPrefix(query[i:], "/*"):
			return query // comments are rare in these statements: leave such a one as it is
		case c == '$':
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if n, err := strconv.Atoi(query[i+1 : j]); err != nil || n != next {
				return query
			}
			out.WriteByte('?')
			next++
			i = j - 1
		default:
			out.WriteByte(c)
		}
	}
	return out.String()
}

// get returns query's statement prepared on the database, preparing it
// when prepare is set and there is room. It never holds the lock while
// preparing, which may wait for the connection a transaction has.
func (c *stmtCache) get(ctx context.Context, query string, prepare bool) *sql.Stmt {
	c.mu.Lock()
	stmt, ok := c.shared[query]
	full := len(c.shared) >= maxStatements
	c.mu.Unlock()
	if ok || !prepare || full {
		return stmt
	}
	stmt, err := c.db.PrepareContext(ctx, c.prepared(query))
	if err != nil {
		return nil // run it unprepared; that reports the error
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if first, ok := c.shared[query]; ok { // prepared meanwhile by another caller
		stmt.Close()
		return first
	}
	c.shared[query] = stmt
	return stmt
}

// txStatements are a transaction's prepared statements, and the queries it
// met first, to prepare on the database once it ends.
type txStatements struct {
	cache *stmtCache
	stmts map[string]*sql.Stmt
	later []string
}

// prepareLater prepares on the database the statements the ended
// transaction met first.
func (t *txStatements) prepareLater(ctx context.Context) {
	if t == nil {
		return
	}
	for _, query := range t.later {
		t.cache.get(ctx, query, true)
	}
	t.later = nil
}

// stmt returns query's prepared statement for this executor, or nil when
// statements are not cached here (an engine that caches them itself) or
// the cache is full.
func (e executor) stmt(ctx context.Context, query string) *sql.Stmt {
	if e.cache == nil {
		return nil
	}
	if e.tx == nil {
		return e.cache.get(ctx, query, true)
	}
	if stmt, ok := e.txStmts.stmts[query]; ok {
		return stmt
	}
	var stmt *sql.Stmt
	if shared := e.cache.get(ctx, query, false); shared != nil {
		stmt = e.tx.StmtContext(ctx, shared) // no parsing: it is prepared on the connection
	} else {
		var err error
		if stmt, err = e.tx.PrepareContext(ctx, e.cache.prepared(query)); err != nil {
			return nil // run it unprepared; that reports the error
		}
		e.txStmts.later = append(e.txStmts.later, query)
	}
	e.txStmts.stmts[query] = stmt
	return stmt
}

// statementContext is the context a statement runs under. Inside a
// transaction it is the caller's without its cancellation: a statement,
// once started there, runs to its end, and whether the transaction commits
// is for its owner to decide. SQLite answers a write interrupted inside a
// transaction by rolling the whole transaction back, and under the
// service's group commit that transaction holds other callers' requests:
// one client hanging up must not undo them. (It also spares the SQLite
// driver a goroutine per statement to watch the context.)
func (e executor) statementContext(ctx context.Context) context.Context {
	if e.tx != nil {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

func (e executor) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = e.statementContext(ctx)
	if e.held != nil {
		if err := e.held.before(ctx, e); err != nil {
			return nil, err
		}
	}
	if stmt := e.stmt(ctx, query); stmt != nil {
		return stmt.ExecContext(ctx, args...)
	}
	return e.q.ExecContext(ctx, query, args...)
}

func (e executor) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = e.statementContext(ctx)
	if e.held != nil {
		if err := e.held.before(ctx, e); err != nil {
			return nil, err
		}
	}
	if stmt := e.stmt(ctx, query); stmt != nil {
		return stmt.QueryContext(ctx, args...)
	}
	return e.q.QueryContext(ctx, query, args...)
}

// queryRow runs a query of one row. Where writing what was held back
// before it fails, the failure cannot be returned here: the query then
// fails too (PostgreSQL refuses every statement of a failed transaction),
// or the transaction's commit does (heldWrites.err).
func (e executor) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = e.statementContext(ctx)
	if e.held != nil {
		e.held.before(ctx, e) //nolint:errcheck // kept in e.held.err
	}
	if stmt := e.stmt(ctx, query); stmt != nil {
		return stmt.QueryRowContext(ctx, args...)
	}
	return e.q.QueryRowContext(ctx, query, args...)
}
