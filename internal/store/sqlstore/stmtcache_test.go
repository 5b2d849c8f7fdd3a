package sqlstore

import "testing"

// TestPositional: parameters in order become ?, and any statement whose
// parameters do not come once each and in order, or whose $ sits in a
// literal, keeps its text.
func TestPositional(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT a FROM t WHERE id = $1", "SELECT a FROM t WHERE id = ?"},
		{"INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)", "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"},
		{"UPDATE t SET a = $2 WHERE id = $1", "UPDATE t SET a = $2 WHERE id = $1"}, // out of order
		{"SELECT $1 WHERE a = $1", "SELECT $1 WHERE a = $1"},                       // used twice
		{"SELECT json_extract(x, '$.a') FROM t WHERE id = $1", "SELECT json_extract(x, '$.a') FROM t WHERE id = ?"},
		{`SELECT "we$ird" FROM t WHERE a = 'it''s $2' AND b = $1`, `SELECT "we$ird" FROM t WHERE a = 'it''s $2' AND b = ?`},
		{"SELECT a FROM t WHERE a = $1 AND b = $10", "SELECT a FROM t WHERE a = $1 AND b = $10"}, // $2 missing
		{"SELECT a FROM t -- $1\nWHERE a = $1", "SELECT a FROM t -- $1\nWHERE a = $1"},
		{"SELECT 'open", "SELECT 'open"},
		{"SELECT 1", "SELECT 1"},
	} {
		if got := positional(tc.in); got != tc.want {
			t.Errorf("positional(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
