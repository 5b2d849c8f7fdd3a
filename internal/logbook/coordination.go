package logbook

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/redact"
)

// Claim is a lease a session holds on a subject for a while, so two agents
// stay off the same work. A subject ending in "/" is a path prefix.
type Claim struct {
	ID         string     `json:"id"`
	Project    string     `json:"project"`
	SessionID  string     `json:"session_id"`
	Actor      string     `json:"actor"`
	Subject    string     `json:"subject"`
	TTLSeconds int64      `json:"ttl_seconds"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	ReleasedAt *time.Time `json:"released_at,omitempty"`
	// Why it ended: "released", "session ended", "expired".
	ReleaseReason string `json:"release_reason,omitempty" redact:"text"`
	// Auto marks a claim the claims gate took for the session's first
	// write to the file (the project's auto claims), not one it asked for.
	Auto bool `json:"auto,omitempty"`
	// Title of the holding session, filled when a claim is shown to
	// someone who must decide whether to wait for it.
	Title string `json:"title,omitempty" redact:"text"`
}

// Claim TTL limits, in minutes.
const (
	DefaultClaimTTL = 30
	MaxClaimTTL     = 1440
)

// Release reasons.
const (
	ReleaseReleased     = "released"
	ReleaseSessionEnded = "session ended"
	ReleaseExpired      = "expired"
)

// opaqueSubject matches subjects that name a thing rather than a path:
// issue:12, pull:7, branch:feature-x, vm:101.
var opaqueSubject = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*:`)

// NormalizeSubject cleans a claim subject or touched path. Subjects like
// "issue:12" are kept as they are; anything else is a path, cleaned
// ("./a/../b" becomes "b") and keeping a trailing "/" that makes it a prefix.
// A subject holding a secret is kept as it is too: cleaning could change the
// secret's shape ("//" in a key) so that it is no longer recognised where
// it is redacted, on its way into the store.
func NormalizeSubject(subject string) string {
	subject = Clip(subject, MaxLongText)
	if subject == "" || opaqueSubject.MatchString(subject) || redact.String(subject) != subject {
		return subject
	}
	prefix := strings.HasSuffix(subject, "/")
	clean := path.Clean(subject)
	clean = strings.TrimPrefix(clean, "./")
	if clean == "." {
		clean = ""
	}
	if prefix && clean != "/" && clean != "" {
		clean += "/"
	}
	return clean
}

// SubjectsConflict reports whether claims on a and b (both normalized)
// collide: equal subjects, or one a "/"-ended prefix of the other.
func SubjectsConflict(a, b string) bool {
	return a == b ||
		(strings.HasSuffix(a, "/") && strings.HasPrefix(b, a)) ||
		(strings.HasSuffix(b, "/") && strings.HasPrefix(a, b))
}

// ClaimConflictError says who holds a subject another session asked for.
// It matches ErrConflict with errors.Is.
type ClaimConflictError struct {
	Subject string
	Holder  Claim
}

func (e *ClaimConflictError) Error() string {
	return "subject " + e.Subject + " is held by session " + e.Holder.SessionID + " (" + e.Holder.Actor + `, "` +
		e.Holder.Title + `") until ` + e.Holder.ExpiresAt.Format(time.RFC3339) + " via its claim on " + e.Holder.Subject
}

// Is makes a *ClaimConflictError match ErrConflict.
func (e *ClaimConflictError) Is(target error) bool { return target == ErrConflict }

// Touch is something a session touched: a file it edited, a command it ran.
type Touch struct {
	Kind    string    `json:"kind"` // "file" or "command"
	Value   string    `json:"value"`
	FirstAt time.Time `json:"first_at"`
	Count   int64     `json:"count"`
}

// Touch kinds.
const (
	TouchFile    = "file"
	TouchCommand = "command"
)

// Link ties a session to an issue or pull request.
type Link struct {
	Kind string `json:"kind"` // "issue" or "pull"
	Ref  string `json:"ref"`  // "12"
	Via  string `json:"via"`  // "attached", "named" or "branch"
}

// Link vias.
const (
	ViaAttached = "attached"
	ViaNamed    = "named"
	ViaBranch   = "branch"
)

var issueRef = regexp.MustCompile(`(?:^|[^\w&/])#(\d{1,9})\b`)

// NamedIssues returns the issue numbers text names as #N, in order, once each.
func NamedIssues(text string) []string {
	var refs []string
	seen := map[string]bool{}
	for _, m := range issueRef.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			refs = append(refs, m[1])
		}
	}
	return refs
}

// Event is a durable, globally ordered record of a change, written in the
// same transaction as the change and streamed to followers.
type Event struct {
	ID        int64           `json:"id"`
	Project   string          `json:"project"`
	Type      string          `json:"type"`
	SessionID string          `json:"session_id,omitempty"`
	At        time.Time       `json:"at"`
	Data      json.RawMessage `json:"data"`
}

// Event types.
const (
	EventSessionStarted    = "session.started"
	EventSessionEnded      = "session.ended"
	EventSessionAppended   = "session.appended"
	EventSessionProgressed = "session.progressed"
	EventClaimTaken        = "claim.taken"
	EventClaimReleased     = "claim.released"
	EventClaimExpired      = "claim.expired"
	// EventAlertRaised: an alert rule raised an alert (logbook.Alert),
	// which its webhook is about to receive.
	EventAlertRaised = "alert.raised"
)

// ProgressEvery is how often at most a session emits session.progressed.
const ProgressEvery = 5 * time.Second

// AppendedEvery is how often at most a session emits session.appended:
// entries appended within it are announced together, by one event that
// carries their count and the last seq. An agent's hooks append many
// entries a second; one event each would make the outbox as large as the
// transcript and flood every follower.
const AppendedEvery = 250 * time.Millisecond

// SeenEvery is how often at most a heartbeat moves a session's
// last_seen_at: it is precise to a second.
const SeenEvery = time.Second
