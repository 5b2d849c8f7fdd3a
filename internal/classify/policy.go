package classify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Policy is a project's command policy: a decision for each class it
// names, and the project's own rules for its own tools. A class it leaves
// out gets the default decision (see DefaultDecision); the zero value is
// the default policy.
//
// In JSON a policy is one object: a member per class it names, an
// optional "rules" array and an optional "claims" object (ClaimsPolicy):
//
//	{"read_only": "allow", "network": "ask",
//	 "rules": [{"program": "deployctl", "words": ["push"], "class": "destructive",
//	            "reason": "pushes a release to production"}]}
type Policy struct {
	// Decisions holds the decisions the project chose, by class.
	Decisions map[Class]Decision
	// Rules teach the classifier the project's own programs.
	Rules []Rule
	// Claims is what the gate does with claims (see ClaimsPolicy).
	Claims ClaimsPolicy
}

// DefaultDecision is the decision for class c when the policy does not
// name it: destructive is denied; what the classifier cannot read, running
// as another user and reading secrets are put to the user; everything else
// is deferred to the harness's own permission flow. No class is allowed by
// default, because allow skips the user's own prompt.
func DefaultDecision(c Class) Decision {
	switch c {
	case Destructive:
		return Deny
	case Unknown, Privilege, SecretRead:
		return Ask
	}
	if !c.Valid() {
		return Ask
	}
	return Defer
}

// DefaultPolicy returns the default policy, every class named.
func DefaultPolicy() Policy {
	p := Policy{Decisions: map[Class]Decision{}}
	for _, c := range Classes {
		p.Decisions[c] = DefaultDecision(c)
	}
	return p
}

// Decide returns the decision for class c. Unknown is never treated more
// leniently than config_mutation: a command the classifier cannot read might
// change anything, so its decision is the stricter of the policy's unknown
// and config_mutation entries.
func (p Policy) Decide(c Class) Decision {
	d := p.lookup(c)
	if c == Unknown || !c.Valid() {
		d = d.Stricter(p.lookup(ConfigMutation))
	}
	return d
}

// lookup returns the policy's decision for c, falling back to the default.
func (p Policy) lookup(c Class) Decision {
	if d, ok := p.Decisions[c]; ok && d.Valid() {
		return d
	}
	return DefaultDecision(c)
}

// Effective returns the policy with every class named: what it chose, and
// the default for the rest. Rules are kept; the claims policy gets its
// defaults.
func (p Policy) Effective() Policy {
	e := Policy{Decisions: map[Class]Decision{}, Rules: p.Rules, Claims: p.Claims.effective()}
	for _, c := range Classes {
		e.Decisions[c] = p.lookup(c)
	}
	return e
}

// Limits on what a policy carries, so that one stored policy cannot make
// every classification slow.
const (
	maxRules        = 200
	maxRuleWords    = 8
	maxRulePattern  = 500
	maxRuleReason   = 300
	maxRuleProgram  = 100
	maxRuleWordSize = 100
)

// Rule teaches the classifier one of the project's own programs. It
// matches a simple command (after wrappers such as sudo, env and bash -c
// are unwrapped) whose program is Program, whose leading words are Words,
// and whose arguments match Pattern; every part given must match. The
// command then gets Class, with Reason as the rule a person reads.
//
// A rule may raise the class the classifier would give, and may set the
// class of a command the classifier cannot read (unknown), but it never
// lowers a class the classifier knows: a rule that says `rm` is read_only
// leaves `rm -rf /` destructive.
type Rule struct {
	// Program is the program's name as typed, without its directory
	// (deployctl, make, npm); matched without regard to case.
	Program string `json:"program"`
	// Words are the leading operands after the program, in order, options
	// skipped: ["run", "deploy"] matches `npm run deploy` and
	// `npm --silent run deploy`.
	Words []string `json:"words,omitempty"`
	// Pattern is a regular expression (Go syntax) searched for in the
	// arguments after the program, joined by single spaces.
	Pattern string `json:"pattern,omitempty"`
	// Class is the class a matching command gets.
	Class Class `json:"class"`
	// Reason says why, in words a person understands.
	Reason string `json:"reason"`

	re *regexp.Regexp // Pattern, compiled by Validate or ParsePolicy
}

// Validate reports the first problem with the policy, saying what to fix:
// a class or decision that does not exist, or a rule that cannot work. It
// compiles the rules' patterns.
func (p *Policy) Validate() error {
	keys := make([]string, 0, len(p.Decisions))
	for c := range p.Decisions {
		keys = append(keys, string(c))
	}
	sort.Strings(keys) // report problems in a stable order
	for _, k := range keys {
		c := Class(k)
		if !c.Valid() {
			return fmt.Errorf("policy names unknown class %q (classes are %s)", k, classNames())
		}
		if d := p.Decisions[c]; !d.Valid() {
			return fmt.Errorf("policy gives class %q the decision %q (decisions are %s)", k, d, decisionNames())
		}
	}
	if len(p.Rules) > maxRules {
		return fmt.Errorf("policy has %d rules; the limit is %d", len(p.Rules), maxRules)
	}
	for i := range p.Rules {
		if err := p.Rules[i].validate(); err != nil {
			return fmt.Errorf("rules[%d]: %w", i, err)
		}
	}
	return p.Claims.validate()
}

// validate checks one rule and compiles its pattern.
func (r *Rule) validate() error {
	prog := strings.TrimSpace(r.Program)
	switch {
	case prog == "":
		return fmt.Errorf(`name the program the rule is about in "program" (for example "deployctl")`)
	case len(prog) > maxRuleProgram:
		return fmt.Errorf("program is %d bytes long; the limit is %d", len(prog), maxRuleProgram)
	case strings.ContainsAny(prog, "/ \t\n"):
		return fmt.Errorf("program %q must be a bare program name, without a directory or spaces", r.Program)
	}
	r.Program = prog
	if len(r.Words) > maxRuleWords {
		return fmt.Errorf("words has %d entries; the limit is %d", len(r.Words), maxRuleWords)
	}
	for i, w := range r.Words {
		if w == "" || strings.ContainsAny(w, " \t\n") || len(w) > maxRuleWordSize {
			return fmt.Errorf("words[%d] is %q: each word must be one non-empty word of at most %d bytes", i, w, maxRuleWordSize)
		}
	}
	if len(r.Pattern) > maxRulePattern {
		return fmt.Errorf("pattern is %d bytes long; the limit is %d", len(r.Pattern), maxRulePattern)
	}
	if r.Pattern != "" {
		re, err := regexp.Compile(r.Pattern)
		if err != nil {
			return fmt.Errorf("pattern %q is not a regular expression (Go syntax): %w", r.Pattern, err)
		}
		r.re = re
	}
	if !r.Class.Valid() {
		return fmt.Errorf("class %q is not a class (classes are %s)", r.Class, classNames())
	}
	r.Reason = strings.TrimSpace(r.Reason)
	if r.Reason == "" {
		return fmt.Errorf(`say why in "reason" (for example "pushes a release to production")`)
	}
	if len(r.Reason) > maxRuleReason {
		return fmt.Errorf("reason is %d bytes long; the limit is %d", len(r.Reason), maxRuleReason)
	}
	return nil
}

// match reports whether the rule matches a command whose program name
// (base name, lower case) is name and whose arguments are args.
func (r *Rule) match(name string, args []string) bool {
	if !strings.EqualFold(r.Program, name) {
		return false
	}
	if len(r.Words) > 0 {
		i := 0
		for _, a := range args {
			if i == len(r.Words) {
				break
			}
			if strings.HasPrefix(a, "-") && len(a) > 1 {
				continue // an option: leading words skip them
			}
			if a != r.Words[i] {
				return false
			}
			i++
		}
		if i < len(r.Words) {
			return false
		}
	}
	if r.Pattern != "" {
		re := r.re
		if re == nil { // a rule built in Go without Validate
			var err error
			if re, err = regexp.Compile(r.Pattern); err != nil {
				return false
			}
		}
		if !re.MatchString(strings.Join(args, " ")) {
			return false
		}
	}
	return true
}

// ruleFor returns the first rule that matches the command, or nil.
func (p Policy) ruleFor(name string, args []string) *Rule {
	for i := range p.Rules {
		if p.Rules[i].match(name, args) {
			return &p.Rules[i]
		}
	}
	return nil
}

// MarshalJSON writes the policy as one object: a member per class it
// names, then "rules" when it has any, then "claims" when it sets any.
func (p Policy) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for _, c := range Classes {
		d, ok := p.Decisions[c]
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%q:%q", c, d)
	}
	if len(p.Rules) > 0 {
		rules, err := json.Marshal(p.Rules)
		if err != nil {
			return nil, err
		}
		if !first {
			b.WriteByte(',')
		}
		b.WriteString(`"rules":`)
		b.Write(rules)
		first = false
	}
	if p.Claims != (ClaimsPolicy{}) {
		claims, err := json.Marshal(p.Claims)
		if err != nil {
			return nil, err
		}
		if !first {
			b.WriteByte(',')
		}
		b.WriteString(`"claims":`)
		b.Write(claims)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the object MarshalJSON writes. It does not
// validate: call Validate (ParsePolicy does both).
func (p *Policy) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("a policy is a JSON object from class to decision, with an optional \"rules\" array: %w", err)
	}
	*p = Policy{}
	for k, v := range raw {
		if k == "rules" {
			if err := json.Unmarshal(v, &p.Rules); err != nil {
				return fmt.Errorf(`"rules" must be an array of {"program", "words", "pattern", "class", "reason"} objects: %w`, err)
			}
			continue
		}
		if k == "claims" {
			if err := json.Unmarshal(v, &p.Claims); err != nil {
				return fmt.Errorf(`"claims" must be an object %s: %w`, claimsPolicyExamples, err)
			}
			continue
		}
		var d string
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("policy member %q must be a decision (%s)", k, decisionNames())
		}
		if p.Decisions == nil {
			p.Decisions = map[Class]Decision{}
		}
		p.Decisions[Class(k)] = Decision(d)
	}
	return nil
}

// ParsePolicy reads and validates a policy from JSON such as
// {"network": "ask", "privilege": "deny"}. Classes it leaves out keep their
// default decision; only what it names is recorded, so a later change of
// the defaults reaches every project that did not choose otherwise.
func ParsePolicy(data []byte) (Policy, error) {
	var p Policy
	if err := json.Unmarshal(data, &p); err != nil {
		return Policy{}, err
	}
	if err := p.Validate(); err != nil {
		return Policy{}, err
	}
	return p, nil
}

func classNames() string {
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

func decisionNames() string {
	names := make([]string, len(Decisions))
	for i, d := range Decisions {
		names[i] = string(d)
	}
	return strings.Join(names, ", ")
}
