package classify

// Decision is what a policy says to do with a command: allow it, ask a
// person first, or deny it.
type Decision string

// The decisions, from most to least permissive.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Valid reports whether d is allow, ask or deny.
func (d Decision) Valid() bool { return d == Allow || d == Ask || d == Deny }

// stricter returns whichever of d and e permits less.
func (d Decision) stricter(e Decision) Decision {
	rank := func(x Decision) int {
		switch x {
		case Allow:
			return 0
		case Ask:
			return 1
		}
		return 2
	}
	if rank(e) > rank(d) {
		return e
	}
	return d
}

// Verdict is what Classify says of a command line.
type Verdict struct {
	// Class is the worst class of any command the line would run.
	Class Class `json:"class"`
	// Decision is what the policy gives Class.
	Decision Decision `json:"decision"`
	// Reasons has one entry per command found (wrappers included), in the
	// order they appear, each naming the rule that judged it.
	Reasons []Reason `json:"reasons"`
	// Commands lists the argv of every inner command found after
	// unwrapping, in order. Words only known at run time keep their
	// source text ($HOME, $(date)).
	Commands [][]string `json:"commands"`
}

// Reason explains the class of one command of the line.
type Reason struct {
	// Command is the command as the rule saw it, shell-quoted.
	Command string `json:"command"`
	// Class is the class the rule gave it.
	Class Class `json:"class"`
	// Rule says, in words a person understands, why.
	Rule string `json:"rule"`
}

// Summary returns the reason that decided the verdict: the first reason
// whose class is the verdict's class. It returns the zero Reason when there
// are no reasons (an empty command line).
func (v Verdict) Summary() Reason {
	for _, r := range v.Reasons {
		if r.Class == v.Class {
			return r
		}
	}
	return Reason{}
}
