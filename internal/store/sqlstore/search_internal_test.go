package sqlstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

// TestTSLexeme: a word becomes one quoted lexeme, its quotes and
// backslashes doubled, so no word can end the lexeme or escape a quote.
func TestTSLexeme(t *testing.T) {
	for word, want := range map[string]string{
		"plain":      `'plain'`,
		"it's":       `'it''s'`,
		`back\slash`: `'back\\slash'`,
		`'\`:         `'''\\'`,
		"":           `''`,
		"日本":         `'日本'`,
	} {
		if got := tsLexeme(word); got != want {
			t.Errorf("tsLexeme(%q) = %s, want %s", word, got, want)
		}
	}
}

// TestFTSMatchOfExpandedPrefixes: a prefix given the words it begins is
// searched for as those words ORed, each at the end of the term's phrase;
// a prefix without them stays a prefix.
func TestFTSMatchOfExpandedPrefixes(t *testing.T) {
	m := searchMatch{tag: "t", meta: []string{"k0ab"}, terms: []logbook.SearchTerm{
		{Words: []string{"parse", "conf"}, Prefix: true},
		{Words: []string{"node"}},
		{Words: []string{"zeta"}, Prefix: true},
	}}
	if got, want := ftsMatch(m), `{body} : ("tparse tconf" * AND "tnode" AND "tzeta" *) AND {meta} : ("k0ab")`; got != want {
		t.Errorf("not expanded:\n got %s\nwant %s", got, want)
	}
	m.whole = [][]string{{"tconfig", "tconfigs"}, nil, nil}
	if got, want := ftsMatch(m), `{body} : (("tparse tconfig" OR "tparse tconfigs") AND "tnode" AND "tzeta" *) AND {meta} : ("k0ab")`; got != want {
		t.Errorf("expanded:\n got %s\nwant %s", got, want)
	}
}

// TestTSVector: a document's tsvector text lists each word once, in the
// order it first appears, with its positions from 1 (the first 256, every
// one past 16383 counted as 16383, no position twice), then the meta words
// that are not words of the text, without positions. Checked against a
// plain reading of that rule on random documents with words repeated past
// both limits.
func TestTSVector(t *testing.T) {
	plain := func(d searchDoc) string {
		positions := map[string][]int{}
		var order []string
		for i, w := range d.words {
			if _, seen := positions[w]; !seen {
				order = append(order, w)
			}
			if len(positions[w]) < 256 {
				positions[w] = append(positions[w], min(i+1, 16383))
			}
		}
		var parts []string
		for _, w := range order {
			var ps []string
			for _, p := range slices.Compact(positions[w]) {
				ps = append(ps, strconv.Itoa(p))
			}
			parts = append(parts, tsLexeme(w)+":"+strings.Join(ps, ","))
		}
		for _, w := range d.meta {
			if _, ok := positions[w]; !ok {
				parts = append(parts, tsLexeme(w))
			}
		}
		if len(parts) == 0 {
			return ""
		}
		return strings.Join(parts, " ") + " "
	}
	if got := tsvector(searchDoc{words: []string{"a", "b", "a", "it's"}, meta: []string{"k0", "b"}}); got != `'a':1,3 'b':2 'it''s':4 'k0' ` {
		t.Errorf("tsvector of a small document = %q", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		length := rng.IntN(40)
		if n%20 == 0 {
			length = 17000 + rng.IntN(500) // past the last position PostgreSQL keeps
		}
		d := searchDoc{}
		for range length {
			d.words = append(d.words, fmt.Sprint("w", rng.IntN(1+rng.IntN(30))))
		}
		for range rng.IntN(4) {
			d.meta = append(d.meta, fmt.Sprint("w", rng.IntN(40)))
		}
		if got, want := tsvector(d), plain(d); got != want {
			t.Fatalf("tsvector of %d words, meta %v:\n got %.300q\nwant %.300q", length, d.meta, got, want)
		}
	}
}

// BenchmarkTSVector writes the tsvector of a document like a tool
// result's, as every entry written on PostgreSQL is:
//
//	go test ./internal/store/sqlstore -run '^$' -bench TSVector
func BenchmarkTSVector(b *testing.B) {
	text := strings.Repeat("--- FAIL: TestLoginRedirect (0.02s)\n    login_test.go:42: parseConfig returned connection refused at internal/store/pgstore; retrying 3 times\n", 4)
	d := newDoc(text, docContext{meta: []string{"k0project", "k1actor"}}, "k2kind")
	for b.Loop() {
		tsvector(d)
	}
}
