package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// MaxGatePaths bounds the paths one gate decision checks.
const MaxGatePaths = ledger.MaxGatePaths

// maxTreeDepth bounds the walk up a subagent tree when the gate looks for
// the relation between a writer and a holder.
const maxTreeDepth = 32

// Gate decides whether a session may write files: the claims gate in front
// of every tool call that writes (the hooks of Claude Code and Codex, the
// API's POST /v1/gate, the MCP tool check_write and the git pre-commit
// hook all ask it, so all give the same answer).
//
// A path held by another live session (a claim on it or on a folder above
// it) gets the project's claims guard (classify.ClaimsPolicy: deny by
// default, or ask), with a reason naming the holder, its goal and when
// its claim expires; with the guard off (defer) claims are advisory. The
// session's own claims, its ancestors' and its subagents' pass. With the
// project's auto claims on, a write that is not denied claims each file
// it writes that nobody in the session's tree holds yet, for the policy's
// TTL, and renews the session's own claim on a file it writes again;
// these decisions are taken one at a time where their paths may conflict
// (store.Tx.ClaimLock), so of two sessions
// (on any replicas) writing one unclaimed file at once exactly one gets
// it and the other is refused.
func (s *Service) Gate(ctx context.Context, c Caller, p ledger.GateParams) (ledger.GateAnswer, error) {
	paths, err := s.gatePaths(ctx, p)
	if err != nil {
		return ledger.GateAnswer{}, err
	}
	var sess logbook.Session
	if p.SessionID != "" {
		sess, err = s.store.SessionGet(ctx, store.SessionGetParams{ID: p.SessionID})
		if err != nil || !c.sees(sess.Project) { // another project's session is not revealed
			return ledger.GateAnswer{}, sessionNotFound(p.SessionID, errOr(err, logbook.ErrNotFound))
		}
		if p.Project == "" {
			p.Project = sess.Project
		}
		if err := sessionOf(c, p.Project, sess); err != nil {
			return ledger.GateAnswer{}, err
		}
	}
	project, err := c.projectFor(p.Project)
	if err != nil {
		return ledger.GateAnswer{}, err
	}
	policy, err := s.Policy(ctx, c, project)
	if err != nil {
		return ledger.GateAnswer{}, err
	}
	g := gate{project: project, writer: sess, guard: policy.Claims.GuardDecision(), now: s.now()}
	autoClaim := policy.Claims.Auto && sess.ID != "" && sess.Actor == c.Actor && sess.Status != logbook.StatusEnded
	if len(paths) == 0 || g.guard == classify.Defer && !autoClaim {
		return ledger.GateAnswer{Decision: classify.Defer, Paths: paths}, nil
	}
	if !autoClaim {
		ans, _, err := g.judge(ctx, s.store, paths)
		return ans, err
	}
	ttl := time.Duration(policy.Claims.AutoClaimTTL()) * time.Minute
	var ans ledger.GateAnswer
	err = s.inTx(ctx, func(tx *work) error {
		if err := tx.ClaimLock(ctx, project, paths); err != nil {
			return err
		}
		var free []string
		var err error
		if ans, free, err = g.judge(ctx, tx, paths); err != nil || ans.Decision == classify.Deny {
			return err
		}
		ans.Claimed, err = g.claim(ctx, tx, free, ttl)
		return err
	})
	return ans, err
}

// gatePaths returns the paths a gate decision checks: those given and
// those the tool call writes, cleaned as claim subjects are, once each.
func (s *Service) gatePaths(ctx context.Context, p ledger.GateParams) ([]string, error) {
	raw := p.Paths
	if p.Tool != "" {
		raw = append(raw[:len(raw):len(raw)], classify.WrittenPaths(p.Tool, p.Input)...)
	}
	paths := []string{}
	seen := map[string]bool{}
	for _, r := range raw {
		path := logbook.NormalizeSubject(r)
		if path == "" {
			continue
		}
		// Compared with the subjects of stored claims, so redacted as
		// they were.
		if err := s.store.c.clean(ctx, &path); err != nil {
			return nil, err
		}
		if !seen[path] {
			seen[path] = true
			paths = append(paths, path)
		}
	}
	if len(paths) > MaxGatePaths {
		return nil, logbook.Invalid("paths", "%d paths in one decision; the limit is %d: ask for the rest in another", len(paths), MaxGatePaths)
	}
	return paths, nil
}

// gate is one gate decision in progress.
type gate struct {
	project string
	writer  logbook.Session // zero when no session writes
	guard   classify.Decision
	now     time.Time
	// sessions caches the sessions read while relating holders to the
	// writer.
	sessions map[string]logbook.Session
}

// gateReader is what a gate decision reads: the store, or a transaction.
type gateReader interface {
	ClaimList(ctx context.Context, p store.ClaimListParams) ([]logbook.Claim, error)
	SessionGet(ctx context.Context, p store.SessionGetParams) (logbook.Session, error)
}

// judge checks each path against the project's live claims. It returns
// the answer and the paths nobody in the writer's tree holds (free to
// claim) or that the writer holds itself by a claim on the very path
// (renewed by a claim).
func (g *gate) judge(ctx context.Context, r gateReader, paths []string) (ans ledger.GateAnswer, free []string, err error) {
	ans = ledger.GateAnswer{Decision: classify.Defer, Paths: paths}
	for _, path := range paths {
		held, err := g.holding(ctx, r, path)
		if err != nil {
			return ans, nil, err
		}
		byTree := false
		var other *logbook.Claim
		for i, h := range held {
			ours, err := g.ours(ctx, r, h.SessionID)
			if err != nil {
				return ans, nil, err
			}
			if !ours {
				other = &held[i]
				break
			}
			byTree = byTree || h.SessionID != g.writer.ID || h.Subject != path
		}
		switch {
		case other != nil:
			holder, err := g.session(ctx, r, other.SessionID)
			if err != nil {
				return ans, nil, err
			}
			ans.Held = append(ans.Held, ledger.HeldPath{Path: path, Claim: *other, Holder: ledger.GateHolder{
				SessionID: holder.ID, Actor: holder.Actor, Agent: holder.Agent, Harness: holder.Harness,
				Goal: holder.Goal, Title: holder.Title}})
		case !byTree:
			free = append(free, path)
		}
	}
	if len(ans.Held) > 0 && g.guard != classify.Defer {
		ans.Decision = g.guard
		ans.Reason = heldReason(ans.Held, g.guard)
	}
	return ans, free, nil
}

// holding lists the live claims a write to path collides with: a claim on
// the path or on a folder above it, and, since the path may name a folder
// (rm -r build, mv src lib), a claim on anything under it.
func (g *gate) holding(ctx context.Context, r gateReader, path string) ([]logbook.Claim, error) {
	held, err := r.ClaimList(ctx, store.ClaimListParams{Project: g.project, Conflicting: path, Now: g.now})
	if err != nil || strings.HasSuffix(path, "/") {
		return held, err
	}
	under, err := r.ClaimList(ctx, store.ClaimListParams{Project: g.project, Conflicting: path + "/", Now: g.now})
	for _, c := range under {
		if !slices.ContainsFunc(held, func(h logbook.Claim) bool { return h.ID == c.ID }) {
			held = append(held, c)
		}
	}
	return held, err
}

// ours reports whether a claim of the holder passes for the writer: the
// writer's own, an ancestor's (a subagent works for its parent), or a
// subagent's (a parent may write what its subagent claimed).
func (g *gate) ours(ctx context.Context, r gateReader, holderID string) (bool, error) {
	if g.writer.ID == "" {
		return false, nil
	}
	if holderID == g.writer.ID {
		return true, nil
	}
	up, err := g.isAncestor(ctx, r, holderID, g.writer)
	if err != nil || up {
		return up, err
	}
	holder, err := g.session(ctx, r, holderID)
	if err != nil {
		return false, err
	}
	if holder.Root() != g.writer.Root() {
		return false, nil
	}
	return g.isAncestor(ctx, r, g.writer.ID, holder)
}

// isAncestor reports whether the session id is one of sess's ancestors.
func (g *gate) isAncestor(ctx context.Context, r gateReader, id string, sess logbook.Session) (bool, error) {
	for range maxTreeDepth {
		if sess.ParentID == "" {
			return false, nil
		}
		if sess.ParentID == id {
			return true, nil
		}
		var err error
		if sess, err = g.session(ctx, r, sess.ParentID); err != nil {
			return false, err
		}
	}
	return false, nil
}

// session reads a session once per decision.
func (g *gate) session(ctx context.Context, r gateReader, id string) (logbook.Session, error) {
	if sess, ok := g.sessions[id]; ok {
		return sess, nil
	}
	if id == g.writer.ID {
		return g.writer, nil
	}
	sess, err := r.SessionGet(ctx, store.SessionGetParams{ID: id})
	if err != nil {
		return sess, fmt.Errorf("reading session %s, which holds a claim: %w", id, err)
	}
	if g.sessions == nil {
		g.sessions = map[string]logbook.Session{}
	}
	g.sessions[id] = sess
	return sess, nil
}

// claim takes a claim for the writer on each free file in the repository
// (an absolute path lies outside it, and a folder is more than the write
// names: both are left alone), or renews the
// writer's own claim on it, for ttl; never shortening a claim.
func (g *gate) claim(ctx context.Context, tx *work, free []string, ttl time.Duration) ([]logbook.Claim, error) {
	var claimed []logbook.Claim
	for _, path := range free {
		outside := strings.HasPrefix(path, "/") || strings.HasPrefix(path, "~") || strings.HasPrefix(path, "../") || path == ".."
		if outside || strings.HasSuffix(path, "/") { // a file is claimed, never a folder
			continue
		}
		mine, err := tx.ClaimList(ctx, store.ClaimListParams{Project: g.project, Subject: path, SessionID: g.writer.ID, Now: g.now})
		if err != nil {
			return nil, err
		}
		var claim *logbook.Claim
		for i := range mine {
			if mine[i].Subject == path {
				claim = &mine[i]
			}
		}
		switch {
		case claim == nil:
			c := logbook.Claim{ID: logbook.NewID(g.now), Project: g.project, SessionID: g.writer.ID, Actor: g.writer.Actor,
				Subject: path, TTLSeconds: int64(ttl / time.Second), CreatedAt: g.now, ExpiresAt: g.now.Add(ttl), Title: g.writer.Title, Auto: true}
			if err := tx.ClaimInsert(ctx, &c); err != nil {
				return nil, err
			}
			emitClaim(tx, logbook.EventClaimTaken, c, g.now)
			claimed = append(claimed, c)
		case g.now.Add(ttl).After(claim.ExpiresAt):
			claim.ExpiresAt = g.now.Add(ttl)
			if err := tx.ClaimUpdate(ctx, claim); err != nil {
				return nil, err
			}
			claimed = append(claimed, *claim)
		default:
			claimed = append(claimed, *claim)
		}
	}
	return claimed, nil
}

// heldReason says why a write is refused or put to a person: the first
// held path, its holder and the holder's goal, when the claim expires, and
// what to do.
func heldReason(held []ledger.HeldPath, d classify.Decision) string {
	h := held[0]
	who := "actor " + h.Holder.Actor
	if h.Holder.Agent != "" {
		who += ", agent " + h.Holder.Agent
	}
	if h.Holder.Harness != "" {
		who += ", " + h.Holder.Harness
	}
	reason := fmt.Sprintf("logbook: %s is claimed by session %s (%s)", h.Path, h.Holder.SessionID, who)
	goal := h.Holder.Goal
	if goal == "" {
		goal = h.Holder.Title
	}
	if goal != "" {
		reason += fmt.Sprintf(", working on %q,", goal)
	}
	if h.Claim.Subject != h.Path {
		reason += " through its claim on " + h.Claim.Subject
	}
	reason += " until " + h.Claim.ExpiresAt.UTC().Format(time.RFC3339)
	if more := len(held) - 1; more > 0 {
		reason += fmt.Sprintf(" (and %d more of the paths written are held)", more)
	}
	if d == classify.Ask {
		return reason + "; approve only if its holder is done with it"
	}
	return reason + "; work on another file, or ask its holder to finish or release it (logbook claims)"
}
