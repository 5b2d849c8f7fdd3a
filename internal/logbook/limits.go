package logbook

import (
	"strings"
	"unicode/utf8"

	"github.com/logbookhq/logbook/internal/redact"
)

// Limits on what a client sends. Text longer than its limit is trimmed and
// clipped with an ellipsis, never refused for length alone; the README lists
// every one of them.
const (
	MaxTitle      = 200     // title, and the derived title
	MaxBranch     = 255     // git branch
	MaxID         = 200     // ids: harness session id, issue, pull, subject, agent, actor, project, tool, tool call id, key
	MaxCommit     = 64      // git commit hash
	MaxModel      = 100     // model name, agent type, harness
	MaxLongText   = 8000    // goal, task, prompt, result, end reason
	MaxEntryText  = 64000   // an entry's text
	MaxPayload    = 1 << 20 // an entry's payload, in bytes of JSON; larger payloads are replaced by a clipped string
	MaxBatch      = 500     // entries in one batch
	MaxPlanSteps  = 200     // steps in one plan
	MaxPageSize   = 200     // sessions in one list page
	MaxEntryPage  = 500     // entries in one session read
	MaxRequestLen = 8 << 20 // bytes in one request body
	// MaxTokens bounds an entry's usage.input_tokens and output_tokens: a
	// million times the largest context window of today's models, so a
	// real count always passes and a wrong one (2^63-1, a timestamp) is
	// refused, and a session's counters never come near wrapping.
	MaxTokens = 1_000_000_000_000
)

// Ellipsis ends text that was clipped.
const Ellipsis = "…"

// Clip trims surrounding white space from s and, when it is longer than max
// characters (runes), cuts it to max characters ending in an ellipsis.
// Invalid UTF-8 is replaced and NUL bytes dropped, so that what is stored
// is valid text on every engine.
//
// Secrets are redacted where values are stored (the service's store
// boundary), after clipping; so text that must be cut is redacted first,
// lest the cut leave part of a secret that no rule recognises any more.
func Clip(s string, max int) string {
	// NUL bytes are dropped: PostgreSQL cannot store them in text.
	s = strings.TrimSpace(strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", ""))
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	s = redact.String(s)
	cut := 0
	for i := range s {
		if cut == max-1 {
			return strings.TrimRightFunc(s[:i], isSpace) + Ellipsis
		}
		cut++
	}
	return s
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }
