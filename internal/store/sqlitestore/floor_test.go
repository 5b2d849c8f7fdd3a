package sqlitestore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// BenchmarkHookWriteFloor measures what SQLite itself costs for one hook
// call, in raw SQL on logbook's schema with no service, no HTTP and no Go
// logic of logbook's, in groups of 100 requests a transaction as under
// group commit. It answers "how fast could a hook write be here at all?"
// (see BENCHMARKS.md, issue 9):
//
//   - Today: the statements the service runs — read the whole session row,
//     insert one keyed entry, update the session's counters — each request
//     under its own savepoint.
//   - Bulk: the same writes, with the group's session reads in one
//     SELECT … IN and its entries in multi-row inserts.
//   - InsertOnly: a narrow read of the session with its last seq, and the
//     insert; no session update (counters would be folded in later).
func BenchmarkHookWriteFloor(b *testing.B) {
	const group, sessions = 100, 200
	b.Run("Today", func(b *testing.B) {
		f, ids := newFloorRun(b, sessions)
		f.groups(b, ids, group, func(tx *sql.Tx, batch []string) {
			get := f.prepare(b, tx, `SELECT `+floorColumns+` FROM sessions WHERE id = $1`)
			update := f.prepare(b, tx, `UPDATE sessions SET entry_count = $2, tool_call_count = $3, last_assistant = $4 WHERE id = $1`)
			insert := f.prepare(b, tx, floorInsert(1))
			for _, id := range batch {
				f.exec(b, tx, `SAVEPOINT request`)
				f.scan(b, get, floorColumnCount, id)
				seq := f.next(id)
				f.run(b, insert, f.entry(id, seq)...)
				f.run(b, update, id, seq, seq, "text")
				f.exec(b, tx, `RELEASE request`)
			}
		})
	})
	b.Run("Bulk", func(b *testing.B) {
		f, ids := newFloorRun(b, sessions)
		f.groups(b, ids, group, func(tx *sql.Tx, batch []string) {
			update := f.prepare(b, tx, `UPDATE sessions SET entry_count = $2, tool_call_count = $3, last_assistant = $4 WHERE id = $1`)
			marks := make([]string, len(batch))
			args := make([]any, len(batch))
			for i, id := range batch {
				marks[i], args[i] = fmt.Sprintf("$%d", i+1), id
			}
			f.exec(b, tx, `SAVEPOINT request`)
			rows, err := tx.Query(`SELECT `+floorColumns+` FROM sessions WHERE id IN (`+strings.Join(marks, ", ")+`)`, args...)
			f.drain(b, rows, err, floorColumnCount)
			for c := 0; c < len(batch); c += 10 {
				part := batch[c:min(c+10, len(batch))]
				var values []any
				for _, id := range part {
					values = append(values, f.entry(id, f.next(id))...)
				}
				f.exec(b, tx, floorInsert(len(part)), values...)
			}
			for _, id := range batch {
				f.run(b, update, id, f.seq[id], f.seq[id], "text")
			}
			f.exec(b, tx, `RELEASE request`)
		})
	})
	b.Run("InsertOnly", func(b *testing.B) {
		f, ids := newFloorRun(b, sessions)
		f.groups(b, ids, group, func(tx *sql.Tx, batch []string) {
			get := f.prepare(b, tx, `SELECT project, actor, status, end_reason, last_seen_at, progressed_at,
				(SELECT COALESCE(MAX(seq), 0) FROM entries WHERE session_id = $1) FROM sessions WHERE id = $1`)
			insert := f.prepare(b, tx, floorInsert(1))
			for _, id := range batch {
				f.exec(b, tx, `SAVEPOINT request`)
				f.scan(b, get, 7, id)
				f.run(b, insert, f.entry(id, f.next(id))...)
				f.exec(b, tx, `RELEASE request`)
			}
		})
	})
}

const floorColumns = `id, project, actor, harness, harness_session_id, parent_id, agent,
	title, given_title, goal, task, prompt, model, agent_type, issue, pull, branch,
	head_commit, subject, status, outcome, blocker, end_reason, result,
	started_at, last_seen_at, closed_at, entry_count, message_count, tool_call_count,
	input_tokens, output_tokens, first_assistant, last_assistant, root_id, progressed_at,
	unannounced, announced_at`

var floorColumnCount = strings.Count(floorColumns, ",") + 1

// floorInsert is an insert of rows tool-call entries, 4 parameters a row.
func floorInsert(rows int) string {
	values := make([]string, rows)
	for r := range values {
		values[r] = fmt.Sprintf("($%d, $%d, 1, 'tool_call', '', '', 'Bash', $%d, '{}', '', $%d, NULL, NULL, NULL)", 4*r+1, 4*r+2, 4*r+3, 4*r+4)
	}
	return `INSERT INTO entries (session_id, seq, at, kind, role, text, tool, tool_call_id, payload, commit_sha, key,
		input_tokens, output_tokens, superseded_at) VALUES ` + strings.Join(values, ", ") +
		` ON CONFLICT (session_id, key) WHERE key IS NOT NULL DO NOTHING`
}

// newFloorRun is a run on a fresh database with sessions sessions like
// the load generator's; it returns their ids.
func newFloorRun(b *testing.B, sessions int) (*floorRun, []string) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "floor.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = fmt.Sprintf("01HZZZZZZZZZZZZZZZZZZ%05d", i)
		if _, err := st.DB().Exec(`INSERT INTO sessions (id, project, actor, harness, harness_session_id, title, prompt,
			model, issue, branch, status, started_at, last_seen_at, first_assistant, last_assistant)
			VALUES ($1, 'p', 'alice', 'bench', $1, 'Fix the failing test', 'Fix the failing test in pkg/api #12',
			'm', '12', 'main', 'active', 1, 1, 'The handler returns 500', 'The handler returns 500 when the password is empty')`,
			ids[i]); err != nil {
			b.Fatal(err)
		}
	}
	return &floorRun{db: st.DB()}, ids
}

// floorRun runs the statements of BenchmarkHookWriteFloor, failing the
// benchmark on any error, and numbers each session's entries.
type floorRun struct {
	db      *sql.DB
	seq     map[string]int64
	entries int
}

// groups runs fn on groups of at most size requests (a session each,
// taken in turn from ids), each group in a transaction of its own, until
// b.N requests have run.
func (f *floorRun) groups(b *testing.B, ids []string, size int, fn func(tx *sql.Tx, batch []string)) {
	for start := 0; start < b.N; start += size {
		batch := make([]string, min(size, b.N-start))
		for k := range batch {
			batch[k] = ids[(start+k)%len(ids)]
		}
		tx := f.begin(b)
		fn(tx, batch)
		f.commit(b, tx)
	}
}

func (f *floorRun) begin(b *testing.B) *sql.Tx {
	tx, err := f.db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	return tx
}

func (f *floorRun) commit(b *testing.B, tx *sql.Tx) {
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

func (f *floorRun) prepare(b *testing.B, tx *sql.Tx, query string) *sql.Stmt {
	stmt, err := tx.Prepare(query)
	if err != nil {
		b.Fatal(err)
	}
	return stmt
}

func (f *floorRun) exec(b *testing.B, tx *sql.Tx, query string, args ...any) {
	if _, err := tx.Exec(query, args...); err != nil {
		b.Fatal(err)
	}
}

func (f *floorRun) run(b *testing.B, stmt *sql.Stmt, args ...any) {
	if _, err := stmt.Exec(args...); err != nil {
		b.Fatal(err)
	}
}

func (f *floorRun) scan(b *testing.B, stmt *sql.Stmt, columns int, args ...any) {
	rows, err := stmt.Query(args...)
	f.drain(b, rows, err, columns)
}

// drain reads every row of a query, each column into an any.
func (f *floorRun) drain(b *testing.B, rows *sql.Rows, err error, columns int) {
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	dest := make([]any, columns)
	for i := range dest {
		dest[i] = new(any)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			b.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
}

// next numbers the session's next entry.
func (f *floorRun) next(id string) int64 {
	if f.seq == nil {
		f.seq = map[string]int64{}
	}
	f.seq[id]++
	return f.seq[id]
}

// entry is the parameters of one keyed tool-call entry.
func (f *floorRun) entry(id string, seq int64) []any {
	f.entries++
	return []any{id, seq, fmt.Sprint("call-", f.entries), fmt.Sprint("key-", f.entries)}
}
