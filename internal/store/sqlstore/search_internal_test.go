package sqlstore

import (
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
