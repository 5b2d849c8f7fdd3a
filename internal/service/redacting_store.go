package service

import (
	"context"
	"slices"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// redactingStore is the store the service runs on: the engine's store
// behind the redacting boundary (see cleaner). It implements every method
// itself, embedding nothing of the engine's, so that a method added to
// store.Store does not compile until it says here how its values are
// redacted.
type redactingStore struct {
	redacting
	st store.Store
}

var (
	_ store.Store = (*redactingStore)(nil)
	_ store.Tx    = (*redactingTx)(nil)
)

func newRedactingStore(st store.Store) *redactingStore {
	return &redactingStore{redacting: redacting{ex: st, c: newCleaner(st)}, st: st}
}

// Begin loads the redaction key before the transaction starts (see
// cleaner.ready), so nothing in the transaction has to.
func (r *redactingStore) Begin(ctx context.Context) (store.Tx, error) {
	if err := r.c.ready(ctx); err != nil {
		return nil, err
	}
	tx, err := r.st.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &redactingTx{redacting: redacting{ex: tx, c: r.c}, tx: tx}, nil
}

func (r *redactingStore) Engine() string                     { return r.st.Engine() }
func (r *redactingStore) CanBackup() bool                    { return r.st.CanBackup() }
func (r *redactingStore) Optimize(ctx context.Context) error { return r.st.Optimize(ctx) }
func (r *redactingStore) SingleWriter() bool                 { return r.st.SingleWriter() }
func (r *redactingStore) EntryPartitionsMaintain(ctx context.Context, now time.Time, ahead int) error {
	return r.st.EntryPartitionsMaintain(ctx, now, ahead)
}
func (r *redactingStore) Close() error { return r.st.Close() }
func (r *redactingStore) EventSequence(ctx context.Context) (int64, error) {
	return r.st.EventSequence(ctx)
}
func (r *redactingStore) Listen(ctx context.Context, wake func()) error {
	return r.st.Listen(ctx, wake)
}

// The statistics backfill takes and gives no text: nothing to redact.
func (r *redactingStore) StatsPending(ctx context.Context) (int64, error) {
	return r.st.StatsPending(ctx)
}
func (r *redactingStore) StatsRebuild(ctx context.Context) error { return r.st.StatsRebuild(ctx) }
func (r *redactingStore) StatsBackfill(ctx context.Context, limit int) (int, bool, error) {
	return r.st.StatsBackfill(ctx, limit)
}

// The search backfill indexes what is stored (redacted when it was): it
// takes and gives no text.
func (r *redactingStore) SearchPending(ctx context.Context) (int64, error) {
	return r.st.SearchPending(ctx)
}
func (r *redactingStore) SearchBackfill(ctx context.Context, limit int) (int, bool, error) {
	return r.st.SearchBackfill(ctx, limit)
}
func (r *redactingStore) SearchRebuild(ctx context.Context) error { return r.st.SearchRebuild(ctx) }

// An export reads rows as stored, redacted when they were written; a
// restore writes them back as they were read: nothing to redact.
func (r *redactingStore) Export(ctx context.Context, p store.ExportParams) error {
	return r.st.Export(ctx, p)
}

// redactingTx is a transaction of a redactingStore.
type redactingTx struct {
	redacting
	tx store.Tx
}

func (t *redactingTx) Commit() error                       { return t.tx.Commit() }
func (t *redactingTx) Rollback() error                     { return t.tx.Rollback() }
func (t *redactingTx) Savepoint(ctx context.Context) error { return t.tx.Savepoint(ctx) }
func (t *redactingTx) RollbackToSavepoint(ctx context.Context) error {
	return t.tx.RollbackToSavepoint(ctx)
}
func (t *redactingTx) ReleaseSavepoint(ctx context.Context) error { return t.tx.ReleaseSavepoint(ctx) }

// LockSessions looks the keys and touches up as EntryInsert and
// TouchUpsert will store them: redacted.
func (t *redactingTx) LockSessions(ctx context.Context, sessions []store.SessionKeys) error {
	stored := make([]store.SessionKeys, len(sessions))
	for i, s := range sessions {
		stored[i] = s
		if s.Keys != nil {
			keys := slices.Clone(s.Keys)
			if err := t.c.clean(ctx, &keys); err != nil {
				return err
			}
			stored[i].Keys = keys
		}
		if s.Touches != nil {
			touches := slices.Clone(s.Touches)
			if err := t.c.clean(ctx, &touches); err != nil {
				return err
			}
			stored[i].Touches = touches
		}
	}
	return t.tx.LockSessions(ctx, stored)
}

// redacting implements store.Executor: each method redacts the values it
// is given (see cleaner.clean) and passes them on to ex.
type redacting struct {
	ex store.Executor
	c  *cleaner
}

func (r redacting) ProjectEnsure(ctx context.Context, name string, now time.Time) error {
	if err := r.c.clean(ctx, &name); err != nil {
		return err
	}
	return r.ex.ProjectEnsure(ctx, name, now)
}

func (r redacting) ProjectPolicyGet(ctx context.Context, name string) (string, error) {
	if err := r.c.clean(ctx, &name); err != nil {
		return "", err
	}
	return r.ex.ProjectPolicyGet(ctx, name)
}

func (r redacting) ProjectPolicySet(ctx context.Context, name, policy string) error {
	if err := r.c.clean(ctx, &name); err != nil {
		return err
	}
	return r.ex.ProjectPolicySet(ctx, name, r.c.jsonText(policy))
}

// KeyEnsure stores logbook's own random keys, the redaction key among
// them: nothing a client sent, and nothing redaction could read before the
// key is there.
func (r redacting) ImportRows(ctx context.Context, table string, rows []map[string]any) (int, error) {
	return r.ex.ImportRows(ctx, table, rows)
}

func (r redacting) KeyEnsure(ctx context.Context, name, value string, now time.Time) (string, error) {
	return r.ex.KeyEnsure(ctx, name, value, now)
}

func (r redacting) TokenInsert(ctx context.Context, t *logbook.Token) error {
	if err := r.c.clean(ctx, &t); err != nil {
		return err
	}
	return r.ex.TokenInsert(ctx, t)
}

func (r redacting) TokenGetByHash(ctx context.Context, hash string) (logbook.Token, error) {
	if err := r.c.clean(ctx, &hash); err != nil {
		return logbook.Token{}, err
	}
	return r.ex.TokenGetByHash(ctx, hash)
}

func (r redacting) TokenAdminExists(ctx context.Context) (bool, error) {
	return r.ex.TokenAdminExists(ctx)
}

func (r redacting) SessionInsert(ctx context.Context, s *logbook.Session) (bool, error) {
	if err := r.c.clean(ctx, &s); err != nil {
		return false, err
	}
	return r.ex.SessionInsert(ctx, s)
}

func (r redacting) SessionGet(ctx context.Context, p store.SessionGetParams) (logbook.Session, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return logbook.Session{}, err
	}
	return r.ex.SessionGet(ctx, p)
}

func (r redacting) SessionGetByHarnessID(ctx context.Context, p store.SessionGetByHarnessIDParams) (logbook.Session, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return logbook.Session{}, err
	}
	return r.ex.SessionGetByHarnessID(ctx, p)
}

func (r redacting) SessionUpdate(ctx context.Context, s, was *logbook.Session) error {
	s, err := r.c.cleanSession(ctx, s, was)
	if err != nil {
		return err
	}
	return r.ex.SessionUpdate(ctx, s, was)
}

func (r redacting) SessionMarkSeen(ctx context.Context, id string, at time.Time) error {
	if err := r.c.clean(ctx, &id); err != nil {
		return err
	}
	return r.ex.SessionMarkSeen(ctx, id, at)
}

func (r redacting) SessionList(ctx context.Context, p store.SessionListParams) ([]logbook.Session, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.SessionList(ctx, p)
}

func (r redacting) SessionListPrior(ctx context.Context, p store.SessionListPriorParams) ([]logbook.Session, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.SessionListPrior(ctx, p)
}

func (r redacting) SessionStats(ctx context.Context, p store.SessionStatsParams) ([]logbook.StatsRow, error) {
	zone := p.Zone // a zone the tz database knows, never stored: nothing to redact
	p.Zone = nil
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	p.Zone = zone
	return r.ex.SessionStats(ctx, p)
}

func (r redacting) SessionCostOfDay(ctx context.Context, p store.SessionCostOfDayParams) (map[string]int64, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.SessionCostOfDay(ctx, p)
}

func (r redacting) SessionListChildren(ctx context.Context, parentID string) ([]logbook.Session, error) {
	if err := r.c.clean(ctx, &parentID); err != nil {
		return nil, err
	}
	return r.ex.SessionListChildren(ctx, parentID)
}

func (r redacting) SessionListUnannounced(ctx context.Context) ([]string, error) {
	return r.ex.SessionListUnannounced(ctx)
}

func (r redacting) SessionTimeOut(ctx context.Context, cutoff, now time.Time) ([]logbook.Session, error) {
	return r.ex.SessionTimeOut(ctx, cutoff, now)
}

func (r redacting) EntryInsert(ctx context.Context, entries []logbook.Entry) (int, error) {
	if err := r.c.clean(ctx, &entries); err != nil {
		return 0, err
	}
	return r.ex.EntryInsert(ctx, entries)
}

// EntryExistingKeys answers in the keys it was given, as the caller sent
// them, though it looks them up as they were stored.
func (r redacting) EntryExistingKeys(ctx context.Context, sessionID string, keys []string) (map[string]bool, error) {
	stored := keys
	if err := r.c.clean(ctx, &sessionID, &stored); err != nil {
		return nil, err
	}
	found, err := r.ex.EntryExistingKeys(ctx, sessionID, stored)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(found))
	for i, key := range keys {
		if found[stored[i]] {
			out[key] = true
		}
	}
	return out, nil
}

func (r redacting) EntryDeleteAfter(ctx context.Context, sessionID string, afterSeq int64) error {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return err
	}
	return r.ex.EntryDeleteAfter(ctx, sessionID, afterSeq)
}

func (r redacting) EntryList(ctx context.Context, p store.EntryListParams) ([]logbook.Entry, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.EntryList(ctx, p)
}

func (r redacting) EntrySupersede(ctx context.Context, sessionID string, at time.Time) (int64, error) {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return 0, err
	}
	return r.ex.EntrySupersede(ctx, sessionID, at)
}

func (r redacting) PlanReplace(ctx context.Context, sessionID string, steps []logbook.PlanStep) error {
	if err := r.c.clean(ctx, &sessionID, &steps); err != nil {
		return err
	}
	return r.ex.PlanReplace(ctx, sessionID, steps)
}

func (r redacting) PlanList(ctx context.Context, sessionID string) ([]logbook.PlanStep, error) {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return nil, err
	}
	return r.ex.PlanList(ctx, sessionID)
}

func (r redacting) PlanStepUpdate(ctx context.Context, sessionID string, n int, status logbook.StepStatus, at time.Time) error {
	if err := r.c.clean(ctx, &sessionID, &status); err != nil {
		return err
	}
	return r.ex.PlanStepUpdate(ctx, sessionID, n, status, at)
}

func (r redacting) PlanCloseInFlight(ctx context.Context, sessionID string, status logbook.StepStatus, at time.Time) error {
	if err := r.c.clean(ctx, &sessionID, &status); err != nil {
		return err
	}
	return r.ex.PlanCloseInFlight(ctx, sessionID, status, at)
}

func (r redacting) ClaimLock(ctx context.Context, project string, subjects []string) error {
	if err := r.c.clean(ctx, &project); err != nil {
		return err
	}
	subjects = slices.Clone(subjects)
	for i := range subjects {
		if err := r.c.clean(ctx, &subjects[i]); err != nil {
			return err
		}
	}
	return r.ex.ClaimLock(ctx, project, subjects)
}

func (r redacting) SweepLock(ctx context.Context) (bool, error) { return r.ex.SweepLock(ctx) }

func (r redacting) ClaimInsert(ctx context.Context, c *logbook.Claim) error {
	if err := r.c.clean(ctx, &c); err != nil {
		return err
	}
	return r.ex.ClaimInsert(ctx, c)
}

func (r redacting) ClaimGet(ctx context.Context, id string) (logbook.Claim, error) {
	if err := r.c.clean(ctx, &id); err != nil {
		return logbook.Claim{}, err
	}
	return r.ex.ClaimGet(ctx, id)
}

func (r redacting) ClaimUpdate(ctx context.Context, c *logbook.Claim) error {
	if err := r.c.clean(ctx, &c); err != nil {
		return err
	}
	return r.ex.ClaimUpdate(ctx, c)
}

func (r redacting) ClaimList(ctx context.Context, p store.ClaimListParams) ([]logbook.Claim, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.ClaimList(ctx, p)
}

func (r redacting) ClaimRenew(ctx context.Context, sessionID string, now time.Time) error {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return err
	}
	return r.ex.ClaimRenew(ctx, sessionID, now)
}

func (r redacting) ClaimReleaseSession(ctx context.Context, sessionID, reason string, now time.Time) ([]logbook.Claim, error) {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return nil, err
	}
	return r.ex.ClaimReleaseSession(ctx, sessionID, r.c.text(reason), now)
}

func (r redacting) ClaimExpire(ctx context.Context, now time.Time) ([]logbook.Claim, error) {
	return r.ex.ClaimExpire(ctx, now)
}

func (r redacting) TouchUpsert(ctx context.Context, sessionID, project string, touches []logbook.Touch) error {
	if err := r.c.clean(ctx, &sessionID, &project, &touches); err != nil {
		return err
	}
	return r.ex.TouchUpsert(ctx, sessionID, project, touches)
}

func (r redacting) TouchList(ctx context.Context, sessionID string) ([]logbook.Touch, error) {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return nil, err
	}
	return r.ex.TouchList(ctx, sessionID)
}

func (r redacting) TouchTop(ctx context.Context, project string, since time.Time, limit int) ([]logbook.Touch, error) {
	if err := r.c.clean(ctx, &project); err != nil {
		return nil, err
	}
	return r.ex.TouchTop(ctx, project, since, limit)
}

func (r redacting) LinkSet(ctx context.Context, sessionID, project string, attached, named []logbook.Link) error {
	if err := r.c.clean(ctx, &sessionID, &project, &attached, &named); err != nil {
		return err
	}
	return r.ex.LinkSet(ctx, sessionID, project, attached, named)
}

func (r redacting) LinkList(ctx context.Context, sessionID string) ([]logbook.Link, error) {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return nil, err
	}
	return r.ex.LinkList(ctx, sessionID)
}

// EventInsert gives the caller's events the ids the store gave their
// redacted copies.
func (r redacting) EventInsert(ctx context.Context, events []*logbook.Event) error {
	stored := events
	if err := r.c.clean(ctx, &stored); err != nil {
		return err
	}
	if err := r.ex.EventInsert(ctx, stored); err != nil {
		return err
	}
	for i := range events {
		events[i].ID = stored[i].ID
	}
	return nil
}

func (r redacting) EventList(ctx context.Context, p store.EventListParams) ([]logbook.Event, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.EventList(ctx, p)
}

func (r redacting) EventLatestID(ctx context.Context, project string) (int64, error) {
	if err := r.c.clean(ctx, &project); err != nil {
		return 0, err
	}
	return r.ex.EventLatestID(ctx, project)
}

func (r redacting) EventPrune(ctx context.Context, before time.Time) (int64, error) {
	return r.ex.EventPrune(ctx, before)
}

func (r redacting) ToolCallList(ctx context.Context, p store.ToolCallListParams) ([]logbook.ToolCall, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.ToolCallList(ctx, p)
}

func (r redacting) AgentEnsure(ctx context.Context, project, name string, now time.Time) error {
	if err := r.c.clean(ctx, &project, &name); err != nil {
		return err
	}
	return r.ex.AgentEnsure(ctx, project, name, now)
}

func (r redacting) AgentGet(ctx context.Context, p store.AgentGetParams) (logbook.Agent, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return logbook.Agent{}, err
	}
	return r.ex.AgentGet(ctx, p)
}

func (r redacting) AgentUpdate(ctx context.Context, a *logbook.Agent) error {
	if err := r.c.clean(ctx, &a); err != nil {
		return err
	}
	return r.ex.AgentUpdate(ctx, a)
}

func (r redacting) AgentRotationInsert(ctx context.Context, project, agent string, rot logbook.Rotation) error {
	if err := r.c.clean(ctx, &project, &agent, &rot); err != nil {
		return err
	}
	return r.ex.AgentRotationInsert(ctx, project, agent, rot)
}

func (r redacting) AgentRotationList(ctx context.Context, project, agent string) ([]logbook.Rotation, error) {
	if err := r.c.clean(ctx, &project, &agent); err != nil {
		return nil, err
	}
	return r.ex.AgentRotationList(ctx, project, agent)
}

func (r redacting) TaskGet(ctx context.Context, project, taskID string) (logbook.Task, error) {
	if err := r.c.clean(ctx, &project, &taskID); err != nil {
		return logbook.Task{}, err
	}
	return r.ex.TaskGet(ctx, project, taskID)
}

func (r redacting) TaskUpsert(ctx context.Context, t *logbook.Task) error {
	if err := r.c.clean(ctx, &t); err != nil {
		return err
	}
	return r.ex.TaskUpsert(ctx, t)
}

func (r redacting) TaskList(ctx context.Context, project, agent string) ([]logbook.Task, error) {
	if err := r.c.clean(ctx, &project, &agent); err != nil {
		return nil, err
	}
	return r.ex.TaskList(ctx, project, agent)
}

func (r redacting) TaskMoveAgent(ctx context.Context, project, agent, sessionID string, now time.Time) (int64, error) {
	if err := r.c.clean(ctx, &project, &agent, &sessionID); err != nil {
		return 0, err
	}
	return r.ex.TaskMoveAgent(ctx, project, agent, sessionID, now)
}

func (r redacting) SessionListLinked(ctx context.Context, project, kind, ref string) ([]logbook.Session, error) {
	if err := r.c.clean(ctx, &project, &kind, &ref); err != nil {
		return nil, err
	}
	return r.ex.SessionListLinked(ctx, project, kind, ref)
}

func (r redacting) SkillList(ctx context.Context, rootID string) ([]string, error) {
	if err := r.c.clean(ctx, &rootID); err != nil {
		return nil, err
	}
	return r.ex.SkillList(ctx, rootID)
}

func (r redacting) SessionDeleteTree(ctx context.Context, id string) (map[string]int64, error) {
	if err := r.c.clean(ctx, &id); err != nil {
		return nil, err
	}
	return r.ex.SessionDeleteTree(ctx, id)
}

func (r redacting) TokenRevoke(ctx context.Context, idOrHash string, at time.Time) (logbook.Token, error) {
	if err := r.c.clean(ctx, &idOrHash); err != nil {
		return logbook.Token{}, err
	}
	return r.ex.TokenRevoke(ctx, idOrHash, at)
}

func (r redacting) TokenRevokeActor(ctx context.Context, project, actor string, at time.Time) (int64, error) {
	if err := r.c.clean(ctx, &project, &actor); err != nil {
		return 0, err
	}
	return r.ex.TokenRevokeActor(ctx, project, actor, at)
}

// Backup takes a file path, which is not stored.
func (r redacting) Backup(ctx context.Context, path string) error { return r.ex.Backup(ctx, path) }

func (r redacting) SessionPruneEnded(ctx context.Context, before time.Time, limit int) (map[string]int64, error) {
	return r.ex.SessionPruneEnded(ctx, before, limit)
}

func (r redacting) SessionListByCommit(ctx context.Context, project, sha string, limit int) ([]logbook.Session, error) {
	if err := r.c.clean(ctx, &project, &sha); err != nil {
		return nil, err
	}
	return r.ex.SessionListByCommit(ctx, project, sha, limit)
}

// Search looks for its query redacted as free text is, so that a search
// reads the way what it searches was stored; filters are identifiers.
func (r redacting) Search(ctx context.Context, p store.SearchParams) (store.SearchResult, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return store.SearchResult{}, err
	}
	return r.ex.Search(ctx, p)
}

func (r redacting) ProjectRetentionGet(ctx context.Context, name string) (logbook.Retention, error) {
	if err := r.c.clean(ctx, &name); err != nil {
		return logbook.Retention{}, err
	}
	return r.ex.ProjectRetentionGet(ctx, name)
}

func (r redacting) ProjectRetentionSet(ctx context.Context, name string, ret logbook.Retention) error {
	if err := r.c.clean(ctx, &name); err != nil {
		return err
	}
	return r.ex.ProjectRetentionSet(ctx, name, ret)
}

func (r redacting) ProjectPricesGet(ctx context.Context, name string) (map[string]logbook.Price, error) {
	if err := r.c.clean(ctx, &name); err != nil {
		return nil, err
	}
	return r.ex.ProjectPricesGet(ctx, name)
}

func (r redacting) ProjectPricesSet(ctx context.Context, name string, prices map[string]logbook.Price) error {
	if err := r.c.clean(ctx, &name); err != nil {
		return err
	}
	return r.ex.ProjectPricesSet(ctx, name, prices)
}

func (r redacting) ProjectRetentionList(ctx context.Context) ([]logbook.ProjectRetention, error) {
	return r.ex.ProjectRetentionList(ctx)
}

func (r redacting) SessionPruneProject(ctx context.Context, project string, before time.Time, limit int) (map[string]int64, error) {
	if err := r.c.clean(ctx, &project); err != nil {
		return nil, err
	}
	return r.ex.SessionPruneProject(ctx, project, before, limit)
}

// Partitions are named by time and hold no text of the caller's.
func (r redacting) EntryPartitionPrune(ctx context.Context, now time.Time) (map[string]int64, error) {
	return r.ex.EntryPartitionPrune(ctx, now)
}

func (r redacting) SessionListTrimmable(ctx context.Context, project string, before time.Time, limit int) ([]string, error) {
	if err := r.c.clean(ctx, &project); err != nil {
		return nil, err
	}
	return r.ex.SessionListTrimmable(ctx, project, before, limit)
}

func (r redacting) SessionMarkTrimmed(ctx context.Context, id string, at time.Time) error {
	if err := r.c.clean(ctx, &id); err != nil {
		return err
	}
	return r.ex.SessionMarkTrimmed(ctx, id, at)
}

func (r redacting) EntryListTrimmable(ctx context.Context, sessionID string, limit int) ([]logbook.Entry, error) {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return nil, err
	}
	return r.ex.EntryListTrimmable(ctx, sessionID, limit)
}

func (r redacting) EntryUpdateContent(ctx context.Context, entries []logbook.Entry) error {
	if err := r.c.clean(ctx, &entries); err != nil {
		return err
	}
	return r.ex.EntryUpdateContent(ctx, entries)
}

// AlertRuleInsert keeps the rule's webhook URL and secret whole: logbook
// posts to the one and signs with the other, and shows neither back
// whole; a Slack URL carries its own secret in its path, which redaction
// would take for one and break.
func (r redacting) AlertRuleInsert(ctx context.Context, rule *logbook.AlertRule) error {
	clean := *rule
	clean.WebhookURL, clean.Secret = "", ""
	if err := r.c.clean(ctx, &clean); err != nil {
		return err
	}
	clean.WebhookURL, clean.Secret = rule.WebhookURL, rule.Secret
	return r.ex.AlertRuleInsert(ctx, &clean)
}

func (r redacting) AlertRuleGet(ctx context.Context, id string) (logbook.AlertRule, error) {
	if err := r.c.clean(ctx, &id); err != nil {
		return logbook.AlertRule{}, err
	}
	return r.ex.AlertRuleGet(ctx, id)
}

func (r redacting) AlertRuleList(ctx context.Context, p store.AlertRuleListParams) ([]logbook.AlertRule, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.AlertRuleList(ctx, p)
}

func (r redacting) AlertRuleDelete(ctx context.Context, id string) error {
	if err := r.c.clean(ctx, &id); err != nil {
		return err
	}
	return r.ex.AlertRuleDelete(ctx, id)
}

func (r redacting) AlertInsert(ctx context.Context, a *logbook.Alert) (bool, error) {
	clean := *a
	if err := r.c.clean(ctx, &clean); err != nil {
		return false, err
	}
	inserted, err := r.ex.AlertInsert(ctx, &clean)
	a.Status, a.NextAttemptAt = clean.Status, clean.NextAttemptAt
	return inserted, err
}

// AlertClaimDue takes times alone.
func (r redacting) AlertClaimDue(ctx context.Context, now, leaseUntil time.Time, limit int) ([]logbook.Alert, error) {
	return r.ex.AlertClaimDue(ctx, now, leaseUntil, limit)
}

func (r redacting) AlertFinish(ctx context.Context, p store.AlertFinishParams) (bool, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return false, err
	}
	return r.ex.AlertFinish(ctx, p)
}

func (r redacting) AlertList(ctx context.Context, p store.AlertListParams) ([]logbook.Alert, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.AlertList(ctx, p)
}

func (r redacting) SessionListIdleClaiming(ctx context.Context, project string, seenBefore, now time.Time, limit int) ([]logbook.IdleClaimer, error) {
	if err := r.c.clean(ctx, &project); err != nil {
		return nil, err
	}
	return r.ex.SessionListIdleClaiming(ctx, project, seenBefore, now, limit)
}

func (r redacting) EntryLastToolCalls(ctx context.Context, sessionID string, n int) ([]logbook.Entry, error) {
	if err := r.c.clean(ctx, &sessionID); err != nil {
		return nil, err
	}
	return r.ex.EntryLastToolCalls(ctx, sessionID, n)
}
