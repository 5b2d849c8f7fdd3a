package logbook_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/logbookhq/logbook/internal/logbook"
)

func TestDeriveBlocker(t *testing.T) {
	tests := []struct {
		name, message string
		want          logbook.Blocker
	}{
		{"api rate limit", "API Error: 429 Too Many Requests. Please wait and try again.", logbook.BlockerRateLimited},
		{"claude usage limit", "Claude usage limit reached. Your limit will reset at 5pm.", logbook.BlockerRateLimited},
		{"overloaded", "The API is overloaded right now (overloaded_error).", logbook.BlockerRateLimited},
		{"prompt too long", "Prompt is too long: 210000 tokens > 200000 maximum", logbook.BlockerContextExhausted},
		{"context window", "I've run out of room in the context window to continue this refactor.", logbook.BlockerContextExhausted},
		{"approval", "I'm still waiting for approval to run `terraform apply`; the request timed out.", logbook.BlockerApprovalTimeout},
		{"permission timeout", "The permission request timed out before anyone answered.", logbook.BlockerApprovalTimeout},
		{"interrupted", "[Request interrupted by user]", logbook.BlockerUserAbandoned},
		{"cancelled", "The user cancelled the operation, so I stopped here.", logbook.BlockerUserAbandoned},
		{"classifier", "The command `rm -rf build` was denied by policy, so I could not clean the folder.", logbook.BlockerClassifierOverreach},
		{"hook", "My edit was blocked by a hook (PreToolUse hook returned deny).", logbook.BlockerClassifierOverreach},
		{"refusal", "I can't help with bypassing the licence check.", logbook.BlockerModelRefusal},
		{"decline", "I must decline to write that exploit.", logbook.BlockerModelRefusal},
		{"tool error", "The build failed with exit code 2: undefined: foo", logbook.BlockerToolError},
		{"traceback", "Running the script gave a Traceback (most recent call last): KeyError 'id'", logbook.BlockerToolError},
		{"permission denied", "bash: ./deploy.sh: Permission denied", logbook.BlockerToolError},
		{"tests failed", "3 tests failed in pkg/api; I could not find the cause.", logbook.BlockerToolError},
		{"nothing to go on", "I have finished part of the migration.", logbook.BlockerUnknown},
		{"empty", "", logbook.BlockerUnknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := logbook.DeriveBlocker(tc.message); got != tc.want {
				t.Errorf("DeriveBlocker(%q) = %s, want %s", tc.message, got, tc.want)
			}
		})
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"short stays", "  hello \n", 10, "hello"},
		{"exact stays", "abcde", 5, "abcde"},
		{"long clips with ellipsis", "abcdefgh", 5, "abcd…"},
		{"counts characters not bytes", "ééééééé", 4, "ééé…"},
		{"invalid utf-8 replaced", "a\xffb", 10, "a\uFFFDb"},
		{"no trailing space before ellipsis", "ab   cdef", 5, "ab…"},
		// Cut text is redacted first: a key cut short is no longer one.
		{"a secret at the cut is redacted", "key AKIA" + "IOSFODNN7EXAMPLE", 16, "key [REDACTED:a…"},
		{"short text is left to the store", "key AKIA" + "IOSFODNN7EXAMPLE", 100, "key AKIA" + "IOSFODNN7EXAMPLE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := logbook.Clip(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
			if utf8.RuneCountInString(got) > tc.max {
				t.Errorf("Clip(%q, %d) is %d characters long", tc.in, tc.max, utf8.RuneCountInString(got))
			}
		})
	}
}

func TestDeriveTitle(t *testing.T) {
	long := strings.Repeat("word ", 100)
	tests := []struct {
		name string
		s    logbook.Session
		want string
	}{
		{"goal first", logbook.Session{Goal: "ship it", GivenTitle: "t", Prompt: "p", FirstAssistant: "a"}, "ship it"},
		{"then given title", logbook.Session{GivenTitle: "t", Prompt: "p", FirstAssistant: "a"}, "t"},
		{"then first prompt, first line", logbook.Session{Prompt: "\nfix the login bug\nthen test", FirstAssistant: "a"}, "fix the login bug"},
		{"then assistant", logbook.Session{FirstAssistant: "Looking at the repo"}, "Looking at the repo"},
		{"nothing", logbook.Session{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.DeriveTitle()
			if tc.s.Title != tc.want {
				t.Errorf("title = %q, want %q", tc.s.Title, tc.want)
			}
		})
	}
	s := logbook.Session{Prompt: long}
	s.DeriveTitle()
	if n := utf8.RuneCountInString(s.Title); n != logbook.MaxTitle || !strings.HasSuffix(s.Title, "…") {
		t.Errorf("a long prompt's title is %d characters (%q…), want %d ending in an ellipsis", n, s.Title[:20], logbook.MaxTitle)
	}
}

func TestStateAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	s := logbook.Session{Status: logbook.StatusActive, LastSeenAt: now.Add(-9 * time.Minute)}
	if got := s.StateAt(now, 10*time.Minute); got != logbook.StateActive {
		t.Errorf("seen 9m ago: %s, want active", got)
	}
	s.LastSeenAt = now.Add(-11 * time.Minute)
	if got := s.StateAt(now, 10*time.Minute); got != logbook.StateIdle {
		t.Errorf("seen 11m ago: %s, want idle", got)
	}
	s.Status = logbook.StatusEnded
	if got := s.StateAt(now, 10*time.Minute); got != logbook.StateEnded {
		t.Errorf("ended: %s, want ended", got)
	}
}

func TestEntryNormalize(t *testing.T) {
	e := logbook.Entry{Kind: logbook.KindSkill, Text: strings.Repeat("s", 300)}
	if err := e.Normalize("entries[0]"); err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(e.Text); n != logbook.MaxModel {
		t.Errorf("skill name is %d characters, want %d", n, logbook.MaxModel)
	}
	bad := logbook.Entry{Kind: logbook.KindMessage}
	err := bad.Normalize("entries[2]")
	var ve *logbook.ValidationError
	if err == nil || !strings.Contains(err.Error(), "entries[2].role") {
		t.Errorf("a message without a role: err = %v, want one naming entries[2].role", err)
	} else if !errors.As(err, &ve) {
		t.Errorf("err is %T, want *ValidationError", err)
	}
	big := logbook.Entry{Kind: logbook.KindToolResult, Payload: []byte(`"` + strings.Repeat("x", logbook.MaxPayload) + `"`)}
	if err := big.Normalize("e"); err != nil {
		t.Fatal(err)
	}
	if len(big.Payload) > logbook.MaxPayload {
		t.Errorf("a payload over the limit kept %d bytes", len(big.Payload))
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"90m", now.Add(-90 * time.Minute), true},
		{"36h", now.Add(-36 * time.Hour), true},
		{"7d", now.AddDate(0, 0, -7), true},
		{"0.5d", now.Add(-12 * time.Hour), true},
		{"2026-11-01", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), true},
		{"2026-11-01T08:30:00Z", time.Date(2026, 11, 1, 8, 30, 0, 0, time.UTC), true},
		{"-7d", time.Time{}, false},
		{"-1h", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"7", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := logbook.ParseTime(tt.in, now)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		name, in, want string
		invalid        bool
	}{
		{"plain", "engineer-1", "engineer-1", false},
		{"inner spaces and unicode", "équipe données", "équipe données", false},
		{"surrounding spaces trimmed", "  demo \n", "demo", false},
		{"empty", "   ", "", false},
		{"NUL", "a\x00", "", true},
		{"NUL inside", "a\x00b", "", true},
		{"tab inside", "a\tb", "", true},
		{"newline inside", "a\nb", "", true},
		{"DEL", "a\x7f", "", true},
		{"C1 control", "a\u0085b", "", true},
		{"not UTF-8", "a\xff", "", true},
		{"overlong encoding", "\xc0\xae", "", true},
		{"clipped", strings.Repeat("x", logbook.MaxID+5), strings.Repeat("x", logbook.MaxID-1) + logbook.Ellipsis, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := logbook.Name("project", tc.in, logbook.MaxID)
			var invalid *logbook.ValidationError
			switch {
			case tc.invalid && (!errors.As(err, &invalid) || invalid.Field != "project"):
				t.Errorf("Name(%q) = %q, %v; want a validation error of field project", tc.in, got, err)
			case !tc.invalid && (err != nil || got != tc.want):
				t.Errorf("Name(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// TestProblemTypesRoundTrip: every error of the package has its own problem
// type, and the type names the same error back.
func TestProblemTypesRoundTrip(t *testing.T) {
	seen := map[string]bool{}
	for _, err := range []error{logbook.ErrEnded, logbook.ErrInvalid, logbook.ErrUnauthorized, logbook.ErrForbidden, logbook.ErrNotFound, logbook.ErrConflict, logbook.ErrUnavailable, logbook.ErrLimited} {
		uri := logbook.ProblemType(fmt.Errorf("wrapped: %w", err))
		if uri == "about:blank" || seen[uri] {
			t.Errorf("%v: problem type %q (not its own)", err, uri)
		}
		seen[uri] = true
		if back := logbook.ErrorOfProblemType(uri); back != err {
			t.Errorf("%q turns back into %v, want %v", uri, back, err)
		}
	}
	if got := logbook.ProblemType(logbook.Invalid("x", "bad")); got != "urn:logbook:problem:invalid" {
		t.Errorf("a validation error: %q", got)
	}
	held := &logbook.ClaimConflictError{Subject: "a"}
	if got := logbook.ProblemType(held); got != logbook.ProblemTypeClaimed || !errors.Is(logbook.ErrorOfProblemType(got), logbook.ErrConflict) {
		t.Errorf("a claim conflict: %q", got)
	}
	if logbook.ProblemType(errors.New("boom")) != "about:blank" || logbook.ErrorOfProblemType("about:blank") != nil {
		t.Error("an unknown error must have no type")
	}
}

func TestNormalizeSubject(t *testing.T) {
	secret := "aws_secret_access_key=wJalrXUtnFEMI//K7MDENG/" + "bPxRfiCYEXAMPLE"
	tests := []struct{ in, want string }{
		{"./src/../lib/a.go", "lib/a.go"},
		{"src//api/", "src/api/"},
		{"issue:12", "issue:12"},
		{"https://github.com/org/repo/pull/7", "https://github.com/org/repo/pull/7"},
		// Cleaning would turn "//" into "/" and hide the key from redaction.
		{"conf/" + secret, "conf/" + secret},
	}
	for _, tc := range tests {
		if got := logbook.NormalizeSubject(tc.in); got != tc.want {
			t.Errorf("NormalizeSubject(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
