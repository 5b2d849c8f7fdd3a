package classify

// Decision is what a policy says to do with a command or a tool call.
type Decision string

// The decisions, from most to least permissive.
//
// Defer is the gate saying nothing: the harness's own permission flow
// decides, exactly as if logbook were not there (for Claude Code, the
// PreToolUse hook exits 0 without a permissionDecision). Allow goes further
// and skips the user's own prompt, so a policy gives it only where a
// project chose it explicitly: the gate never grants more than the harness
// would.
const (
	Allow Decision = "allow" // approve without asking the user: only where the project's policy opts in
	Defer Decision = "defer" // say nothing: the harness's own permission settings decide
	Ask   Decision = "ask"   // ask the user first, whatever the harness's settings say
	Deny  Decision = "deny"  // refuse, with the reason
)

// Decisions lists the decisions from most to least permissive.
var Decisions = []Decision{Allow, Defer, Ask, Deny}

// Valid reports whether d is allow, defer, ask or deny.
func (d Decision) Valid() bool { return d.strictness() >= 0 }

// strictness orders decisions: allow 0, defer 1, ask 2, deny 3; -1 for a
// value that is not a decision.
func (d Decision) strictness() int {
	switch d {
	case Allow:
		return 0
	case Defer:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return -1
}

// Stricter returns whichever of d and e permits less. A value that is not
// a decision counts as ask: what cannot be read is put to a person.
func (d Decision) Stricter(e Decision) Decision {
	if !d.Valid() {
		d = Ask
	}
	if !e.Valid() {
		e = Ask
	}
	if e.strictness() > d.strictness() {
		return e
	}
	return d
}

// Verdict is what Classify says of a command line.
type Verdict struct {
	// Class is the worst class of any command the line would run.
	Class Class `json:"class"`
	// Decision is the strictest decision the policy gives any command of
	// the line: a line that reads a secret and then does something the
	// policy defers is still asked about.
	Decision Decision `json:"decision"`
	// Reasons has one entry per command found (wrappers included), in the
	// order they appear, each naming the rule that judged it.
	Reasons []Reason `json:"reasons"`
	// Commands lists the argv of every inner command found after
	// unwrapping, in order. Words only known at run time keep their
	// source text ($HOME, $(date)).
	Commands [][]string `json:"commands"`
	// Writes lists the files the line writes, removes, moves or creates,
	// as far as the classifier sees them, once each: as the line names
	// them from the directory it starts in (after any cd it makes), or
	// absolute, or under ~. A path only known at run time ($VAR, a glob,
	// an xargs item) is not listed. The claims gate checks these paths.
	Writes []string `json:"writes,omitempty"`
}

// Reason explains the class of one command of the line.
type Reason struct {
	// Command is the command as the rule saw it, shell-quoted.
	Command string `json:"command"`
	// Class is the class the rule gave it.
	Class Class `json:"class"`
	// Rule says, in words a person understands, why.
	Rule string `json:"rule"`
	// Decision is what the policy gives Class.
	Decision Decision `json:"decision,omitempty"`
}

// Summary returns the reason that decided the verdict: of the reasons
// whose decision is the verdict's, the first of the riskiest class; without
// decisions on the reasons, the first whose class is the verdict's. It
// returns the zero Reason when there are no reasons (an empty command line).
func (v Verdict) Summary() Reason {
	best := -1
	for i, r := range v.Reasons {
		if r.Decision == v.Decision && (best < 0 || r.Class.Rank() > v.Reasons[best].Class.Rank()) {
			best = i
		}
	}
	if best >= 0 {
		return v.Reasons[best]
	}
	for _, r := range v.Reasons {
		if r.Class == v.Class {
			return r
		}
	}
	return Reason{}
}
