// Package redact removes secrets — API keys, tokens, passwords, private keys
// — from text and JSON before logbook stores them, replacing each with
// "[REDACTED:<kind>]".
//
// It recognises the secrets named in the Kind* constants by their shape
// (prefixes such as AKIA, ghp_, sk-ant-, a PEM header) or by the name they
// are given (password=…, "api_key": "…", Authorization: Bearer …). It keeps
// what surrounds a secret (the user and host of a URL, the name of a
// variable) so the text stays readable.
//
// It must not be taken for a guarantee: a secret with no recognisable shape
// or name passes through (so does a value assigned with blanks around an
// unquoted "=", as in INI files and code, and a secret split by a line
// break). It must not change anything that is not a secret (git hashes,
// UUIDs, base64 data, ordinary words, token counts), must not fail, and
// must stay fast on large text: a pattern runs only on the lines around a
// cheap literal anchor for it (see rule), and Go's regexp engine runs in
// linear time. Redaction is idempotent: String(String(s)) == String(s).
package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Kinds of secret, as they appear in "[REDACTED:<kind>]".
const (
	KindPrivateKey     = "private_key"           // PEM private key blocks
	KindJWT            = "jwt"                   // JSON Web Tokens
	KindAnthropicKey   = "anthropic_key"         // sk-ant-…
	KindOpenAIKey      = "openai_key"            // sk-…, sk-proj-…
	KindGitHubToken    = "github_token"          // ghp_, gho_, ghu_, ghs_, ghr_, github_pat_
	KindGitLabToken    = "gitlab_token"          // glpat-…
	KindLogbookToken   = "logbook_token"         // lbk_…, logbook's own bearer tokens
	KindSlackToken     = "slack_token"           // xoxa-, xoxb-, xoxp-, xoxr-, xoxs-
	KindSlackWebhook   = "slack_webhook"         // the secret path of hooks.slack.com/services/…
	KindAWSAccessKeyID = "aws_access_key_id"     // AKIA…, ASIA…
	KindAWSSecretKey   = "aws_secret_access_key" // aws_secret_access_key=…
	KindPassword       = "password"              // URL passwords, password=…, "password": "…"
	KindAuthorization  = "authorization"         // Authorization header credentials, bearer tokens
	KindSecret         = "secret"                // token=…, secret=…, api_key=…, "client_secret": "…"
)

// placeholderRedacted starts every replacement; text starting with it is
// never redacted again.
const placeholderRedacted = "[REDACTED:"

// rule finds one kind of secret. Its regexp has three groups: text kept
// before the secret, the secret, and text kept after it.
//
// To stay fast on large text, a rule's regexp does not scan the whole text.
// A rule is anchored either on literal markers (a token's prefix, found with
// strings.Index) or on assignments ("NAME=" and "NAME:", found by scanning
// for "=" and ":" and reading the name before them); the regexp runs only on
// the line around each anchor that passes the rule's cheap checks.
type rule struct {
	kind string
	// markers are literals, one of which occurs in every match.
	markers []string
	// wordStart requires a marker to start a word: the byte before it is
	// not a letter, digit, "_" or "-".
	wordStart bool
	// back is how many bytes before its marker a match may start (at
	// least 1 with wordStart).
	back int
	// follows, when set, checks the text right after a marker (up to 256
	// bytes); false skips that occurrence.
	follows func(after string) bool
	// whole runs the regexp over the whole text when a marker occurs (for
	// secrets spanning lines) instead of around each marker.
	whole bool
	// assigned, set instead of markers, picks the assignments the rule
	// looks at, given the assignment and the text after its operator.
	assigned func(a assignment, after string) bool
	re       *regexp.Regexp
	// valid, when set, vets a candidate secret (group 2); false keeps it.
	valid func(secret string) bool
	// kindOf, when set, picks the kind from the whole match.
	kindOf func(match string) string
}

// assignment is a NAME followed by "=" or ":" in the text.
type assignment struct {
	name   string // lower case, letters, digits and "_.-" only
	quoted bool   // the name was in quotes: "NAME": or 'NAME'=
	op     byte   // '=' or ':'
	start  int    // offset of the name (after any opening quote)
	at     int    // offset of op
}

// Pieces of the patterns below.
const (
	b64url = `A-Za-z0-9_\-`
	// notWord is what may precede a token: the start of the text or a byte
	// that cannot be part of the token.
	notWord = `(^|[^A-Za-z0-9_\-])`
	// secretNames are the endings of variable and parameter names whose
	// value is a secret. "max_tokens=" does not end in one ("tokens"), nor
	// does "bypass=".
	secretNames = `(?:password|passwd|secret|token|api_?key|access_?key|private_?key|secret_?key)`
)

// secretNameSuffixes are secretNames spelt out, lower case.
var secretNameSuffixes = []string{"password", "passwd", "secret", "token", "api_key", "apikey",
	"access_key", "accesskey", "private_key", "privatekey", "secret_key", "secretkey"}

// hasSecretSuffix reports whether a lower-case name ends in one of
// secretNames.
func hasSecretSuffix(name string) bool {
	for _, suffix := range secretNameSuffixes {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}

// rules run in this order; earlier, more specific rules win (an Anthropic
// key is not also an OpenAI key).
var rules = []rule{
	{
		kind: KindPrivateKey, markers: []string{"PRIVATE KEY-----"}, whole: true,
		// A block cut short (clipped text) is redacted to the end.
		re: regexp.MustCompile(`()(-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY-----|$))()`),
	},
	{
		kind: KindJWT, markers: []string{"eyJ"}, wordStart: true,
		re: regexp.MustCompile(notWord + `(eyJ[` + b64url + `]{8,}\.eyJ[` + b64url + `]{8,}\.[` + b64url + `]{8,})()`),
	},
	{
		kind: KindAnthropicKey, markers: []string{"sk-ant-"}, wordStart: true,
		re: regexp.MustCompile(notWord + `(sk-ant-[` + b64url + `]{20,})()`),
	},
	{
		kind: KindOpenAIKey, markers: []string{"sk-"}, wordStart: true,
		re:    regexp.MustCompile(notWord + `(sk-(?:proj-|svcacct-|admin-)?[` + b64url + `]{20,})()`),
		valid: looksRandom,
	},
	{
		kind: KindGitHubToken, markers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, wordStart: true,
		re: regexp.MustCompile(notWord + `(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})()`),
	},
	{
		kind: KindLogbookToken, markers: []string{"lbk_"}, wordStart: true,
		re: regexp.MustCompile(notWord + `(lbk_[` + b64url + `]{40,})()`),
	},
	{
		kind: KindGitLabToken, markers: []string{"glpat-"}, wordStart: true,
		re: regexp.MustCompile(notWord + `(glpat-[` + b64url + `]{20,})()`),
	},
	{
		kind: KindSlackToken, markers: []string{"xox"}, wordStart: true,
		follows: func(after string) bool {
			return len(after) > 1 && after[1] == '-' && strings.IndexByte("abprs", after[0]) >= 0
		},
		re: regexp.MustCompile(notWord + `(xox[abprs]-[A-Za-z0-9\-]{10,})()`),
	},
	{
		kind: KindSlackWebhook, markers: []string{"hooks.slack.com/services/"},
		re: regexp.MustCompile(`(hooks\.slack\.com/services/)([A-Za-z0-9_/\-]{8,})()`),
	},
	{
		kind: KindAWSAccessKeyID, markers: []string{"AKIA", "ASIA"}, wordStart: true,
		re: regexp.MustCompile(notWord + `((?:AKIA|ASIA)[A-Z0-9]{16})\b()`),
	},
	{
		kind: KindAWSSecretKey,
		assigned: func(a assignment, _ string) bool {
			return strings.HasSuffix(a.name, "secret_access_key") || strings.HasSuffix(a.name, "secretaccesskey")
		},
		re: regexp.MustCompile(`(?i)((?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)([A-Za-z0-9/+]{40})()`),
	},
	{
		// scheme://user:PASSWORD@host — the user and host stay.
		kind: KindPassword, markers: []string{"://"}, back: 32, // the scheme
		follows: func(after string) bool {
			end := strings.IndexAny(after, " \t\r\n/?#")
			if end < 0 {
				end = len(after)
			}
			return strings.Contains(after[:end], ":") && strings.Contains(after[:end], "@")
		},
		re:    regexp.MustCompile(`(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@]*:)([^\s@/?#]+)(@)`),
		valid: notPlaceholder,
	},
	{
		kind:     KindAuthorization,
		assigned: func(a assignment, _ string) bool { return strings.HasSuffix(a.name, "authorization") },
		re:       regexp.MustCompile(`(?i)(\bauthorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest)\s+)([^\s"'\\,;]+)()`),
		valid:    notPlaceholder,
	},
	{
		kind: KindAuthorization, markers: []string{"Bearer", "bearer", "BEARER"}, wordStart: true,
		follows: func(after string) bool { return after != "" && (after[0] == ' ' || after[0] == '\t') },
		re:      regexp.MustCompile(`(?i)(\bbearer\s+)([A-Za-z0-9._~+/\-]{20,}=*)()`),
		valid:   notPlaceholder,
	},
	{
		// NAME=value where NAME ends in password, secret, token, api_key, …:
		// query strings, connection strings, environment assignments. An
		// unquoted value must follow "=" directly, so code such as
		// `token = getToken()` is left alone.
		kind: KindSecret,
		assigned: func(a assignment, after string) bool {
			return a.op == '=' && !a.quoted && hasSecretSuffix(a.name)
		},
		re:     regexp.MustCompile(`(?i)(\b[A-Za-z0-9_.\-]*` + secretNames + `=)([^\s&;"'<>,()\[\]{}]+)()`),
		valid:  notPlaceholder,
		kindOf: passwordOrSecret,
	},
	{
		// NAME = "value" and NAME='value'.
		kind: KindSecret,
		assigned: func(a assignment, after string) bool {
			after = strings.TrimLeft(after, " \t")
			return a.op == '=' && !a.quoted && hasSecretSuffix(a.name) &&
				(strings.HasPrefix(after, `"`) || strings.HasPrefix(after, "'"))
		},
		re:     regexp.MustCompile(`(?i)(\b[A-Za-z0-9_.\-]*` + secretNames + `\s*=\s*)("[^"\n]*"|'[^'\n]*')()`),
		valid:  notPlaceholder,
		kindOf: passwordOrSecret,
	},
	{
		// "NAME": "value" in JSON written as text (a config file a tool read).
		kind: KindSecret,
		assigned: func(a assignment, after string) bool {
			return a.op == ':' && a.quoted && hasSecretSuffix(a.name) &&
				strings.HasPrefix(strings.TrimLeft(after, " \t"), `"`)
		},
		re:     regexp.MustCompile(`(?i)("[A-Za-z0-9_.\-]*` + secretNames + `"\s*:\s*")((?:[^"\\\n]|\\.)+)(")`),
		valid:  notPlaceholder,
		kindOf: passwordOrSecret,
	},
}

// String returns s with every secret it recognises replaced by
// "[REDACTED:<kind>]".
func String(s string) string { return redactString(s, nil) }

// Tagged is String for identifiers — keys, subjects, names — that must stay
// apart and stay equal when redacted: each secret becomes
// "[REDACTED:<kind>:<tag>]", where tag(secret) names the secret without
// revealing it (a keyed hash, say). Two identifiers that differed keep
// differing, and the same identifier sent again is redacted the same way.
// tag must return characters no rule takes for a secret, such as 16 hex
// digits, so that Tagged stays idempotent.
func Tagged(s string, tag func(secret string) string) string { return redactString(s, tag) }

// shortText is the length below which redactString first checks, in one
// pass, whether any rule would look at the text at all. Most identifiers
// and names are short and hold no marker, and the check spares them the
// rules' setup; on long text the rules' own searches are faster than a
// pass byte by byte.
const shortText = 512

// redactString redacts s, tagging each placeholder with tag when it is set.
func redactString(s string, tag func(string) string) string {
	if len(s) < shortText && !anchored(s) {
		return s // before making a pass: most identifiers end here
	}
	p := &pass{tag: tag}
	return p.text(s)
}

// pass is one call of String, Tagged or JSON: how it tags placeholders,
// and the secrets it has replaced so far.
type pass struct {
	tag   func(string) string
	found []found
}

// found is a secret a pass replaced.
type found struct{ kind, secret string }

// add notes a secret the pass replaced, once however often it recurs.
func (p *pass) add(kind, secret string) {
	for _, f := range p.found {
		if f.secret == secret {
			return
		}
	}
	p.found = append(p.found, found{kind, secret})
}

// minFragment is the shortest line of a found secret that scrub looks for
// elsewhere: shorter ones could be ordinary words.
const minFragment = 16

// text redacts s: every rule, then what is left of the secrets found.
func (p *pass) text(s string) string { return p.scrub(p.rules(s)) }

// rules runs every rule over s, unless a quick look at a short s finds
// nothing any rule would look at.
func (p *pass) rules(s string) string {
	if len(s) < shortText && !anchored(s) {
		return s
	}
	return p.runRules(s)
}

// placeholder is what replaces a secret of kind.
func (p *pass) placeholder(kind, secret string) string {
	if p.tag == nil {
		return placeholderRedacted + kind + "]"
	}
	return placeholderRedacted + kind + ":" + p.tag(secret) + "]"
}

// scrub replaces, in s, every other occurrence of a line (of minFragment
// bytes or more) of a secret the pass found: a secret split where no rule
// sees it whole any more, such as the lines of a private key that a shell
// parser took for commands of their own, or a key repeated where nothing
// around it marks it as one.
func (p *pass) scrub(s string) string {
	for _, f := range p.found {
		for line := range strings.Lines(f.secret) {
			line = strings.TrimSpace(line)
			if len(line) >= minFragment && strings.Contains(s, line) {
				s = strings.ReplaceAll(s, line, p.placeholder(f.kind, f.secret))
			}
		}
	}
	return s
}

// leftIn reports whether out, JSON the pass wrote, may still hold a line
// of a secret it found: one that JSON would write with escapes is looked
// for in every string, to be sure.
func (p *pass) leftIn(out []byte) bool {
	for _, f := range p.found {
		for line := range strings.Lines(f.secret) {
			line = strings.TrimSpace(line)
			if len(line) < minFragment {
				continue
			}
			if strings.ContainsAny(line, "\"\\\u2028\u2029") || strings.ContainsFunc(line, func(r rune) bool { return r < ' ' }) ||
				bytes.Contains(out, []byte(line)) {
				return true
			}
		}
	}
	return false
}

// runRules runs every rule over s in turn.
func (p *pass) runRules(s string) string {
	var assignments []assignment
	scanned := false
	for i := range rules {
		r := &rules[i]
		var spans [][2]int
		switch {
		case r.whole:
			if containsAny(s, r.markers) {
				spans = [][2]int{{0, len(s)}}
			}
		case r.assigned != nil:
			if !scanned {
				assignments, scanned = findAssignments(s), true
			}
			spans = r.assignmentWindows(s, assignments)
		default:
			spans = r.markerWindows(s)
		}
		if next := r.apply(s, spans, p); next != s {
			s = next
			scanned = false // offsets moved
		}
	}
	return s
}

// windowAfter is how far past an anchor a rule's regexp looks, at least:
// the window then runs on to the end of the line or to a blank, so that no
// token is cut.
const windowAfter = 4096

// apply replaces the secrets rule r finds in spans of s, and adds them to
// what the pass found.
func (r *rule) apply(s string, spans [][2]int, p *pass) string {
	var b strings.Builder
	last := 0
	for _, w := range spans {
		for _, m := range r.re.FindAllStringSubmatchIndex(s[w[0]:w[1]], -1) {
			secretStart, secretEnd := w[0]+m[4], w[0]+m[5]
			secret := s[secretStart:secretEnd]
			if secretStart < last || strings.HasPrefix(secret, placeholderRedacted) || (r.valid != nil && !r.valid(secret)) {
				continue
			}
			kind := r.kind
			if r.kindOf != nil {
				kind = r.kindOf(s[w[0]+m[0] : w[0]+m[1]])
			}
			b.WriteString(s[last:secretStart])
			b.WriteString(p.placeholder(kind, secret))
			p.add(kind, secret)
			last = secretEnd
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// markerWindows returns the sorted, disjoint spans around the markers of r
// in s that pass its checks.
func (r *rule) markerWindows(s string) [][2]int {
	var spans [][2]int
	for _, marker := range r.markers {
		w := newWindower(s)
		for from := 0; ; {
			i := strings.Index(s[from:], marker)
			if i < 0 {
				break
			}
			p := from + i
			from = p + len(marker)
			if r.wordStart && p > 0 && isTokenByte(s[p-1]) {
				continue
			}
			if r.follows != nil && !r.follows(s[from:min(len(s), from+256)]) {
				continue
			}
			back := r.back
			if r.wordStart {
				back = max(back, 1) // the byte before the token
			}
			w.add(max(0, p-back), from)
		}
		spans = append(spans, w.spans...)
	}
	return mergeSpans(spans)
}

// assignmentWindows returns the sorted, disjoint spans around the
// assignments r looks at.
func (r *rule) assignmentWindows(s string, assignments []assignment) [][2]int {
	w := newWindower(s)
	for _, a := range assignments {
		if r.assigned(a, s[a.at+1:min(len(s), a.at+257)]) {
			w.add(max(0, a.start-1), a.at+1)
		}
	}
	return mergeSpans(w.spans)
}

// findAssignments finds the NAME= and NAME: in s whose NAME may name a
// secret (see mayNameSecret), in order. NAME is made of letters, digits and
// "_.-", and may be quoted and followed by blanks.
func findAssignments(s string) []assignment {
	var found []assignment
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		start, end, quoted := nameBefore(s, i)
		if start == end || !mayNameSecret(s[start:end]) {
			continue
		}
		found = append(found, assignment{name: asciiLower(s[start:end]), quoted: quoted, op: c, start: start, at: i})
	}
	return found
}

// nameBefore finds the NAME of an assignment whose operator is at s[at]:
// s[start:end], empty when there is none, and whether it is quoted.
func nameBefore(s string, at int) (start, end int, quoted bool) {
	j := at
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	quoted = j > 0 && (s[j-1] == '"' || s[j-1] == '\'')
	if quoted {
		j--
	}
	end = j
	for j > 0 && end-j < 128 && (isTokenByte(s[j-1]) || s[j-1] == '.') {
		j--
	}
	return j, end, quoted
}

// marker is a rule's marker as anchored looks for it.
type marker struct {
	text      string
	wordStart bool // the rule's wordStart
}

// markersByByte lists the rules' markers by their first byte, for anchored.
var markersByByte = indexMarkers()

func indexMarkers() [256][]marker {
	var index [256][]marker
	for _, r := range rules {
		for _, m := range r.markers {
			index[m[0]] = append(index[m[0]], marker{m, r.wordStart})
		}
	}
	return index
}

// anchored reports whether any rule would look at s: whether it holds one
// of the rules' markers or an assignment to a name that may name a secret.
// Without either, String returns s as it is.
func anchored(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '=' || c == ':' {
			if start, end, _ := nameBefore(s, i); start < end && mayNameSecret(s[start:end]) {
				return true
			}
		}
		for _, m := range markersByByte[c] {
			if strings.HasPrefix(s[i:], m.text) && (!m.wordStart || i == 0 || !isTokenByte(s[i-1])) {
				return true
			}
		}
	}
	return false
}

// assignmentNameSuffixes are the name endings the assignment rules look at.
var assignmentNameSuffixes = append(slices.Clone(secretNameSuffixes), "authorization")

// mayNameSecret reports whether name, in any case, ends in one of
// secretNames or in "authorization": the names the assignment rules look at.
func mayNameSecret(name string) bool {
	for _, suffix := range assignmentNameSuffixes {
		if len(name) >= len(suffix) && strings.EqualFold(name[len(name)-len(suffix):], suffix) {
			return true
		}
	}
	return false
}

// windower computes the spans a rule's regexp looks at. Anchors must come
// in increasing order: it remembers where the next line end and the next
// blank are, so that many anchors on one long line cost one scan, not one
// each.
type windower struct {
	s             string
	spans         [][2]int
	nl, blank     int // offset of the next "\n" / blank seen so far; len(s) if none
	nlAt, blankAt int // the offsets those searches started from
}

func newWindower(s string) *windower {
	return &windower{s: s, nl: -1, blank: -1, nlAt: -1, blankAt: -1}
}

// add adds the span from start that a rule's regexp looks at for an anchor
// ending at to: up to the end of the line, but when the line is long, only
// to the first blank windowAfter bytes past the anchor, so no token is cut.
func (w *windower) add(start, to int) {
	limit := min(len(w.s), to+windowAfter)
	end := w.next(to, &w.nl, &w.nlAt, "\n")
	if end > limit {
		end = min(end, w.next(limit, &w.blank, &w.blankAt, " \t\r\n"))
	}
	w.spans = append(w.spans, [2]int{start, end})
}

// next returns the offset of the first byte of chars at or after from
// (len(s) if none), reusing the previous search when it still applies.
func (w *windower) next(from int, found, foundFrom *int, chars string) int {
	if *foundFrom < 0 || from < *foundFrom || from > *found {
		i := strings.IndexAny(w.s[from:], chars)
		if i < 0 {
			i = len(w.s) - from
		}
		*found, *foundFrom = from+i, from
	}
	return *found
}

// mergeSpans sorts spans and joins those that overlap or touch.
func mergeSpans(spans [][2]int) [][2]int {
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	merged := spans[:0]
	for _, w := range spans {
		if n := len(merged); n > 0 && w[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], w[1])
			continue
		}
		merged = append(merged, w)
	}
	return merged
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// asciiLower lower-cases ASCII letters only.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func containsAny(s string, markers []string) bool {
	for _, m := range markers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// looksRandom tells a key ("sk-" followed by random characters) from words
// that happen to follow "sk-" ("sk-learn-compatible-estimators"): a key
// mixes in digits.
func looksRandom(secret string) bool {
	return strings.ContainsAny(secret, "0123456789")
}

// notPlaceholder keeps values that stand for a secret rather than being one:
// $VAR, ${VAR}, <token>, {{token}}, *** and empty quotes.
func notPlaceholder(secret string) bool {
	v := strings.Trim(secret, `"'`)
	switch {
	case v == "", strings.HasPrefix(v, "$"), strings.HasPrefix(v, "<"), strings.HasPrefix(v, "{{"),
		strings.HasPrefix(v, "%"), strings.Trim(v, "*xX.") == "", strings.HasPrefix(v, placeholderRedacted):
		return false
	}
	return true
}

// passwordOrSecret names the kind of a NAME=value match by its NAME.
func passwordOrSecret(match string) string {
	name := strings.ToLower(match[:max(strings.IndexAny(match[1:], "=:")+1, 0)])
	if strings.Contains(name, "pass") {
		return KindPassword
	}
	return KindSecret
}

// JSON returns raw with every string in it — values and object keys —
// passed through String, and the whole value of any member whose name says
// it holds a secret ("password", "api_key", "client_secret",
// "authorization", "*_token", …) replaced. Numbers, key order and structure
// are kept. Input that is not valid JSON is redacted as text and returned as
// a JSON string, so the result is always valid JSON; empty input is returned
// as is.
func JSON(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw
	}
	if !json.Valid(raw) {
		return encodeString(nil, String(string(raw)))
	}
	if !mayHoldSecret(raw) {
		return raw
	}
	p := &pass{}
	out, err := rewriteJSON(raw, func(member string, isName bool, v string) string {
		if kind := secretName(member); !isName && kind != "" && notPlaceholder(v) {
			p.add(kind, v)
			return placeholderRedacted + kind + "]"
		}
		return p.rules(v)
	})
	if err == nil && p.leftIn(out) {
		// What is left of the secrets found, in every string.
		out, err = rewriteJSON(out, func(_ string, _ bool, v string) string { return p.scrub(v) })
	}
	if err != nil { // cannot happen for valid JSON; stay safe anyway
		return encodeString(nil, String(string(raw)))
	}
	return out
}

// mayHoldSecret is a quick check that lets JSON return most payloads
// untouched: it looks for the markers of the rules and for words that name
// secrets in the raw bytes, and says yes on \u escapes, which could hide
// them.
func mayHoldSecret(raw []byte) bool {
	lower := bytes.ToLower(raw)
	for _, word := range []string{`\u`, "pass", "secret", "token", "key", "auth", "credential", "bearer"} {
		if bytes.Contains(lower, []byte(word)) {
			return true
		}
	}
	for _, r := range rules {
		for _, m := range r.markers {
			if bytes.Contains(raw, []byte(m)) {
				return true
			}
		}
	}
	return false
}

// frame is an open JSON object or array while redactJSON walks the tokens.
type frame struct {
	object bool
	n      int    // tokens written inside: in an object, keys and values alternate
	key    string // the current member's name, in an object
}

// rewriteJSON rewrites valid JSON token by token, keeping order and
// numbers, passing each string through fn with the name of the member it
// is the name (isName) or the value of ("" in an array or at the top).
func rewriteJSON(raw []byte, fn func(member string, isName bool, v string) string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	out := make([]byte, 0, len(raw)+64)
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			out = append(out, byte(d))
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].n++
			}
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
			switch {
			case top.object && top.n%2 == 1:
				out = append(out, ':')
			case top.n > 0:
				out = append(out, ',')
			}
		}
		switch v := tok.(type) {
		case json.Delim: // '{' or '['
			out = append(out, byte(v))
			stack = append(stack, frame{object: v == '{'})
			continue // counted when closed
		case string:
			switch {
			case top != nil && top.object && top.n%2 == 0: // a member name
				top.key = v
				out = encodeString(out, fn(v, true, v))
			case top != nil && top.object:
				out = encodeString(out, fn(top.key, false, v))
			default:
				out = encodeString(out, fn("", false, v))
			}
		case json.Number:
			out = append(out, v...)
		case bool:
			if v {
				out = append(out, "true"...)
			} else {
				out = append(out, "false"...)
			}
		case nil:
			out = append(out, "null"...)
		}
		if top != nil {
			top.n++
		}
	}
}

// nameSeparators are dropped from member names before secretName compares
// them.
var nameSeparators = strings.NewReplacer("_", "", "-", "", ".", "")

// secretName returns the kind of secret a JSON member name says its value
// is, or "" when the name says nothing. Names are compared lower-cased
// without "_", "-" and ".": "DB_PASSWORD", "apiKey", "x-api-key" all match;
// "max_tokens" and "input_tokens" (counts) do not.
func secretName(name string) string {
	n := nameSeparators.Replace(strings.ToLower(name))
	switch {
	case strings.HasSuffix(n, "password"), strings.HasSuffix(n, "passwd"), n == "pass":
		return KindPassword
	case n == "authorization", n == "proxyauthorization":
		return KindAuthorization
	case strings.HasSuffix(n, "secret"), strings.HasSuffix(n, "token"), strings.HasSuffix(n, "apikey"),
		strings.HasSuffix(n, "accesskey"), strings.HasSuffix(n, "privatekey"), strings.HasSuffix(n, "secretkey"),
		n == "credentials", n == "credential":
		return KindSecret
	}
	return ""
}

// encodeString appends s to dst as a JSON string, without escaping <, > and
// & (json.Marshal would), so redacted text stays readable.
func encodeString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
