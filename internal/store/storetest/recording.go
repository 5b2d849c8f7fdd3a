package storetest

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// The suite holds every engine to the whole store contract: it runs on a
// recording store, which notes each method the tests call, and once every
// part of the suite has run, a method of store.Store or store.Tx that no
// test called fails it. A method added to the interface thus needs a
// conformance test before the suite passes again.

// callLog is the set of store methods the suite called, shared by its
// parallel tests.
type callLog struct {
	mu    sync.Mutex
	names map[string]bool
}

func (l *callLog) add(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.names[name] = true
}

// uncalled lists the methods of store.Store and store.Tx that the suite
// never called, sorted.
func (l *callLog) uncalled() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, iface := range []reflect.Type{reflect.TypeFor[store.Store](), reflect.TypeFor[store.Tx]()} {
		for m := range iface.Methods() {
			if !l.names[m.Name] && !slices.Contains(out, m.Name) {
				out = append(out, m.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// recorded wraps newStore so that every store it makes notes its calls in
// calls.
func recorded(newStore func(testing.TB) store.Store, calls *callLog) func(testing.TB) store.Store {
	return func(t testing.TB) store.Store {
		st := newStore(t)
		return &recordingStore{recordingExecutor{st, calls}, st}
	}
}

// recordingExecutor passes each call on to ex after noting its name.
type recordingExecutor struct {
	ex    store.Executor
	calls *callLog
}

// recordingStore is a store.Store that notes its calls; the transactions
// it begins note theirs too.
type recordingStore struct {
	recordingExecutor
	st store.Store
}

var (
	_ store.Store = (*recordingStore)(nil)
	_ store.Tx    = (*recordingTx)(nil)
)

// recordingTx is a store.Tx that notes its calls.
type recordingTx struct {
	recordingExecutor
	tx store.Tx
}

func (r *recordingStore) Begin(ctx context.Context) (store.Tx, error) {
	r.calls.add("Begin")
	tx, err := r.st.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingTx{recordingExecutor{tx, r.calls}, tx}, nil
}

func (r *recordingStore) Engine() string {
	r.calls.add("Engine")
	return r.st.Engine()
}

func (r *recordingStore) CanBackup() bool {
	r.calls.add("CanBackup")
	return r.st.CanBackup()
}

func (r *recordingStore) Optimize(ctx context.Context) error {
	r.calls.add("Optimize")
	return r.st.Optimize(ctx)
}

func (r *recordingStore) StatsPending(ctx context.Context) (int64, error) {
	r.calls.add("StatsPending")
	return r.st.StatsPending(ctx)
}

func (r *recordingStore) StatsBackfill(ctx context.Context, limit int) (int, bool, error) {
	r.calls.add("StatsBackfill")
	return r.st.StatsBackfill(ctx, limit)
}

func (r *recordingStore) Export(ctx context.Context, p store.ExportParams) error {
	r.calls.add("Export")
	return r.st.Export(ctx, p)
}

func (r *recordingStore) StatsRebuild(ctx context.Context) error {
	r.calls.add("StatsRebuild")
	return r.st.StatsRebuild(ctx)
}

func (r *recordingStore) EntryPartitionsMaintain(ctx context.Context, now time.Time, ahead int) error {
	r.calls.add("EntryPartitionsMaintain")
	return r.st.EntryPartitionsMaintain(ctx, now, ahead)
}

func (r *recordingStore) SingleWriter() bool {
	r.calls.add("SingleWriter")
	return r.st.SingleWriter()
}

func (r *recordingStore) EventSequence(ctx context.Context) (int64, error) {
	r.calls.add("EventSequence")
	return r.st.EventSequence(ctx)
}

func (r *recordingStore) Listen(ctx context.Context, wake func()) error {
	r.calls.add("Listen")
	return r.st.Listen(ctx, wake)
}

func (r *recordingStore) SearchPending(ctx context.Context) (int64, error) {
	r.calls.add("SearchPending")
	return r.st.SearchPending(ctx)
}

func (r *recordingStore) SearchBackfill(ctx context.Context, limit int) (int, bool, error) {
	r.calls.add("SearchBackfill")
	return r.st.SearchBackfill(ctx, limit)
}

func (r *recordingStore) SearchRebuild(ctx context.Context) error {
	r.calls.add("SearchRebuild")
	return r.st.SearchRebuild(ctx)
}

func (r *recordingStore) Close() error {
	r.calls.add("Close")
	return r.st.Close()
}

func (r *recordingTx) Commit() error {
	r.calls.add("Commit")
	return r.tx.Commit()
}

func (r *recordingTx) Rollback() error {
	r.calls.add("Rollback")
	return r.tx.Rollback()
}

func (r *recordingTx) Savepoint(ctx context.Context) error {
	r.calls.add("Savepoint")
	return r.tx.Savepoint(ctx)
}

func (r *recordingTx) RollbackToSavepoint(ctx context.Context) error {
	r.calls.add("RollbackToSavepoint")
	return r.tx.RollbackToSavepoint(ctx)
}

func (r *recordingTx) ReleaseSavepoint(ctx context.Context) error {
	r.calls.add("ReleaseSavepoint")
	return r.tx.ReleaseSavepoint(ctx)
}

func (r *recordingTx) LockSessions(ctx context.Context, sessions []store.SessionKeys) error {
	r.calls.add("LockSessions")
	return r.tx.LockSessions(ctx, sessions)
}

func (r recordingExecutor) ProjectEnsure(ctx context.Context, name string, now time.Time) error {
	r.calls.add("ProjectEnsure")
	return r.ex.ProjectEnsure(ctx, name, now)
}

func (r recordingExecutor) ProjectPolicyGet(ctx context.Context, name string) (string, error) {
	r.calls.add("ProjectPolicyGet")
	return r.ex.ProjectPolicyGet(ctx, name)
}

func (r recordingExecutor) ProjectPolicySet(ctx context.Context, name, policy string) error {
	r.calls.add("ProjectPolicySet")
	return r.ex.ProjectPolicySet(ctx, name, policy)
}

func (r recordingExecutor) ImportRows(ctx context.Context, table string, rows []map[string]any) (int, error) {
	r.calls.add("ImportRows")
	return r.ex.ImportRows(ctx, table, rows)
}

func (r recordingExecutor) KeyEnsure(ctx context.Context, name, value string, now time.Time) (string, error) {
	r.calls.add("KeyEnsure")
	return r.ex.KeyEnsure(ctx, name, value, now)
}

func (r recordingExecutor) TokenInsert(ctx context.Context, t *logbook.Token) error {
	r.calls.add("TokenInsert")
	return r.ex.TokenInsert(ctx, t)
}

func (r recordingExecutor) TokenGetByHash(ctx context.Context, hash string) (logbook.Token, error) {
	r.calls.add("TokenGetByHash")
	return r.ex.TokenGetByHash(ctx, hash)
}

func (r recordingExecutor) TokenAdminExists(ctx context.Context) (bool, error) {
	r.calls.add("TokenAdminExists")
	return r.ex.TokenAdminExists(ctx)
}

func (r recordingExecutor) SessionInsert(ctx context.Context, s *logbook.Session) (bool, error) {
	r.calls.add("SessionInsert")
	return r.ex.SessionInsert(ctx, s)
}

func (r recordingExecutor) SessionGet(ctx context.Context, p store.SessionGetParams) (logbook.Session, error) {
	r.calls.add("SessionGet")
	return r.ex.SessionGet(ctx, p)
}

func (r recordingExecutor) SessionGetByHarnessID(ctx context.Context, p store.SessionGetByHarnessIDParams) (logbook.Session, error) {
	r.calls.add("SessionGetByHarnessID")
	return r.ex.SessionGetByHarnessID(ctx, p)
}

func (r recordingExecutor) SessionUpdate(ctx context.Context, s, was *logbook.Session) error {
	r.calls.add("SessionUpdate")
	return r.ex.SessionUpdate(ctx, s, was)
}

func (r recordingExecutor) SessionMarkSeen(ctx context.Context, id string, at time.Time) error {
	r.calls.add("SessionMarkSeen")
	return r.ex.SessionMarkSeen(ctx, id, at)
}

func (r recordingExecutor) SessionList(ctx context.Context, p store.SessionListParams) ([]logbook.Session, error) {
	r.calls.add("SessionList")
	return r.ex.SessionList(ctx, p)
}

func (r recordingExecutor) SessionListPrior(ctx context.Context, p store.SessionListPriorParams) ([]logbook.Session, error) {
	r.calls.add("SessionListPrior")
	return r.ex.SessionListPrior(ctx, p)
}

func (r recordingExecutor) SessionStats(ctx context.Context, p store.SessionStatsParams) ([]logbook.StatsRow, error) {
	r.calls.add("SessionStats")
	return r.ex.SessionStats(ctx, p)
}

func (r recordingExecutor) SessionCostOfDay(ctx context.Context, p store.SessionCostOfDayParams) (map[string]int64, error) {
	r.calls.add("SessionCostOfDay")
	return r.ex.SessionCostOfDay(ctx, p)
}

func (r recordingExecutor) SessionListChildren(ctx context.Context, parentID string) ([]logbook.Session, error) {
	r.calls.add("SessionListChildren")
	return r.ex.SessionListChildren(ctx, parentID)
}

func (r recordingExecutor) SessionListUnannounced(ctx context.Context) ([]string, error) {
	r.calls.add("SessionListUnannounced")
	return r.ex.SessionListUnannounced(ctx)
}

func (r recordingExecutor) SessionTimeOut(ctx context.Context, cutoff, now time.Time) ([]logbook.Session, error) {
	r.calls.add("SessionTimeOut")
	return r.ex.SessionTimeOut(ctx, cutoff, now)
}

func (r recordingExecutor) EntryInsert(ctx context.Context, entries []logbook.Entry) (int, error) {
	r.calls.add("EntryInsert")
	return r.ex.EntryInsert(ctx, entries)
}

func (r recordingExecutor) EntryExistingKeys(ctx context.Context, sessionID string, keys []string) (map[string]bool, error) {
	r.calls.add("EntryExistingKeys")
	return r.ex.EntryExistingKeys(ctx, sessionID, keys)
}

func (r recordingExecutor) EntryDeleteAfter(ctx context.Context, sessionID string, afterSeq int64) error {
	r.calls.add("EntryDeleteAfter")
	return r.ex.EntryDeleteAfter(ctx, sessionID, afterSeq)
}

func (r recordingExecutor) EntryList(ctx context.Context, p store.EntryListParams) ([]logbook.Entry, error) {
	r.calls.add("EntryList")
	return r.ex.EntryList(ctx, p)
}

func (r recordingExecutor) EntrySupersede(ctx context.Context, sessionID string, at time.Time) (int64, error) {
	r.calls.add("EntrySupersede")
	return r.ex.EntrySupersede(ctx, sessionID, at)
}

func (r recordingExecutor) PlanReplace(ctx context.Context, sessionID string, steps []logbook.PlanStep) error {
	r.calls.add("PlanReplace")
	return r.ex.PlanReplace(ctx, sessionID, steps)
}

func (r recordingExecutor) PlanList(ctx context.Context, sessionID string) ([]logbook.PlanStep, error) {
	r.calls.add("PlanList")
	return r.ex.PlanList(ctx, sessionID)
}

func (r recordingExecutor) PlanStepUpdate(ctx context.Context, sessionID string, n int, status logbook.StepStatus, at time.Time) error {
	r.calls.add("PlanStepUpdate")
	return r.ex.PlanStepUpdate(ctx, sessionID, n, status, at)
}

func (r recordingExecutor) PlanCloseInFlight(ctx context.Context, sessionID string, status logbook.StepStatus, at time.Time) error {
	r.calls.add("PlanCloseInFlight")
	return r.ex.PlanCloseInFlight(ctx, sessionID, status, at)
}

func (r recordingExecutor) ClaimLock(ctx context.Context, project string, subjects []string) error {
	r.calls.add("ClaimLock")
	return r.ex.ClaimLock(ctx, project, subjects)
}

func (r recordingExecutor) SweepLock(ctx context.Context) (bool, error) {
	r.calls.add("SweepLock")
	return r.ex.SweepLock(ctx)
}

func (r recordingExecutor) ClaimInsert(ctx context.Context, c *logbook.Claim) error {
	r.calls.add("ClaimInsert")
	return r.ex.ClaimInsert(ctx, c)
}

func (r recordingExecutor) ClaimGet(ctx context.Context, id string) (logbook.Claim, error) {
	r.calls.add("ClaimGet")
	return r.ex.ClaimGet(ctx, id)
}

func (r recordingExecutor) ClaimUpdate(ctx context.Context, c *logbook.Claim) error {
	r.calls.add("ClaimUpdate")
	return r.ex.ClaimUpdate(ctx, c)
}

func (r recordingExecutor) ClaimList(ctx context.Context, p store.ClaimListParams) ([]logbook.Claim, error) {
	r.calls.add("ClaimList")
	return r.ex.ClaimList(ctx, p)
}

func (r recordingExecutor) ClaimRenew(ctx context.Context, sessionID string, now time.Time) error {
	r.calls.add("ClaimRenew")
	return r.ex.ClaimRenew(ctx, sessionID, now)
}

func (r recordingExecutor) ClaimReleaseSession(ctx context.Context, sessionID, reason string, now time.Time) ([]logbook.Claim, error) {
	r.calls.add("ClaimReleaseSession")
	return r.ex.ClaimReleaseSession(ctx, sessionID, reason, now)
}

func (r recordingExecutor) ClaimExpire(ctx context.Context, now time.Time) ([]logbook.Claim, error) {
	r.calls.add("ClaimExpire")
	return r.ex.ClaimExpire(ctx, now)
}

func (r recordingExecutor) TouchUpsert(ctx context.Context, sessionID, project string, touches []logbook.Touch) error {
	r.calls.add("TouchUpsert")
	return r.ex.TouchUpsert(ctx, sessionID, project, touches)
}

func (r recordingExecutor) TouchList(ctx context.Context, sessionID string) ([]logbook.Touch, error) {
	r.calls.add("TouchList")
	return r.ex.TouchList(ctx, sessionID)
}

func (r recordingExecutor) TouchTop(ctx context.Context, project string, since time.Time, limit int) ([]logbook.Touch, error) {
	r.calls.add("TouchTop")
	return r.ex.TouchTop(ctx, project, since, limit)
}

func (r recordingExecutor) LinkSet(ctx context.Context, sessionID, project string, attached, named []logbook.Link) error {
	r.calls.add("LinkSet")
	return r.ex.LinkSet(ctx, sessionID, project, attached, named)
}

func (r recordingExecutor) LinkList(ctx context.Context, sessionID string) ([]logbook.Link, error) {
	r.calls.add("LinkList")
	return r.ex.LinkList(ctx, sessionID)
}

func (r recordingExecutor) EventInsert(ctx context.Context, events []*logbook.Event) error {
	r.calls.add("EventInsert")
	return r.ex.EventInsert(ctx, events)
}

func (r recordingExecutor) EventList(ctx context.Context, p store.EventListParams) ([]logbook.Event, error) {
	r.calls.add("EventList")
	return r.ex.EventList(ctx, p)
}

func (r recordingExecutor) EventLatestID(ctx context.Context, project string) (int64, error) {
	r.calls.add("EventLatestID")
	return r.ex.EventLatestID(ctx, project)
}

func (r recordingExecutor) EventPrune(ctx context.Context, before time.Time) (int64, error) {
	r.calls.add("EventPrune")
	return r.ex.EventPrune(ctx, before)
}

func (r recordingExecutor) ToolCallList(ctx context.Context, p store.ToolCallListParams) ([]logbook.ToolCall, error) {
	r.calls.add("ToolCallList")
	return r.ex.ToolCallList(ctx, p)
}

func (r recordingExecutor) AgentEnsure(ctx context.Context, project, name string, now time.Time) error {
	r.calls.add("AgentEnsure")
	return r.ex.AgentEnsure(ctx, project, name, now)
}

func (r recordingExecutor) AgentGet(ctx context.Context, p store.AgentGetParams) (logbook.Agent, error) {
	r.calls.add("AgentGet")
	return r.ex.AgentGet(ctx, p)
}

func (r recordingExecutor) AgentUpdate(ctx context.Context, a *logbook.Agent) error {
	r.calls.add("AgentUpdate")
	return r.ex.AgentUpdate(ctx, a)
}

func (r recordingExecutor) AgentRotationInsert(ctx context.Context, project, agent string, rot logbook.Rotation) error {
	r.calls.add("AgentRotationInsert")
	return r.ex.AgentRotationInsert(ctx, project, agent, rot)
}

func (r recordingExecutor) AgentRotationList(ctx context.Context, project, agent string) ([]logbook.Rotation, error) {
	r.calls.add("AgentRotationList")
	return r.ex.AgentRotationList(ctx, project, agent)
}

func (r recordingExecutor) TaskGet(ctx context.Context, project, taskID string) (logbook.Task, error) {
	r.calls.add("TaskGet")
	return r.ex.TaskGet(ctx, project, taskID)
}

func (r recordingExecutor) TaskUpsert(ctx context.Context, t *logbook.Task) error {
	r.calls.add("TaskUpsert")
	return r.ex.TaskUpsert(ctx, t)
}

func (r recordingExecutor) TaskList(ctx context.Context, project, agent string) ([]logbook.Task, error) {
	r.calls.add("TaskList")
	return r.ex.TaskList(ctx, project, agent)
}

func (r recordingExecutor) TaskMoveAgent(ctx context.Context, project, agent, sessionID string, now time.Time) (int64, error) {
	r.calls.add("TaskMoveAgent")
	return r.ex.TaskMoveAgent(ctx, project, agent, sessionID, now)
}

func (r recordingExecutor) SessionListLinked(ctx context.Context, project, kind, ref string) ([]logbook.Session, error) {
	r.calls.add("SessionListLinked")
	return r.ex.SessionListLinked(ctx, project, kind, ref)
}

func (r recordingExecutor) SkillList(ctx context.Context, rootID string) ([]string, error) {
	r.calls.add("SkillList")
	return r.ex.SkillList(ctx, rootID)
}

func (r recordingExecutor) SessionDeleteTree(ctx context.Context, id string) (map[string]int64, error) {
	r.calls.add("SessionDeleteTree")
	return r.ex.SessionDeleteTree(ctx, id)
}

func (r recordingExecutor) TokenRevoke(ctx context.Context, idOrHash string, at time.Time) (logbook.Token, error) {
	r.calls.add("TokenRevoke")
	return r.ex.TokenRevoke(ctx, idOrHash, at)
}

func (r recordingExecutor) TokenRevokeActor(ctx context.Context, project, actor string, at time.Time) (int64, error) {
	r.calls.add("TokenRevokeActor")
	return r.ex.TokenRevokeActor(ctx, project, actor, at)
}

func (r recordingExecutor) Backup(ctx context.Context, path string) error {
	r.calls.add("Backup")
	return r.ex.Backup(ctx, path)
}

func (r recordingExecutor) SessionPruneEnded(ctx context.Context, before time.Time, limit int) (map[string]int64, error) {
	r.calls.add("SessionPruneEnded")
	return r.ex.SessionPruneEnded(ctx, before, limit)
}

func (r recordingExecutor) SessionListByCommit(ctx context.Context, project, sha string, limit int) ([]logbook.Session, error) {
	r.calls.add("SessionListByCommit")
	return r.ex.SessionListByCommit(ctx, project, sha, limit)
}

func (r recordingExecutor) Search(ctx context.Context, p store.SearchParams) (store.SearchResult, error) {
	r.calls.add("Search")
	return r.ex.Search(ctx, p)
}

func (r recordingExecutor) ProjectRetentionGet(ctx context.Context, name string) (logbook.Retention, error) {
	r.calls.add("ProjectRetentionGet")
	return r.ex.ProjectRetentionGet(ctx, name)
}

func (r recordingExecutor) ProjectRetentionSet(ctx context.Context, name string, ret logbook.Retention) error {
	r.calls.add("ProjectRetentionSet")
	return r.ex.ProjectRetentionSet(ctx, name, ret)
}

func (r recordingExecutor) ProjectPricesGet(ctx context.Context, name string) (map[string]logbook.Price, error) {
	r.calls.add("ProjectPricesGet")
	return r.ex.ProjectPricesGet(ctx, name)
}

func (r recordingExecutor) ProjectPricesSet(ctx context.Context, name string, prices map[string]logbook.Price) error {
	r.calls.add("ProjectPricesSet")
	return r.ex.ProjectPricesSet(ctx, name, prices)
}

func (r recordingExecutor) ProjectRetentionList(ctx context.Context) ([]logbook.ProjectRetention, error) {
	r.calls.add("ProjectRetentionList")
	return r.ex.ProjectRetentionList(ctx)
}

func (r recordingExecutor) EntryPartitionPrune(ctx context.Context, now time.Time) (map[string]int64, error) {
	r.calls.add("EntryPartitionPrune")
	return r.ex.EntryPartitionPrune(ctx, now)
}

func (r recordingExecutor) SessionPruneProject(ctx context.Context, project string, before time.Time, limit int) (map[string]int64, error) {
	r.calls.add("SessionPruneProject")
	return r.ex.SessionPruneProject(ctx, project, before, limit)
}

func (r recordingExecutor) SessionListTrimmable(ctx context.Context, project string, before time.Time, limit int) ([]string, error) {
	r.calls.add("SessionListTrimmable")
	return r.ex.SessionListTrimmable(ctx, project, before, limit)
}

func (r recordingExecutor) SessionMarkTrimmed(ctx context.Context, id string, at time.Time) error {
	r.calls.add("SessionMarkTrimmed")
	return r.ex.SessionMarkTrimmed(ctx, id, at)
}

func (r recordingExecutor) EntryListTrimmable(ctx context.Context, sessionID string, limit int) ([]logbook.Entry, error) {
	r.calls.add("EntryListTrimmable")
	return r.ex.EntryListTrimmable(ctx, sessionID, limit)
}

func (r recordingExecutor) EntryUpdateContent(ctx context.Context, entries []logbook.Entry) error {
	r.calls.add("EntryUpdateContent")
	return r.ex.EntryUpdateContent(ctx, entries)
}

func (r recordingExecutor) AlertRuleInsert(ctx context.Context, rule *logbook.AlertRule) error {
	r.calls.add("AlertRuleInsert")
	return r.ex.AlertRuleInsert(ctx, rule)
}

func (r recordingExecutor) AlertRuleGet(ctx context.Context, id string) (logbook.AlertRule, error) {
	r.calls.add("AlertRuleGet")
	return r.ex.AlertRuleGet(ctx, id)
}

func (r recordingExecutor) AlertRuleList(ctx context.Context, p store.AlertRuleListParams) ([]logbook.AlertRule, error) {
	r.calls.add("AlertRuleList")
	return r.ex.AlertRuleList(ctx, p)
}

func (r recordingExecutor) AlertRuleDelete(ctx context.Context, id string) error {
	r.calls.add("AlertRuleDelete")
	return r.ex.AlertRuleDelete(ctx, id)
}

func (r recordingExecutor) AlertInsert(ctx context.Context, a *logbook.Alert) (bool, error) {
	r.calls.add("AlertInsert")
	return r.ex.AlertInsert(ctx, a)
}

func (r recordingExecutor) AlertClaimDue(ctx context.Context, now, leaseUntil time.Time, limit int) ([]logbook.Alert, error) {
	r.calls.add("AlertClaimDue")
	return r.ex.AlertClaimDue(ctx, now, leaseUntil, limit)
}

func (r recordingExecutor) AlertFinish(ctx context.Context, p store.AlertFinishParams) (bool, error) {
	r.calls.add("AlertFinish")
	return r.ex.AlertFinish(ctx, p)
}

func (r recordingExecutor) AlertList(ctx context.Context, p store.AlertListParams) ([]logbook.Alert, error) {
	r.calls.add("AlertList")
	return r.ex.AlertList(ctx, p)
}

func (r recordingExecutor) SessionListIdleClaiming(ctx context.Context, project string, seenBefore, now time.Time, limit int) ([]logbook.IdleClaimer, error) {
	r.calls.add("SessionListIdleClaiming")
	return r.ex.SessionListIdleClaiming(ctx, project, seenBefore, now, limit)
}

func (r recordingExecutor) EntryLastToolCalls(ctx context.Context, sessionID string, n int) ([]logbook.Entry, error) {
	r.calls.add("EntryLastToolCalls")
	return r.ex.EntryLastToolCalls(ctx, sessionID, n)
}
