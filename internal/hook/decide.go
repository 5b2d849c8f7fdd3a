package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
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

	// writes are the files a Bash command writes, as the classifier saw
	// them, for the claims gate.
	writes []string
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
// project's policy; a file tool on a path that holds credentials gets the
// policy's decision for secret_read (ask by default); and a call that
// writes files (an edit, a patch, a shell command the classifier sees
// writing) is put to the server's claims gate, whose deny or ask for a
// file another live session claimed wins when it is the stricter. Other
// calls get no answer (nil), which leaves the decision to the harness's
// own permission settings.
func (h *Hook) decide(ctx context.Context, spool *Spool, p Payload, m claudeMapper) *Decision {
	var d *Decision
	var written []string
	if p.ToolName == "Bash" {
		d = classifyCommand(p.ToolInputString("command"), h.policy(ctx, spool, m.project))
		written = append(d.writes, classify.PatchPaths(p.ToolInputString("command"))...)
	} else {
		written = classify.WrittenPaths(p.ToolName, p.ToolInput)
		if path, what := secretPathOf(p); what != "" {
			d = secretDecision(p.ToolName, path, what, h.policy(ctx, spool, m.project))
		}
	}
	if len(written) == 0 || h.cfg.IgnoreClaims || d != nil && d.Decision == classify.Deny {
		return d
	}
	return stricter(d, h.gate(ctx, spool, p, m, written))
}

// stricter returns whichever answer permits less; of two that object
// equally, the first with the second's reason added.
func stricter(a, b *Decision) *Decision {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Decision.Stricter(b.Decision) != a.Decision:
		return b
	case a.Decision == b.Decision && (a.Decision == classify.Ask || a.Decision == classify.Deny):
		a.Reason += "; " + b.Reason
		a.Path, a.Claim = b.Path, b.Claim
	}
	return a
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
	return &Decision{Decision: v.Decision, Command: command, Class: v.Class, Reasons: v.Reasons, Reason: verdictReason(v), writes: v.Writes}
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

// gate asks the server's claims gate whether this session may write the
// files a tool call names (as the call spells them, resolved here, where
// the files are, to the form claims take: see repoPath). When it cannot
// tell, because the server does not answer in time, it gives no answer
// and says so on stderr: the gate never denies on a guess.
func (h *Hook) gate(ctx context.Context, spool *Spool, p Payload, m claudeMapper, written []string) *Decision {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.PolicyDeadline)
	defer cancel()
	id, err := h.sessionID(ctx, spool, m.spec(p))
	if err != nil {
		h.report("claims guard skipped: cannot learn this session's logbook id (%v)", err)
		return nil
	}
	paths := make([]string, len(written))
	for i, w := range written {
		paths[i] = repoPath(w, p.Cwd, m.git)
	}
	ans, err := h.api.Ledger().Gate(ctx, ledger.GateParams{Project: m.project, SessionID: id, Paths: paths})
	if err != nil {
		h.report("claims guard skipped: cannot ask the server about %s (%v)", strings.Join(paths, ", "), err)
		return nil
	}
	if len(ans.Held) == 0 || ans.Decision == classify.Defer {
		return nil
	}
	held := ans.Held[0]
	return &Decision{Decision: ans.Decision, Reason: ans.Reason, Path: held.Path, Claim: &held.Claim}
}

// sessionID returns the logbook id of the session a spec names (the
// subagent's own when the call comes from one): from the id cache, else by
// starting it.
func (h *Hook) sessionID(ctx context.Context, spool *Spool, spec SessionSpec) (string, error) {
	if spool != nil {
		if id := spool.knownID(spec); id != "" {
			return id, nil
		}
	}
	return newSender(h.api.Ledger(), spool).resolve(ctx, spec)
}
