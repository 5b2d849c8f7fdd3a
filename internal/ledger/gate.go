package ledger

import (
	"encoding/json"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/logbook"
)

// MaxGatePaths bounds the paths one gate decision checks.
const MaxGatePaths = 200

// GateParams ask the claims gate whether a session may write files (POST
// /v1/gate): the files themselves, or the tool call that would write them.
type GateParams struct {
	// Project is the project of the paths; with a session, the session's.
	Project string `json:"project,omitempty"`
	// SessionID is the session about to write. Its own claims, its
	// parent's (and theirs, up the tree) and its subagents' pass. Without
	// one, every live claim counts: a person's commit, say.
	SessionID string `json:"session_id,omitempty"`
	// Paths are the files it would write: relative to the repository's
	// top folder (the form claims take), or absolute outside it. The
	// caller that sees the files resolves them (symbolic links, the
	// working directory): the hooks do.
	Paths []string `json:"paths,omitempty"`
	// Tool and Input name a tool call instead (or as well), as a hook
	// receives it: the files it writes are found as the hooks find them
	// (classify.WrittenPaths), taken as relative to the repository's top
	// folder.
	Tool  string          `json:"tool_name,omitempty"`
	Input json.RawMessage `json:"tool_input,omitempty"`
}

// GateAnswer is the claims gate's decision on a write.
type GateAnswer struct {
	// Decision is defer when no other live session holds a path (the
	// harness decides, as without logbook), else the project's claims
	// guard: deny by default, or ask.
	Decision classify.Decision `json:"decision"`
	// Reason names the first held path, its holder (session, actor,
	// agent), the holder's goal and when the claim expires.
	Reason string `json:"reason,omitempty"`
	// Paths are the paths checked, cleaned.
	Paths []string `json:"paths"`
	// Held lists each checked path another live session holds, with the
	// claim that holds it.
	Held []HeldPath `json:"held,omitempty"`
	// Claimed lists the claims this write took or renewed for the
	// session, when the project's policy has writes claim their files.
	Claimed []logbook.Claim `json:"claimed,omitempty"`
}

// HeldPath is a path another live session holds.
type HeldPath struct {
	Path  string        `json:"path"`
	Claim logbook.Claim `json:"claim"`
	// Holder describes the holding session: its actor, agent and goal.
	Holder GateHolder `json:"holder"`
}

// GateHolder is what a writer is told of the session that holds a path.
type GateHolder struct {
	SessionID string `json:"session_id"`
	Actor     string `json:"actor"`
	Agent     string `json:"agent,omitempty"`
	Harness   string `json:"harness,omitempty"`
	Goal      string `json:"goal,omitempty"`
	Title     string `json:"title,omitempty"`
}
