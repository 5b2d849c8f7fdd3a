package sqlstore

import "testing"

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
