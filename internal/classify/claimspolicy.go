package classify

import "fmt"

// ClaimsPolicy is what a project's gate does with claims: how a write to a
// path another live session claimed is answered, and whether a session's
// writes claim the files they change. In a policy's JSON it is the
// "claims" member:
//
//	{"claims": {"guard": "ask", "auto": true, "ttl_minutes": 15}}
type ClaimsPolicy struct {
	// Guard is the decision for a write to a path another live session
	// holds: deny (the default), ask (a person decides), or defer (the
	// guard is off: claims are advisory again).
	Guard Decision `json:"guard,omitempty"`
	// Auto makes a session's first write to a file claim that file for
	// the session, renewed while the session writes and heartbeats, and
	// released when it ends or is swept as gone.
	Auto bool `json:"auto,omitempty"`
	// TTLMinutes is how long an automatic claim lasts without renewal
	// (default 30, at most 1440).
	TTLMinutes int `json:"ttl_minutes,omitempty"`
}

// Defaults of a ClaimsPolicy.
const (
	DefaultClaimsGuard   = Deny
	DefaultAutoClaimTTL  = 30   // minutes
	maxAutoClaimTTL      = 1440 // minutes, logbook.MaxClaimTTL
	claimsPolicyExamples = `{"guard": "deny" or "ask" or "defer", "auto": true or false, "ttl_minutes": 1 to 1440}`
)

// GuardDecision is the decision for a write to a path another live session
// claimed: the policy's guard, deny when it names none.
func (c ClaimsPolicy) GuardDecision() Decision {
	if c.Guard == "" {
		return DefaultClaimsGuard
	}
	return c.Guard
}

// AutoClaimTTL is how long, in minutes, an automatic claim lasts without
// renewal.
func (c ClaimsPolicy) AutoClaimTTL() int {
	if c.TTLMinutes <= 0 {
		return DefaultAutoClaimTTL
	}
	return c.TTLMinutes
}

// effective returns c with the defaults filled in.
func (c ClaimsPolicy) effective() ClaimsPolicy {
	return ClaimsPolicy{Guard: c.GuardDecision(), Auto: c.Auto, TTLMinutes: c.AutoClaimTTL()}
}

// validate says what to fix in a claims policy.
func (c ClaimsPolicy) validate() error {
	switch c.Guard {
	case "", Deny, Ask, Defer:
	default:
		return fmt.Errorf("claims.guard is %q; it is deny, ask or defer (off): %s", c.Guard, claimsPolicyExamples)
	}
	if c.TTLMinutes < 0 || c.TTLMinutes > maxAutoClaimTTL {
		return fmt.Errorf("claims.ttl_minutes is %d; give 1 to %d minutes: %s", c.TTLMinutes, maxAutoClaimTTL, claimsPolicyExamples)
	}
	return nil
}
