package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Decision is the hook's answer to a PreToolUse: what Claude Code should
// do with the tool call, and why, in words that name the inner command and
// the rule (or the claimed path and its holder).
type Decision struct {
	// Decision and Reason are read back as a logbook.GateDecision, which
	// gives the tool call its status (denied, asked) in the audit.
	Decision classify.Decision `json:"decision"`
	Reason   string            `json:"reason"`
	// For a Bash command: the command, its class and the classifier's reasons.
	Command string            `json:"command,omitempty"`
	Class   classify.Class    `json:"class,omitempty"`
	Reasons []classify.Reason `json:"reasons,omitempty"`
	// For an edit of a claimed path: the path and the claim that holds it.
	Path  string         `json:"path,omitempty"`
	Claim *logbook.Claim `json:"claim,omitempty"`
}

// Answer is Claude Code's PreToolUse hook output.
type Answer struct {
	HookSpecificOutput AnswerOutput `json:"hookSpecificOutput"`
}

// AnswerOutput is the PreToolUse part of an Answer.
type AnswerOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

// writeAnswer prints d as the harness's PreToolUse answer. Defer prints
// nothing: a hook that exits 0 without a permissionDecision leaves the call
// to the harness's own permission settings, exactly as without logbook.
//
// Codex's hooks take only deny: an ask is refused as unsupported and the
// call then runs, and an allow is not a grant. So for Codex, ask becomes a
// deny that says a person must approve, and allow says nothing.
func writeAnswer(w io.Writer, h *Hook, harness string, d *Decision) {
	decision, reason := d.Decision, d.Reason
	if harness == HarnessCodex {
		switch decision {
		case classify.Ask:
			decision = classify.Deny
			reason += "; Codex hooks cannot ask, so logbook refuses it: a person can run it, or the project's policy can defer or allow it"
		case classify.Allow:
			decision = classify.Defer
		}
	}
	if decision == classify.Defer {
		return
	}
	raw, err := json.Marshal(Answer{HookSpecificOutput: AnswerOutput{
		HookEventName: EventPreToolUse, PermissionDecision: string(decision), PermissionDecisionReason: reason,
	}})
	if err == nil {
		_, err = fmt.Fprintf(w, "%s\n", raw)
	}
	if err != nil {
		h.report("cannot write the PreToolUse answer: %v", err)
	}
}

// note is the entry that records the decision in the session, next to the
// tool call it is about.
func (d *Decision) note(p Payload, at time.Time) logbook.Entry {
	id := toolCallID(p)
	payload, _ := json.Marshal(d)
	return logbook.Entry{Kind: logbook.KindNote, Text: d.Reason, Tool: p.ToolName, ToolCallID: id,
		Payload: payload, Key: id + ":decision", At: at}
}

// decide answers a PreToolUse: a Bash command is classified under the
// project's policy; with the claims guard, an edit of a path another
// session claimed is denied; a file tool on a path that holds credentials
// gets the policy's decision for secret_read (ask by default). Other calls
// get no answer (nil), which leaves the decision to the harness's own
// permission settings.
func (h *Hook) decide(ctx context.Context, spool *Spool, p Payload, m claudeMapper) *Decision {
	if p.ToolName == "Bash" {
		command := p.ToolInputString("command")
		return classifyCommand(command, h.policy(ctx, spool, m.project))
	}
	if h.cfg.GuardClaims && p.EditedPath() != "" {
		if d := h.guard(ctx, spool, p, m); d != nil {
			return d
		}
	}
	if path, what := secretPathOf(p); what != "" {
		return secretDecision(p.ToolName, path, what, h.policy(ctx, spool, m.project))
	}
	return nil
}

// fileTools are the tools that read or change files, with the inputs that
// name them (a path, a folder searched, a glob).
var fileTools = map[string][]string{
	"Read": {"file_path"}, "NotebookRead": {"notebook_path"}, "LS": {"path"},
	"Grep": {"path", "glob"}, "Glob": {"path", "pattern"},
	"Edit": {"file_path"}, "MultiEdit": {"file_path"}, "Write": {"file_path"}, "NotebookEdit": {"notebook_path"},
}

// secretPathOf returns the first path a file tool's input names that holds
// credentials, and what it holds; "" when none does.
func secretPathOf(p Payload) (path, what string) {
	for _, key := range fileTools[p.ToolName] {
		v := p.ToolInputString(key)
		if v == "" {
			continue
		}
		if what, ok := classify.SecretPath(v); ok {
			return v, what
		}
	}
	return "", ""
}

// secretDecision is the policy's decision on a file tool reading a secret.
func secretDecision(tool, path, what string, policy classify.Policy) *Decision {
	d := policy.Decide(classify.SecretRead)
	reason := classify.Reason{Command: tool + " " + path, Class: classify.SecretRead, Rule: tool + " reads " + what, Decision: d}
	return &Decision{Decision: d, Class: classify.SecretRead, Path: path, Reasons: []classify.Reason{reason},
		Reason: fmt.Sprintf("logbook: %s (class %s): %s: %s", d, classify.SecretRead, reason.Command, reason.Rule)}
}

// classifyFunc is the classifier; tests replace it to see the hook cope
// with a failing one.
var classifyFunc = classify.Classify

// classifyCommand classifies command under policy. Should the classifier
// fail, the answer is ask, saying so: a person decides, and nothing is
// denied without a reason.
func classifyCommand(command string, policy classify.Policy) (d *Decision) {
	defer func() {
		if r := recover(); r != nil {
			d = &Decision{Decision: classify.Ask, Command: command,
				Reason: fmt.Sprintf("logbook could not classify this command (internal error: %v); asking instead", r)}
		}
	}()
	v := classifyFunc(command, policy)
	if !v.Decision.Valid() {
		return &Decision{Decision: classify.Ask, Command: command,
			Reason: fmt.Sprintf("logbook could not classify this command (the policy gave %q); asking instead", v.Decision)}
	}
	return &Decision{Decision: v.Decision, Command: command, Class: v.Class, Reasons: v.Reasons, Reason: verdictReason(v)}
}

// verdictReason says why: the class and decision, then the inner command
// that decided the verdict and its rule.
func verdictReason(v classify.Verdict) string {
	s := fmt.Sprintf("logbook: %s (class %s)", v.Decision, v.Class)
	if r := v.Summary(); r.Command != "" {
		s += fmt.Sprintf(": `%s`: %s", r.Command, r.Rule)
	}
	if more := len(v.Reasons) - 1; more > 0 && (v.Decision == classify.Ask || v.Decision == classify.Deny) {
		s += fmt.Sprintf(" (%d more commands checked)", more)
	}
	return s
}

// policyCache is a project's policy as the spool folder keeps it.
type policyCache struct {
	// Policy is the server's policy object; null means the default policy.
	Policy json.RawMessage `json:"policy"`
	// Until is when to fetch it again.
	Until time.Time `json:"until"`
}

// policy returns the project's policy: cached when fresh, else fetched
// within the policy deadline. A project without a policy (404) gets the
// default one; a failed fetch keeps the last known policy (or the
// default) and is not retried for half a minute.
func (h *Hook) policy(ctx context.Context, spool *Spool, project string) classify.Policy {
	if project == "" || spool == nil {
		return classify.DefaultPolicy()
	}
	name := filepath.Join("policy", stableKey("policy", project)[len("policy:"):]+".json")
	var cached policyCache
	have := spool.readCache(name, &cached)
	now := h.cfg.Now()
	if have && now.Before(cached.Until) {
		return h.parsePolicy(cached.Policy)
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.PolicyDeadline)
	defer cancel()
	got, err := h.api.Ledger().Policy(ctx, project)
	switch {
	case err == nil:
		raw, _ := json.Marshal(got)
		cached = policyCache{Policy: raw, Until: now.Add(h.cfg.PolicyTTL)}
	case errors.Is(err, logbook.ErrNotFound):
		cached = policyCache{Until: now.Add(h.cfg.PolicyTTL)}
	default:
		h.report("cannot fetch the policy of project %q (%v); using the last known one", project, err)
		cached.Until = now.Add(policyRetry)
	}
	if err := spool.writeCache(name, cached); err != nil {
		h.report("cannot cache the policy: %v", err)
	}
	return h.parsePolicy(cached.Policy)
}

func (h *Hook) parsePolicy(raw json.RawMessage) classify.Policy {
	if len(raw) == 0 || string(raw) == "null" {
		return classify.DefaultPolicy()
	}
	p, err := classify.ParsePolicy(raw)
	if err != nil {
		h.report("the project's policy cannot be used (%v); using the default policy", err)
		return classify.DefaultPolicy()
	}
	return p
}

// guard denies an edit of a path that a session other than this one (or
// its subagent) has claimed. When it cannot tell, because the server does
// not answer in time, it gives no answer and says so on stderr: the guard
// never denies on a guess.
func (h *Hook) guard(ctx context.Context, spool *Spool, p Payload, m claudeMapper) *Decision {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.PolicyDeadline)
	defer cancel()
	own, err := h.ownSessions(ctx, spool, p, m)
	if err != nil {
		h.report("claims guard skipped: cannot learn this session's logbook id (%v)", err)
		return nil
	}
	path := p.EditedPath()
	subjects := []string{relativePath(path, p.Cwd, m.git)}
	if abs := relativePath(path, p.Cwd, GitInfo{}); abs != subjects[0] {
		subjects = append(subjects, abs)
	}
	for _, subject := range subjects {
		claims, err := h.api.Ledger().Claims(ctx, ledger.ClaimsParams{Project: m.project, Subject: subject})
		if err != nil {
			h.report("claims guard skipped: cannot list the claims on %s (%v)", subject, err)
			return nil
		}
		for _, c := range claims {
			if own[c.SessionID] {
				continue
			}
			holder := fmt.Sprintf("session %s of %s", c.SessionID, c.Actor)
			if c.Title != "" {
				holder += fmt.Sprintf(" (%q)", c.Title)
			}
			reason := fmt.Sprintf("logbook: %s is claimed by %s", subject, holder)
			if c.Subject != "" && c.Subject != subject {
				reason += " through its claim on " + c.Subject
			}
			if !c.ExpiresAt.IsZero() {
				reason += " until " + c.ExpiresAt.UTC().Format(time.RFC3339)
			}
			reason += "; work on another file or ask its holder to release it"
			claim := c
			return &Decision{Decision: classify.Deny, Reason: reason, Path: subject, Claim: &claim}
		}
	}
	return nil
}

// ownSessions returns the logbook ids of this Claude Code session and, in
// a subagent, of the subagent: from the id cache, else by starting them.
func (h *Hook) ownSessions(ctx context.Context, spool *Spool, p Payload, m claudeMapper) (map[string]bool, error) {
	own := map[string]bool{}
	specs := []SessionSpec{m.mainSpec(p)}
	if p.AgentID != "" {
		specs = append(specs, m.spec(p))
	}
	var s *sender
	for _, spec := range specs {
		id := ""
		if spool != nil {
			id = spool.knownID(spec)
		}
		if id == "" {
			if s == nil {
				s = newSender(h.api.Ledger(), spool)
			}
			var err error
			if id, err = s.resolve(ctx, spec); err != nil {
				return nil, err
			}
		}
		own[id] = true
	}
	return own, nil
}
