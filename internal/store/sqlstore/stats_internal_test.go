package sqlstore

import (
	"slices"
	"testing"
)

// TestCombineStatements: statements become one, each but the last a WITH
// query, their parameters numbered on after the ones before, their
// arguments in order; too many parameters together leave them apart.
func TestCombineStatements(t *testing.T) {
	got := combineStatements([]statement{
		{"INSERT INTO a VALUES ($1, $2)", []any{1, 2}},
		{"INSERT INTO b VALUES ($1), ($2), ($3)", []any{3, 4, 5}},
		{"INSERT INTO c VALUES ($1, $2) ON CONFLICT DO NOTHING", []any{6, 7}},
	})
	want := statement{"WITH w0 AS (INSERT INTO a VALUES ($1, $2)), w1 AS (INSERT INTO b VALUES ($3), ($4), ($5)) " +
		"INSERT INTO c VALUES ($6, $7) ON CONFLICT DO NOTHING", []any{1, 2, 3, 4, 5, 6, 7}}
	if len(got) != 1 || got[0].sql != want.sql || !slices.Equal(got[0].args, want.args) {
		t.Errorf("combined:\n%+v\nwant\n%+v", got, want)
	}

	big := make([]any, maxParameters)
	apart := []statement{{"INSERT INTO a VALUES ($1)", []any{1}}, {"INSERT INTO b VALUES ($1)", big}}
	if got := combineStatements(apart); len(got) != 2 || got[0].sql != apart[0].sql || got[1].sql != apart[1].sql {
		t.Errorf("%d parameters in all were combined: %d statements", maxParameters+1, len(got))
	}
	if got := renumber("VALUES ($9, $10), ($11)", 991); got != "VALUES ($1000, $1001), ($1002)" {
		t.Errorf("renumbered: %s", got)
	}
}
