package httpapi_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestListSearchBounds sends the searches an adversarial probe sent (500
// words, one word of 50,000 characters, which SQLite refused as "Expression
// tree is too large" and "LIKE or GLOB pattern too complex") and others a
// database may choke on: each is a 400 naming the bound, or a page, never
// a 500, on both engines. A search at the bounds still finds its session.
func TestListSearchBounds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")

		// A title of as many words as a search may hold, the last of them
		// long enough to bring the search to its length bound.
		words := make([]string, logbook.MaxQueryWords)
		for i := range words {
			words[i] = "w" + strconv.Itoa(i)
		}
		short := strings.Join(words[:len(words)-1], " ") + " "
		words[len(words)-1] = strings.Repeat("é", logbook.MaxQueryLen-len([]rune(short)))
		atBounds := strings.Join(words, " ")
		c.do("POST", "/v1/sessions", alice, map[string]any{"project": "demo", "goal": "100% of a_b \\ " + atBounds}).expect(t, 201)
		c.do("POST", "/v1/sessions", alice, map[string]any{"project": "demo", "title": "another session"}).expect(t, 201)

		list := func(q string) response {
			t.Helper()
			return c.do("GET", "/v1/sessions?project=demo&q="+url.QueryEscape(q), alice, nil)
		}
		found := func(q string) int {
			t.Helper()
			r := list(q).expect(t, 200)
			return len(r.body["sessions"].([]any))
		}
		if n := found(atBounds); n != 1 {
			t.Errorf("a search at the bounds (%d words, %d characters) found %d sessions, want 1", logbook.MaxQueryWords, logbook.MaxQueryLen, n)
		}
		// LIKE's wildcards and escape are searched for as text.
		for q, want := range map[string]int{"100%": 1, "a_b": 1, `\`: 1, "%": 1, "_": 1, "a%b": 0, "x_y": 0} {
			if n := found(q); n != want {
				t.Errorf("q=%q found %d sessions, want %d", q, n, want)
			}
		}

		for _, tc := range []struct {
			name, q, bound string
		}{
			{"500Words", strings.Repeat("word ", 500), strconv.Itoa(logbook.MaxQueryWords) + " words"},
			{"OneMoreWord", atBounds[:len(atBounds)-len(words[len(words)-1])] + "x y", strconv.Itoa(logbook.MaxQueryWords) + " words"},
			{"50000Characters", strings.Repeat("x", 50000), strconv.Itoa(logbook.MaxQueryLen) + " characters"},
			{"OneMoreCharacter", atBounds + "é", strconv.Itoa(logbook.MaxQueryLen) + " characters"},
		} {
			r := list(tc.q)
			r.problem(t, 400, "q")
			if !strings.Contains(r.raw, tc.bound) {
				t.Errorf("%s: the problem does not name the bound %q: %s", tc.name, tc.bound, r.raw)
			}
		}

		// Bytes a database may refuse in text are a 400 or an empty page.
		for _, q := range []string{"a\x00b", "\xff\xfe", "\xc0\xae", "\x01\x7f", strings.Repeat("%", logbook.MaxQueryLen), strings.Repeat(`\`, logbook.MaxQueryLen)} {
			if r := list(q); r.status != 200 && r.status != 400 {
				t.Errorf("q=%q: status %d, want 200 or 400; %s", q, r.status, r.raw)
			}
		}
	})
}

// TestAbsurdTokenCounts: two entries of 2^63-1 input tokens wrapped a
// session's counter to -2 and the stats sums with it; such a count is now
// a 400 naming the field and the bound, and stores nothing.
func TestAbsurdTokenCounts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		id := c.do("POST", "/v1/sessions", alice, `{"project":"demo","harness":"h"}`).expect(t, 201).body["id"].(string)
		batch := func(tokens string) string {
			entry := `{"kind":"message","role":"assistant","text":"hi","usage":{"input_tokens":` + tokens + `,"output_tokens":1}}`
			return `{"entries":[` + entry + `,` + entry + `]}`
		}

		r := c.do("POST", "/v1/sessions/"+id+"/entries", alice, batch("9223372036854775807"))
		r.problem(t, 400, "entries[0].usage.input_tokens")
		if !strings.Contains(r.raw, strconv.FormatInt(logbook.MaxTokens, 10)) {
			t.Errorf("the problem does not name the bound: %s", r.raw)
		}
		c.do("POST", "/v1/sessions/"+id+"/entries", alice, batch("9223372036854775808")).problem(t, 400, "entries.usage.input_tokens")

		c.do("POST", "/v1/sessions/"+id+"/entries", alice, batch(strconv.FormatInt(logbook.MaxTokens, 10))).expect(t, 200)
		sess := c.do("GET", "/v1/sessions/"+id, alice, nil).expect(t, 200).body["session"].(map[string]any)
		if sess["entry_count"] != float64(2) || sess["input_tokens"] != float64(2*logbook.MaxTokens) {
			t.Errorf("entry_count %v, input_tokens %v; want 2 and %d", sess["entry_count"], sess["input_tokens"], int64(2*logbook.MaxTokens))
		}
		stats := c.do("GET", "/v1/stats?project=demo&by=harness", alice, nil).expect(t, 200)
		rows, _ := stats.body["groups"].([]any)
		if len(rows) != 1 || rows[0].(map[string]any)["input_tokens"] != float64(2*logbook.MaxTokens) {
			t.Errorf("stats: %s, want one row of %d input tokens", stats.raw, int64(2*logbook.MaxTokens))
		}
	})
}
