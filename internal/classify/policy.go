package classify

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Policy maps each class to a decision. A project stores one; a class it
// leaves out gets the DefaultPolicy decision. The zero value (nil) is the
// default policy.
type Policy map[Class]Decision

// DefaultPolicy allows reading and workspace writes, denies destructive
// commands and asks about everything else, unknown included.
func DefaultPolicy() Policy {
	return Policy{
		ReadOnly:       Allow,
		WorkspaceWrite: Allow,
		Network:        Ask,
		ConfigMutation: Ask,
		ServiceControl: Ask,
		PackageInstall: Ask,
		Privilege:      Ask,
		Destructive:    Deny,
		Unknown:        Ask,
	}
}

// Decide returns the decision for class c. Unknown is never treated more
// leniently than config_mutation: a command the classifier cannot read might
// change anything, so its decision is the stricter of the policy's unknown
// and config_mutation entries.
func (p Policy) Decide(c Class) Decision {
	d := p.lookup(c)
	if c == Unknown || !c.Valid() {
		d = d.stricter(p.lookup(ConfigMutation))
	}
	return d
}

// lookup returns the policy's decision for c, falling back to the default
// policy, and to ask for a value that is not a class.
func (p Policy) lookup(c Class) Decision {
	if d, ok := p[c]; ok && d.Valid() {
		return d
	}
	switch c {
	case ReadOnly, WorkspaceWrite:
		return Allow
	case Destructive:
		return Deny
	}
	return Ask
}

// Validate reports the first entry that names no class or no decision, with
// the valid names, so a person can fix the policy.
func (p Policy) Validate() error {
	keys := make([]string, 0, len(p))
	for c := range p {
		keys = append(keys, string(c))
	}
	sort.Strings(keys) // report problems in a stable order
	for _, k := range keys {
		c := Class(k)
		if !c.Valid() {
			return fmt.Errorf("classify: policy names unknown class %q (classes are %s)", k, classNames())
		}
		if d := p[c]; !d.Valid() {
			return fmt.Errorf("classify: policy gives class %q the decision %q (decisions are allow, ask, deny)", k, d)
		}
	}
	return nil
}

// ParsePolicy reads a policy from a JSON object such as
// {"network": "allow", "privilege": "deny"}. Classes it leaves out keep
// their DefaultPolicy decision; the result always has every class.
func ParsePolicy(data []byte) (Policy, error) {
	var raw map[string]string
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("classify: reading policy JSON: %w", err)
	}
	p := DefaultPolicy()
	given := Policy{}
	for k, v := range raw {
		given[Class(k)] = Decision(v)
	}
	if err := given.Validate(); err != nil {
		return nil, err
	}
	for c, d := range given {
		p[c] = d
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
