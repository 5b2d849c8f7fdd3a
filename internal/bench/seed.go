package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// SeedProject is the project Seed fills and the read benchmark reads.
const SeedProject = "seed"

var (
	seedGoals = []string{
		"Fix the flaky login test", "Upgrade the Postgres cluster to 16", "Refactor the billing API",
		"Add rate limiting to the gateway", "Migrate VM 101 to node pve2", "Write release notes for 2.4",
		"Investigate the memory leak in the worker", "Rotate the TLS certificates", "Add dark mode to settings",
		"Speed up the CI pipeline",
	}
	seedHarnesses = []string{"claude-code", "claude-code", "codex", "ops-agent"}
	seedActors    = []string{"alice", "bob", "carol", "ci", "ops"}
	seedAgents    = []string{"", "", "engineer-1", "engineer-2", "ceo"}
	seedFiles     = []string{"src/api/login.go", "src/api/billing.go", "src/web/settings.tsx", "db/migrate.sql", "ops/pve/vm101.conf", "README.md"}
	seedBlockers  = []logbook.Blocker{logbook.BlockerToolError, logbook.BlockerRateLimited, logbook.BlockerContextExhausted,
		logbook.BlockerApprovalTimeout, logbook.BlockerUserAbandoned, logbook.BlockerUnknown}
)

// Seed fills st with n sessions of project "seed" spread over the last 30
// days, about entriesPer entries each (prompts, tool calls with results,
// assistant messages with usage, their text from seedText), 10% of them
// subagents, with outcomes, blockers, touched files and issue links, in
// large transactions. Every 10,000th session gets 500 entries, for the
// session-page benchmark. It calls progress with the sessions written so
// far.
func Seed(ctx context.Context, st store.Store, n, entriesPer int, progress func(done int)) error {
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now().UTC().Truncate(time.Microsecond)
	if err := st.ProjectEnsure(ctx, SeedProject, now); err != nil {
		return err
	}
	text := newSeedText()
	const perTx = 2000
	var lastTop logbook.Session
	for done := 0; done < n; {
		tx, err := st.Begin(ctx)
		if err != nil {
			return err
		}
		var entries []logbook.Entry
		for i := 0; i < perTx && done < n; i, done = i+1, done+1 {
			started := now.Add(-time.Duration(rng.Int64N(int64(30 * 24 * time.Hour))))
			s := logbook.Session{
				ID: logbook.NewID(started), Project: SeedProject, Actor: seedActors[rng.IntN(len(seedActors))],
				Harness: seedHarnesses[rng.IntN(len(seedHarnesses))], HarnessSessionID: fmt.Sprintf("seed-%d", done),
				Agent: seedAgents[rng.IntN(len(seedAgents))], Goal: seedGoals[rng.IntN(len(seedGoals))],
				Issue: logbook.Ref(fmt.Sprint(1 + rng.IntN(2000))), Branch: fmt.Sprintf("feat-%d", rng.IntN(300)),
				Status: logbook.StatusEnded, StartedAt: started, Model: "claude-sonnet",
			}
			if done%10 == 9 && lastTop.ID != "" {
				s.ParentID, s.RootID, s.Issue = lastTop.ID, lastTop.ID, lastTop.Issue
			}
			s.DeriveTitle()
			count := entriesPer/2 + rng.IntN(entriesPer+1)
			if done%10000 == 5000 {
				count = 500
			}
			at := started
			for seq := 1; seq <= count; seq++ {
				at = at.Add(time.Duration(1+rng.IntN(20)) * time.Second)
				e := logbook.Entry{SessionID: s.ID, Seq: int64(seq), At: at}
				switch {
				case seq == 1:
					e.Kind, e.Text = logbook.KindPrompt, s.Goal
					s.Prompt = s.Goal
				case seq%3 == 2:
					e.Kind, e.Tool, e.ToolCallID, e.Payload = logbook.KindToolCall, "Bash", fmt.Sprintf("t%d", seq), text.toolCall()
					s.ToolCallCount++
				case seq%3 == 0:
					e.Kind, e.Tool, e.ToolCallID, e.Text = logbook.KindToolResult, "Bash", fmt.Sprintf("t%d", seq-1), text.toolResult()
				default:
					e.Kind, e.Role, e.Text = logbook.KindMessage, logbook.RoleAssistant, text.message()
					e.Usage = &logbook.Usage{InputTokens: int64(1000 + rng.IntN(3000)), OutputTokens: int64(50 + rng.IntN(400))}
					s.InputTokens += e.Usage.InputTokens
					s.OutputTokens += e.Usage.OutputTokens
				}
				if e.IsMessage() {
					s.MessageCount++
				}
				entries = append(entries, e)
			}
			s.EntryCount, s.LastSeenAt = int64(count), at
			switch r := rng.IntN(100); {
			case r < 3 && done > n-1000: // a few still running, near the end
				s.Status = logbook.StatusActive
			case r < 63:
				s.Outcome = logbook.OutcomeSuccess
			case r < 83:
				s.Outcome = logbook.OutcomePartial
			default:
				s.Outcome = logbook.OutcomeFailed
			}
			if s.Outcome == logbook.OutcomePartial || s.Outcome == logbook.OutcomeFailed {
				s.Blocker = seedBlockers[rng.IntN(len(seedBlockers))]
			}
			if s.Status == logbook.StatusEnded {
				closed := at
				s.ClosedAt, s.EndReason = &closed, logbook.EndReasonEnded
			}
			if _, err := tx.SessionInsert(ctx, &s); err != nil {
				tx.Rollback()
				return fmt.Errorf("seeding session %d: %w", done, err)
			}
			if err := tx.TouchUpsert(ctx, s.ID, SeedProject, []logbook.Touch{{Kind: logbook.TouchFile, Value: seedFiles[rng.IntN(len(seedFiles))], FirstAt: started}}); err != nil {
				tx.Rollback()
				return err
			}
			if err := tx.LinkSet(ctx, s.ID, SeedProject, []logbook.Link{{Kind: "issue", Ref: string(s.Issue), Via: logbook.ViaAttached}}, nil); err != nil {
				tx.Rollback()
				return err
			}
			if s.ParentID == "" {
				lastTop = s
			}
			if len(entries) >= 5000 {
				if err := flush(ctx, tx, &entries); err != nil {
					tx.Rollback()
					return err
				}
			}
		}
		if err := flush(ctx, tx, &entries); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		if progress != nil {
			progress(done)
		}
	}
	return nil
}
