package logbook

import "strings"

// Blocker says why a session that did not succeed got stuck.
type Blocker string

// Blockers. A caller may give any of these when ending a session; when it
// gives none for a partial or failed session, DeriveBlocker reads the last
// assistant message.
const (
	BlockerApprovalTimeout     Blocker = "approval_timeout"
	BlockerUserAbandoned       Blocker = "user_abandoned"
	BlockerClassifierOverreach Blocker = "classifier_overreach"
	BlockerModelRefusal        Blocker = "model_refusal"
	BlockerToolError           Blocker = "tool_error"
	BlockerRateLimited         Blocker = "rate_limited"
	BlockerContextExhausted    Blocker = "context_exhausted"
	BlockerUnknown             Blocker = "unknown"
)

// Blockers lists every blocker, in the order DeriveBlocker tries them.
var Blockers = []Blocker{
	BlockerRateLimited, BlockerContextExhausted, BlockerApprovalTimeout,
	BlockerUserAbandoned, BlockerClassifierOverreach, BlockerModelRefusal,
	BlockerToolError, BlockerUnknown,
}

// Valid reports whether b is a known blocker.
func (b Blocker) Valid() bool {
	for _, known := range Blockers {
		if b == known {
			return true
		}
	}
	return false
}

// blockerSigns are the phrases, lower case, that reveal each blocker in an
// assistant's last message. The order matters: a rate-limit message that
// also mentions a failed tool is a rate limit. Add phrases here as harnesses
// word things differently.
var blockerSigns = []struct {
	blocker Blocker
	phrases []string
}{
	{BlockerRateLimited, []string{
		"rate limit", "rate-limit", "ratelimit", "too many requests", "429",
		"usage limit", "quota exceeded", "overloaded",
	}},
	{BlockerContextExhausted, []string{
		"context window", "context length", "prompt is too long",
		"maximum context", "context limit", "out of context", "token limit",
		"too many tokens",
	}},
	{BlockerApprovalTimeout, []string{
		"waiting for approval", "approval timed out", "approval timeout",
		"permission request timed out", "no response to the permission",
		"timed out waiting for", "awaiting approval",
	}},
	{BlockerUserAbandoned, []string{
		"interrupted by user", "user interrupted", "user cancelled",
		"user canceled", "user abandoned", "cancelled by the user",
		"canceled by the user", "user stopped", "session was abandoned",
	}},
	{BlockerClassifierOverreach, []string{
		"blocked by the classifier", "classifier blocked", "denied by policy",
		"blocked by policy", "hook denied", "blocked by a hook",
		"blocked by hook", "pretooluse hook", "not allowed to run",
		"was denied",
	}},
	{BlockerModelRefusal, []string{
		"i can't help with", "i cannot help with", "i can't assist",
		"i cannot assist", "i won't be able to help", "i'm not able to help",
		"i am not able to help", "i must decline", "i can't do that",
		"i cannot do that", "against my guidelines",
	}},
	{BlockerToolError, []string{
		"error:", "exception", "traceback", "command failed", "exit code",
		"exited with", "failed with", "no such file", "permission denied",
		"segmentation fault", "build failed", "tests failed", "test failed",
		"could not", "couldn't", "unable to",
	}},
}

// DeriveBlocker reads the last assistant message of a session that ended
// partial or failed and says why it got stuck, or BlockerUnknown.
func DeriveBlocker(lastAssistant string) Blocker {
	text := strings.ToLower(lastAssistant)
	for _, sign := range blockerSigns {
		for _, phrase := range sign.phrases {
			if strings.Contains(text, phrase) {
				return sign.blocker
			}
		}
	}
	return BlockerUnknown
}
