package hook

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Harness names logbook sessions carry.
const (
	HarnessClaude = "claude-code"
	HarnessCodex  = "codex"
)

// Record is one unit of work for the server, written to the spool before
// it is delivered: make sure Session exists (starting it is idempotent and
// doubles as a heartbeat), append Entries and Touched to it, then End it
// when End is set. A record is self-contained, so it can be delivered long
// after it was made, by another process.
type Record struct {
	// ID names the record in reports; it plays no part in delivery.
	ID string `json:"id"`
	// Event is the hook event the record came from.
	Event   string          `json:"event"`
	At      time.Time       `json:"at"`
	Session SessionSpec     `json:"session"`
	Entries []logbook.Entry `json:"entries,omitempty"`
	Touched []Touch         `json:"touched,omitempty"`
	End     *End            `json:"end,omitempty"`
}

// SessionSpec is how a record names its session: the start request that
// finds or makes it. A subagent names its parent, which is started first
// so its logbook id can be given as parent_id.
type SessionSpec struct {
	Project          string       `json:"project,omitempty"`
	Harness          string       `json:"harness"`
	HarnessSessionID string       `json:"harness_session_id"`
	Model            string       `json:"model,omitempty"`
	AgentType        string       `json:"agent_type,omitempty"`
	Branch           string       `json:"branch,omitempty"`
	HeadCommit       string       `json:"head_commit,omitempty"`
	Parent           *SessionSpec `json:"parent,omitempty"`
}

// identity is what makes two specs the same session on the server.
func (s SessionSpec) identity() string {
	return s.Project + "\x00" + s.Harness + "\x00" + s.HarnessSessionID
}

// Touch is something a session touched; the hook records files.
type Touch struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// End is how a record ends its session, as the API takes it.
type End = ledger.EndParams

// newRecordID returns a random id for a record.
func newRecordID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stableKey derives an idempotency key from the parts: the same parts give
// the same key, so the same event reported twice is stored once. prefix
// keeps keys readable ("prompt:3f2a…").
func stableKey(prefix string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return prefix + ":" + hex.EncodeToString(h.Sum(nil))[:32]
}

// compactJSON is raw JSON without insignificant white space, so the same
// value gives the same key whatever its formatting.
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// transcriptTail is how much of a transcript transcriptMarker reads.
const transcriptTail = 64 << 10

// transcriptMarker returns the uuid and timestamp of the last complete
// line of a Claude Code transcript, or "" when it cannot be read. It marks
// where in the conversation an event happened, so the same prompt sent
// twice in a session gets two keys while a hook that fires twice for the
// same prompt gets one. It reads only the file's tail.
func transcriptMarker(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	start := max(info.Size()-transcriptTail, 0)
	buf := make([]byte, info.Size()-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(buf, "\n"), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var line struct {
			UUID      string `json:"uuid"`
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(lines[i], &line) == nil && (line.UUID != "" || line.Timestamp != "") {
			return line.UUID + "@" + line.Timestamp
		}
	}
	return ""
}

// blockerFor maps a StopFailure error type (or code) to a logbook blocker.
func blockerFor(errorType, errorCode string) logbook.Blocker {
	for _, s := range []string{errorType, errorCode} {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "rate_limit", "rate_limited", "rate_limit_error", "overloaded", "overloaded_error", "429", "529":
			return logbook.BlockerRateLimited
		case "context_length", "context_length_exceeded", "prompt_too_long", "context_exhausted", "context_window":
			return logbook.BlockerContextExhausted
		}
	}
	return logbook.BlockerUnknown
}
