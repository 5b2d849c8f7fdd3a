package logbook_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
)

func TestSearchWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text   string
		words, extra []string
	}{
		{"english", "The login test FAILED, again.", []string{"the", "login", "test", "failed", "again"}, nil},
		{"identifier", "parseConfigFile()", []string{"parse", "config", "file"}, []string{"parseconfigfile"}},
		{"acronym", "HTTPServer IOError getHTTP", []string{"http", "server", "io", "error", "get", "http"}, []string{"httpserver", "ioerror", "gethttp"}},
		{"snake case and path", "internal/store/list_test.go", []string{"internal", "store", "list", "test", "go"}, nil},
		{"digits stay with letters", "sha256 x86_64 v2Beta 404NotFound", []string{"sha256", "x86", "64", "v2", "beta", "404", "not", "found"}, []string{"v2beta", "404notfound"}},
		{"error string", "dial tcp 127.0.0.1:5432: connect: connection refused", []string{"dial", "tcp", "127", "0", "0", "1", "5432", "connect", "connection", "refused"}, nil},
		{"chinese", "数据库连接失败", []string{"数据", "据库", "库连", "连接", "接失", "失败"}, []string{"败"}},
		{"japanese", "テストが失敗しました", []string{"テス", "スト", "トが", "が失", "失敗", "敗し", "しま", "まし", "した"}, []string{"た"}},
		{"one character", "猫", []string{"猫"}, nil},
		{"mixed scripts", "Go言語のparseConfig", []string{"go", "言語", "語の", "parse", "config"}, []string{"の", "parseconfig"}},
		{"accents", "Café naïve", []string{"café", "naïve"}, nil},
		{"punctuation only", "--> != ** //", nil, nil},
	}
	for _, tc := range tests {
		words, extra := logbook.SearchWords(tc.text)
		if got := wordsOf(words); !slices.Equal(got, tc.words) {
			t.Errorf("%s: words %q, want %q", tc.name, got, tc.words)
		}
		if got := wordsOf(extra); !slices.Equal(got, tc.extra) {
			t.Errorf("%s: extra %q, want %q", tc.name, got, tc.extra)
		}
		for _, w := range append(words, extra...) {
			if w.Start < 0 || w.End > len(tc.text) || w.Start >= w.End {
				t.Errorf("%s: %q at [%d,%d) is outside the text", tc.name, w.Word, w.Start, w.End)
			} else if got := strings.ToLower(tc.text[w.Start:w.End]); got != w.Word && !strings.HasPrefix(got, w.Word) {
				t.Errorf("%s: %q at [%d,%d) is %q in the text", tc.name, w.Word, w.Start, w.End, got)
			}
		}
	}
}

func wordsOf(tokens []logbook.SearchToken) []string {
	var out []string
	for _, t := range tokens {
		out = append(out, t.Word)
	}
	return out
}

func TestSearchWordsClipsLongWords(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 200)
	words, _ := logbook.SearchWords("a " + long)
	if len(words) != 2 || len(words[1].Word) > logbook.MaxSearchWord || !strings.HasPrefix(long, words[1].Word) {
		t.Fatalf("a 400-byte word became %q", wordsOf(words))
	}
}

func TestParseSearch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q    string
		want []logbook.SearchTerm
	}{
		{"connection refused", []logbook.SearchTerm{{Words: []string{"connection"}}, {Words: []string{"refused"}}}},
		{`"connection refused" db`, []logbook.SearchTerm{{Words: []string{"connection", "refused"}}, {Words: []string{"db"}}}},
		{"parseConfig", []logbook.SearchTerm{{Words: []string{"parse", "config"}}}},
		{"migrat* parseConf*", []logbook.SearchTerm{{Words: []string{"migrat"}, Prefix: true}, {Words: []string{"parse", "conf"}, Prefix: true}}},
		{`"migrat*"`, []logbook.SearchTerm{{Words: []string{"migrat"}}}},
		{"store/list.go", []logbook.SearchTerm{{Words: []string{"store", "list", "go"}}}},
		{"数据库", []logbook.SearchTerm{{Words: []string{"数据", "据库"}}}},
		{"猫", []logbook.SearchTerm{{Words: []string{"猫"}, Prefix: true}}},
		{`  "unclosed phrase`, []logbook.SearchTerm{{Words: []string{"unclosed", "phrase"}}}},
		{"-- a", []logbook.SearchTerm{{Words: []string{"a"}}}},
	}
	for _, tc := range tests {
		got, err := logbook.ParseSearch(tc.q)
		if err != nil {
			t.Errorf("%q: %v", tc.q, err)
			continue
		}
		if !slices.EqualFunc(got, tc.want, func(a, b logbook.SearchTerm) bool { return slices.Equal(a.Words, b.Words) && a.Prefix == b.Prefix }) {
			t.Errorf("%q: %+v, want %+v", tc.q, got, tc.want)
		}
	}
	for _, q := range []string{"", "   ", "%", "-> != ()", `""`, "ab*", "go te*", strings.Repeat("w ", logbook.MaxQueryWords+1), strings.Repeat("x", logbook.MaxQueryLen+1)} {
		var v *logbook.ValidationError
		if _, err := logbook.ParseSearch(q); !errors.As(err, &v) || v.Field != "q" {
			t.Errorf("%.40q: %v, want a validation error naming q", q, err)
		}
	}
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	terms := func(q string) []logbook.SearchTerm {
		t.Helper()
		ts, err := logbook.ParseSearch(q)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	long := strings.Repeat("filler words here ", 40)
	tests := []struct {
		name, text, q, want string
	}{
		{"short text, whole", "The login test failed:\n\n  connection   refused", "connection refused", "The login test failed: [connection] [refused]"},
		{"phrase of identifier parts", "call parseConfigFile now", "parseConfig", "call [parseConfig]File now"},
		{"prefix", "the migration ran", "migrat*", "the [migration] ran"},
		{"a word is not a prefix", "the migration ran", "migrat migration", "the [migration] ran"},
		{"whole identifier", "call parseConfigFile now", "parseconfigfile", "call [parseConfigFile] now"},
		{"whole identifier's prefix", "call parseConfigFile now", "parseconfig*", "call [parseConfigFile] now"},
		{"chinese", "连接数据库失败了", "数据库", "连接[数据库]失败了"},
		{"one CJK character at the end of a run", "数据库", "库", "数据[库]"},
	}
	for _, tc := range tests {
		parts, ok := logbook.Snippet(tc.text, terms(tc.q))
		if got := logbook.SnippetString(parts, "[", "]"); got != tc.want || !ok {
			t.Errorf("%s: %q (matched %v), want %q", tc.name, got, ok, tc.want)
		}
	}
	// A long text is cut around the match, at words, with ellipses.
	got := logbook.SnippetString(mustSnippet(t, long+"the error: connection refused "+long, terms("refused")), "[", "]")
	if !strings.HasPrefix(got, "…filler") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "the error: connection [refused] filler") ||
		len(got) > logbook.SnippetWidth+20 {
		t.Errorf("cut around the match: %q", got)
	}
	// The best stretch holds the most terms.
	text := "alpha " + long + "alpha beta " + long
	got = logbook.SnippetString(mustSnippet(t, text, terms("alpha beta")), "[", "]")
	if !strings.Contains(got, "[alpha] [beta]") {
		t.Errorf("the snippet %q misses the stretch holding both words", got)
	}
	if parts, ok := logbook.Snippet("nothing here", terms("absent")); ok || logbook.SnippetString(parts, "[", "]") != "nothing here" {
		t.Errorf("no match: %v %v", parts, ok)
	}
}

func mustSnippet(t *testing.T, text string, terms []logbook.SearchTerm) []logbook.SnippetPart {
	t.Helper()
	parts, ok := logbook.Snippet(text, terms)
	if !ok {
		t.Fatalf("no match in %q", text)
	}
	return parts
}

func TestEntrySearchText(t *testing.T) {
	t.Parallel()
	call := logbook.Entry{Kind: logbook.KindToolCall, Tool: "Bash",
		Payload: json.RawMessage(`{"command":"go test ./...","env":{"GOFLAGS":"-count=1"},"args":["-v", 3, true],"description":"run the tests"}`)}
	got := logbook.EntrySearchText(call)
	for _, want := range []string{"Bash", "go test ./...", "-count=1", "-v", "run the tests"} {
		if !strings.Contains(got, want) {
			t.Errorf("the tool call's text %q misses %q", got, want)
		}
	}
	for _, key := range []string{"command", "GOFLAGS", "description"} {
		if strings.Contains(got, key) {
			t.Errorf("the tool call's text %q holds the key %q", got, key)
		}
	}
	// A result with text is found by its text; its JSON repeats it.
	result := logbook.Entry{Kind: logbook.KindToolResult, Tool: "Bash", Text: "PASS", Payload: json.RawMessage(`{"stdout":"PASS","extra":"hidden"}`)}
	if got := logbook.EntrySearchText(result); got != "PASS\nBash" {
		t.Errorf("result text %q", got)
	}
	big := logbook.Entry{Kind: logbook.KindMessage, Text: strings.Repeat("日本語", 30000)}
	if got := logbook.EntrySearchText(big); len(got) > logbook.MaxSearchDocument || !strings.HasPrefix(big.Text, got) {
		t.Errorf("a long text is indexed as %d bytes", len(got))
	}
}

func TestSearchScore(t *testing.T) {
	t.Parallel()
	terms := func(q string) []logbook.SearchTerm {
		ts, err := logbook.ParseSearch(q)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	score := func(text, q string) float64 { return logbook.SearchScore(text, terms(q)) }
	if s := score("nothing to see here", "refused"); s != 0 {
		t.Errorf("no match scores %v, want 0", s)
	}
	filler := strings.Repeat("and more words besides ", 20)
	for _, tc := range []struct{ name, better, worse, q string }{
		{"more often", "refused, refused: connection refused", "connection refused", "refused"},
		{"in less text", "connection refused", "connection refused " + filler, "refused"},
		{"the words together", "the login test failed with a timeout " + filler, "the login page " + filler + " the test failed", "login test"},
		{"a whole word counts", "call parseConfigFile and parseConfig", "call parseConfig", "parseconfig*"},
	} {
		if b, w := score(tc.better, tc.q), score(tc.worse, tc.q); b <= w {
			t.Errorf("%s: %q scores %v, not above %q (%v)", tc.name, tc.better, b, tc.worse, w)
		}
	}
}

// BenchmarkSearchWords cuts a tool result like the load's (English, code
// and a path) into words, as every entry written is:
//
//	go test ./internal/logbook -run '^$' -bench SearchWords
func BenchmarkSearchWords(b *testing.B) {
	text := strings.Repeat("--- FAIL: TestLoginRedirect (0.02s)\n    login_test.go:42: parseConfig returned connection refused at internal/store/pgstore; retrying 3 times\n", 4)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		logbook.SearchWords(text)
	}
}
