package logbook

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Full-text search. Text is cut into words here, the same way for what is
// indexed and for what is searched, on both engines: the engines' indexes
// (SQLite FTS5, PostgreSQL's tsvector with a GIN index) hold the words this
// file makes, and never cut text themselves. So a search finds the same
// entries on either engine, in any language its rules cover:
//
//   - Words of letters and digits, lowercased: "Connection", "refused",
//     "404". Everything else (spaces, punctuation, "/", "_", ".") separates
//     words, so a path or an error string is found by its words in order:
//     "store/list.go" finds "internal/store/list.go".
//   - Identifiers are also cut where their case changes: "parseConfigFile"
//     is "parse config file" (found by "parseConfig", "config file" or
//     "ConfigFile") and, whole, "parseconfigfile" (found by "parseconfig").
//   - Chinese, Japanese and Korean text, written without spaces, is indexed
//     as overlapping pairs of characters: "数据库连接" is "数据 据库 库连 连接",
//     so a word of two or more characters is found wherever it stands
//     ("数据库" is "数据 据库" side by side), and a single character by
//     the pairs it begins (and the run's last character, indexed alone).
//
// A search is words that must all be found. A word of several parts
// ("parseConfig", "store/list.go", "数据库") is found when its parts stand
// side by side. A word ending in "*" also finds longer words that begin
// with it ("migrat*" finds "migration"; at least three bytes before the
// star), as does a lone CJK character, whose pairs it begins. A phrase in
// double quotes is found as written. (Every word is not a prefix by
// itself: "the" would then be every word beginning with "the", a costly
// search in a large index, and a surprising one.)

// Bounds of a search. A word is clipped to MaxSearchWord bytes where it is
// indexed and where it is searched for, so a very long one (a blob of
// base64) costs the index little and is still found by its start. An
// entry's document is its first MaxSearchDocument bytes: every entry's
// text (MaxEntryText characters) fits, and a large payload is indexed by
// its start.
const (
	MaxSearchWord     = 100
	MaxSearchDocument = 64000
	// SearchPrefixMin is how long, in bytes, the word before a "*" must
	// be (one CJK character is three).
	SearchPrefixMin = 3
	// MaxSearchPage is how many results one page of a search holds at
	// most (default DefaultSearchPage).
	MaxSearchPage     = 100
	DefaultSearchPage = 20
	// SearchCandidates is how many matching entries a search ranks (and
	// as many sessions): the newest that match, of which the best come
	// first (SearchScore). Pages go no further. A search that matches more
	// is told so (SearchPage.More); more words narrow it.
	SearchCandidates = 500
	// MaxSearchScored is how much of a match's text and of its payload,
	// in characters, SearchScore reads.
	MaxSearchScored = 8192
)

// SearchToken is a word as the index holds it, and where it stands in the
// text it was cut from (byte offsets).
type SearchToken struct {
	Word       string
	Start, End int
}

// SearchWords cuts text into the words the index holds. Words come in the
// order they stand (a phrase is words side by side in it); extra holds the
// words found only whole: identifiers cut at case changes, whole
// ("parseconfigfile"), and the last character of each run of CJK text.
func SearchWords(text string) (words, extra []SearchToken) {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			j := i + size
			for j < len(text) {
				r, size := utf8.DecodeRuneInString(text[j:])
				if !isCJK(r) {
					break
				}
				j += size
			}
			words, extra = cjkWords(text, i, j, words, extra)
			i = j
		case isWordRune(r):
			j := i + size
			for j < len(text) {
				r, size := utf8.DecodeRuneInString(text[j:])
				if !isWordRune(r) || isCJK(r) {
					break
				}
				j += size
			}
			words, extra = latinWords(text, i, j, words, extra)
			i = j
		default:
			i += size
		}
	}
	return words, extra
}

// isCJK reports whether r is written without spaces between words:
// Chinese characters, Japanese kana (and the long-vowel mark), Korean
// Hangul.
func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 'ー' || r == '々')
}

// isWordRune reports whether r is part of a word: a letter, a digit or a
// mark (an accent written apart).
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// cjkWords adds the overlapping pairs of characters of text[start:end], a
// run of CJK text, to words, and its last character to extra (a run of one
// character is that character).
func cjkWords(text string, start, end int, words, extra []SearchToken) ([]SearchToken, []SearchToken) {
	var at []int // the start of each character, then end
	for i := start; i < end; {
		at = append(at, i)
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	at = append(at, end)
	n := len(at) - 1
	if n == 1 {
		return append(words, SearchToken{text[start:end], start, end}), extra
	}
	for k := 0; k+2 <= n; k++ {
		words = append(words, SearchToken{text[at[k]:at[k+2]], at[k], at[k+2]})
	}
	return words, append(extra, SearchToken{text[at[n-1]:end], at[n-1], end})
}

// latinWords adds the word text[start:end], lowercased, to words, cut
// where its case changes ("parseConfig" is "parse", "config"); cut, it is
// added whole to extra too.
func latinWords(text string, start, end int, words, extra []SearchToken) ([]SearchToken, []SearchToken) {
	parts := 0
	from := start
	var prev rune
	for i := start; i < end; {
		r, size := utf8.DecodeRuneInString(text[i:])
		if i > start && unicode.IsUpper(r) {
			next, _ := utf8.DecodeRuneInString(text[i+size:])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next) && i+size < end) {
				words = append(words, token(text, from, i))
				parts++
				from = i
			}
		}
		prev = r
		i += size
	}
	words = append(words, token(text, from, end))
	if parts > 0 {
		extra = append(extra, token(text, start, end))
	}
	return words, extra
}

// token is text[start:end] lowercased and clipped to MaxSearchWord bytes.
func token(text string, start, end int) SearchToken {
	return SearchToken{clipWord(strings.ToLower(text[start:end])), start, end}
}

// clipWord cuts a word to MaxSearchWord bytes, at a character boundary.
func clipWord(w string) string {
	if len(w) <= MaxSearchWord {
		return w
	}
	cut := MaxSearchWord
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return w[:cut]
}

// SearchTerm is one thing a search must find: words side by side, the last
// also as the start of a longer word when Prefix is set.
type SearchTerm struct {
	Words  []string
	Prefix bool
}

// ParseSearch reads a search (see the comment at the top of this file):
// whitespace-separated words, each maybe ending in "*", and double-quoted
// phrases, each a term that must be found. It checks the bounds a list's q
// has too (MaxQueryLen characters, MaxQueryWords terms); a search with no
// letter or digit to look for, or a "*" after fewer than SearchPrefixMin
// bytes, is a *ValidationError naming field "q".
func ParseSearch(q string) ([]SearchTerm, error) {
	length := utf8.RuneCountInString(q)
	var terms []SearchTerm
	for len(q) > 0 {
		q = strings.TrimLeftFunc(q, unicode.IsSpace)
		if q == "" {
			break
		}
		var chunk string
		quoted := q[0] == '"'
		if quoted {
			end := strings.IndexByte(q[1:], '"')
			if end < 0 {
				chunk, q = q[1:], ""
			} else {
				chunk, q = q[1:1+end], q[end+2:]
			}
		} else {
			end := strings.IndexFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
			if end < 0 {
				end = len(q)
			}
			chunk, q = q[:end], q[end:]
		}
		star := !quoted && strings.HasSuffix(chunk, "*")
		words, _ := SearchWords(chunk)
		if len(words) == 0 {
			continue
		}
		t := SearchTerm{}
		for _, w := range words {
			t.Words = append(t.Words, w.Word)
		}
		last := t.Words[len(t.Words)-1]
		if star && len(last) < SearchPrefixMin {
			return nil, Invalid("q", "%q: a word ending in * needs at least three letters before the *", chunk)
		}
		lone := len(words) == 1 && utf8.RuneCountInString(last) == 1 && isCJK([]rune(last)[0])
		t.Prefix = star || lone
		terms = append(terms, t)
	}
	if len(terms) > MaxQueryWords {
		return nil, Invalid("q", "the search has %d words; search for at most %d words", len(terms), MaxQueryWords)
	}
	if length > MaxQueryLen {
		return nil, Invalid("q", "the search is %d characters long; search for at most %d characters", length, MaxQueryLen)
	}
	if len(terms) == 0 {
		return nil, Invalid("q", "say what to search for: at least one word of letters or digits (punctuation alone is not searched)")
	}
	return terms, nil
}

// EntrySearchText is the text of an entry the index holds, and a search's
// snippet is cut from: its text, the tool it called or answered, and the
// strings of its payload when it is a tool call (the tool's input) or has
// no text of its own (a tool result given as JSON only), clipped to
// MaxSearchDocument bytes.
func EntrySearchText(e Entry) string {
	var b strings.Builder
	b.WriteString(e.Text)
	if e.Tool != "" {
		b.WriteString("\n")
		b.WriteString(e.Tool)
	}
	if len(e.Payload) > 0 && (e.Kind == KindToolCall || e.Text == "") {
		jsonStrings(&b, e.Payload, MaxSearchDocument)
	}
	return clipBytes(b.String(), MaxSearchDocument)
}

// jsonStrings writes the string values of a JSON value (not its keys) to
// b, a line each, until b holds max bytes.
func jsonStrings(b *strings.Builder, raw json.RawMessage, max int) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	// The open objects and arrays; an object says whether a key comes next.
	type open struct{ object, wantKey bool }
	var stack []open
	for b.Len() < max {
		tok, err := dec.Token()
		if err != nil { // the end, or JSON cut short: what was read is kept
			return
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{':
				stack = append(stack, open{object: true, wantKey: true})
			case '[':
				stack = append(stack, open{})
			default: // a value that held others ends
				stack = stack[:len(stack)-1]
				if n := len(stack); n > 0 && stack[n-1].object {
					stack[n-1].wantKey = true
				}
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = !stack[n-1].wantKey
			if !stack[n-1].wantKey { // it was a key: its value comes next
				continue
			}
		}
		if s, ok := tok.(string); ok {
			b.WriteString("\n")
			b.WriteString(s)
		}
	}
}

// clipBytes cuts s to at most max bytes, at a character boundary.
func clipBytes(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// SessionSearchText is the text of a session the index holds: its title,
// goal and result, a line each (the title left out where it is the goal).
func SessionSearchText(s Session) string {
	fields := SessionSearchFields(s)
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Text
	}
	return strings.Join(parts, "\n")
}

// SearchField is a field of a session a search looks in.
type SearchField struct {
	Name string // "title", "goal" or "result"
	Text string
}

// SessionSearchFields lists the fields of a session a search looks in:
// its title (unless it is the goal), goal and result, those that are set.
func SessionSearchFields(s Session) []SearchField {
	var out []SearchField
	if s.Title != "" && s.Title != s.Goal {
		out = append(out, SearchField{"title", s.Title})
	}
	if s.Goal != "" {
		out = append(out, SearchField{"goal", s.Goal})
	}
	if s.Result != "" {
		out = append(out, SearchField{"result", s.Result})
	}
	return out
}

// SearchScore says how well text matches the terms, the same on every
// engine: BM25's weighing of how often each term stands in the text
// against its length (every term counts alike: a search is short, and the
// words it asks for are all there), half as much again when all the terms
// stand within ten words of one another. Zero when no term is found (a
// match beyond what was read).
func SearchScore(text string, terms []SearchTerm) float64 {
	const k1, b, averageWords = 1.2, 0.75, 40.0
	words, extra := SearchWords(text)
	if len(words) == 0 {
		return 0
	}
	norm := k1 * (1 - b + b*float64(len(words))/averageWords)
	score := 0.0
	first := make([][]int, len(terms)) // where each term starts, in words
	for ti, t := range terms {
		n := len(t.Words)
		tf := 0
		for i := 0; i+n <= len(words); i++ {
			if phraseAt(words[i:i+n], t) {
				tf++
				first[ti] = append(first[ti], i)
			}
		}
		if n == 1 {
			for _, w := range extra {
				if wordMatches(w.Word, t.Words[0], t.Prefix) {
					tf++
				}
			}
		}
		score += float64(tf) * (k1 + 1) / (float64(tf) + norm)
	}
	if len(terms) > 1 && together(first, 10) {
		score *= 1.5
	}
	return score
}

// together reports whether one place of each term falls within window
// words of the others.
func together(places [][]int, window int) bool {
	for _, start := range places[0] {
		ok := true
		for _, other := range places[1:] {
			near := false
			for _, p := range other {
				if p >= start-window && p <= start+window {
					near = true
					break
				}
			}
			if !near {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// SearchFilter narrows a search. Zero fields select everything.
type SearchFilter struct {
	Actor   string
	Harness string
	Outcome Outcome
	Tool    string // entries of this tool (calls and results)
	Kind    Kind   // entries of this kind; "session" for the sessions' own title, goal and result only
	Since   time.Time
}

// KindSession, as a search's kind, keeps only matches in the sessions' own
// fields (title, goal, result).
const KindSession Kind = "session"

// Normalize cleans the filter's names as Name does and checks its kind and
// outcome.
func (f *SearchFilter) Normalize() error {
	for _, name := range []struct {
		field string
		value *string
		max   int
	}{{"actor", &f.Actor, MaxID}, {"harness", &f.Harness, MaxModel}, {"tool", &f.Tool, MaxID}} {
		clean, err := Name(name.field, *name.value, name.max)
		if err != nil {
			return err
		}
		*name.value = clean
	}
	if f.Kind != "" && f.Kind != KindSession && !f.Kind.Valid() {
		return Invalid("kind", "%q is not an entry kind; use one of %s, or session", f.Kind, kindList())
	}
	if f.Outcome != "" && !f.Outcome.Valid() {
		return Invalid("outcome", "%q is not an outcome; use success, partial or failed", f.Outcome)
	}
	if f.Kind == KindSession && f.Tool != "" {
		return Invalid("tool", "a session's own fields have no tool; leave out tool or kind=session")
	}
	return nil
}

// SearchHit is one result of a search: an entry of a session, or (Seq 0)
// the session's own title, goal or result, with a snippet of the text
// around what matched.
type SearchHit struct {
	SessionID string `json:"session_id"`
	// Seq is the entry's number in its session; 0 when the match is in
	// the session's own Field.
	Seq   int64  `json:"seq,omitempty"`
	Field string `json:"field"` // "entry", "title", "goal" or "result"
	Kind  Kind   `json:"kind,omitempty"`
	Role  string `json:"role,omitempty"`
	Tool  string `json:"tool,omitempty"`
	// At is when the entry was recorded, or the session started.
	At         time.Time `json:"at"`
	Superseded bool      `json:"superseded,omitempty"`
	// The session's title, actor, harness and outcome.
	Title   string  `json:"title"`
	Actor   string  `json:"actor"`
	Harness string  `json:"harness"`
	Outcome Outcome `json:"outcome,omitempty"`
	// Snippet is the text around the best match, in parts; the parts
	// that matched have Match set.
	Snippet []SnippetPart `json:"snippet"`
	// Score ranks the hits of one search, higher first; it means nothing
	// across searches or engines.
	Score float64 `json:"score"`
}

// SnippetPart is a piece of a snippet.
type SnippetPart struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// SnippetString writes a snippet as plain text, each match between mark
// and unmark ("**" and "**" for Markdown, say).
func SnippetString(parts []SnippetPart, mark, unmark string) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Match {
			b.WriteString(mark + p.Text + unmark)
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// SnippetWidth is about how many bytes of text a snippet shows.
const SnippetWidth = 240

// Snippet cuts from text the stretch of about SnippetWidth bytes that holds
// matches of the most terms, with every match in it marked, white space
// folded and an ellipsis where text was left out. ok is false when no term
// matches text (the snippet is then its start).
func Snippet(text string, terms []SearchTerm) (parts []SnippetPart, ok bool) {
	spans := matchSpans(text, terms)
	start := 0
	if len(spans) > 0 {
		best := -1
		for i, s := range spans {
			seen := map[int]bool{}
			for _, o := range spans[i:] {
				if o.start >= s.start+SnippetWidth*3/4 {
					break
				}
				seen[o.term] = true
			}
			if len(seen) > best {
				best, start = len(seen), s.start
			}
		}
		// Some words before the first match, for context, from the start
		// of a word.
		if start > SnippetWidth/4 {
			from := start - SnippetWidth/4
			if sp := strings.IndexAny(text[from:start], " \t\n"); sp >= 0 {
				from += sp + 1
			}
			start = from
		} else {
			start = 0
		}
		for start > 0 && !utf8.RuneStart(text[start]) {
			start++
		}
	}
	end := min(len(text), start+SnippetWidth)
	for _, s := range spans { // a match is not cut in two
		if s.start < end && s.end > end {
			end = s.end
		}
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	if start > 0 {
		parts = append(parts, SnippetPart{Text: Ellipsis})
	}
	at := start
	for _, s := range spans {
		if s.end <= at || s.start >= end {
			continue
		}
		from, to := max(s.start, at), min(s.end, end)
		if from > at {
			parts = append(parts, SnippetPart{Text: text[at:from]})
		}
		parts = append(parts, SnippetPart{Text: text[from:to], Match: true})
		at = to
	}
	if at < end {
		parts = append(parts, SnippetPart{Text: text[at:end]})
	}
	if end < len(text) {
		parts = append(parts, SnippetPart{Text: Ellipsis})
	}
	return foldSpace(parts), len(spans) > 0
}

// foldSpace turns every run of white space in the parts into one space,
// trims the snippet's ends and merges neighbouring parts of one kind.
func foldSpace(parts []SnippetPart) []SnippetPart {
	var out []SnippetPart
	space := true // a space here would be a run's second, or lead the snippet
	for _, p := range parts {
		var b strings.Builder
		for _, r := range p.Text {
			if unicode.IsSpace(r) {
				if !space {
					b.WriteByte(' ')
					space = true
				}
				continue
			}
			b.WriteRune(r)
			space = false
		}
		text := b.String()
		if text == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Match == p.Match {
			out[n-1].Text += text
			continue
		}
		out = append(out, SnippetPart{Text: text, Match: p.Match})
	}
	if n := len(out); n > 0 {
		if out[n-1].Text = strings.TrimRight(out[n-1].Text, " "); out[n-1].Text == "" {
			out = out[:n-1]
		}
	}
	return out
}

// span is where a term matched in a text.
type span struct {
	start, end int
	term       int
}

// matchSpans finds where the terms match text, in order of start, spans
// that overlap merged.
func matchSpans(text string, terms []SearchTerm) []span {
	spans := termSpans(text, terms)
	// In order of start, longest first; overlaps merged.
	slices.SortFunc(spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	var out []span
	for _, s := range spans {
		if n := len(out); n > 0 && s.start < out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// termSpans finds every place a term matches text.
func termSpans(text string, terms []SearchTerm) []span {
	words, extra := SearchWords(text)
	var spans []span
	for ti, t := range terms {
		n := len(t.Words)
		for i := 0; i+n <= len(words); i++ {
			if phraseAt(words[i:i+n], t) {
				spans = append(spans, span{words[i].Start, words[i+n-1].End, ti})
			}
		}
		if n == 1 {
			for _, w := range extra {
				if wordMatches(w.Word, t.Words[0], t.Prefix) {
					spans = append(spans, span{w.Start, w.End, ti})
				}
			}
		}
	}
	return spans
}

// phraseAt reports whether words are the term's words, the last as a
// prefix when the term says so.
func phraseAt(words []SearchToken, t SearchTerm) bool {
	for k, w := range words {
		last := k == len(words)-1
		if !wordMatches(w.Word, t.Words[k], last && t.Prefix) {
			return false
		}
	}
	return true
}

func wordMatches(word, want string, prefix bool) bool {
	if prefix {
		return strings.HasPrefix(word, want)
	}
	return word == want
}
