package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Session statistics are read from rollups that every write keeps, in the
// transaction of the write (migrations 0014, 0016 and 0019 describe them):
//
//   - session_stats_quarters: per project, grouping (dimension) and
//     quarter hour the session started in, its value and the sums;
//   - session_stats_dimension_days: the same per UTC day, so that a window
//     of whole days adds up a row per day and value;
//   - session_stats_days: per project and UTC day, every grouping at once.
//
// The store, not the service, keeps them: every statement that changes a
// session (insert, update, time-out, delete) notes the difference it made
// to the sums (statsDelta), and the transaction adds the differences up
// and writes them just before it commits, one row per key however many
// writes it holds (under the service's group commit, hundreds). A
// session's facts before a change come from the session cache (SQLite),
// from the row the caller read (SessionUpdate's was) or, failing both,
// from the database.
//
// A running session's duration grows with the clock, so the rollups count
// durations of ended sessions only; SessionStats adds those of the running
// ones (few: the sweeper ends the rest) from the sessions themselves.

// statsFacts are what the statistics count of one session.
type statsFacts struct {
	id, project                                    string
	startedAt                                      int64 // microseconds
	outcome, blocker, harness, agent, actor, model string
	ended                                          bool
	closedAt                                       sql.NullInt64 // microseconds
	inputTokens, outputTokens, toolCalls           int64
	costMicros                                     int64
	topLevel                                       bool // no parent
}

// statsColumns are the session columns scanStatsFacts reads, in its order.
const statsColumns = `id, project, started_at, outcome, blocker, harness, agent, actor, model, status, closed_at,
	input_tokens, output_tokens, tool_call_count, cost_micros, parent_id`

func scanStatsFacts(row rowScanner) (statsFacts, error) {
	var f statsFacts
	var status, parent string
	err := row.Scan(&f.id, &f.project, &f.startedAt, &f.outcome, &f.blocker, &f.harness, &f.agent, &f.actor, &f.model,
		&status, &f.closedAt, &f.inputTokens, &f.outputTokens, &f.toolCalls, &f.costMicros, &parent)
	f.ended, f.topLevel = status == string(logbook.StatusEnded), parent == ""
	return f, err
}

// factsOf is what the statistics count of s as it is (or would be) stored.
func factsOf(s *logbook.Session) statsFacts {
	f := statsFacts{id: s.ID, project: s.Project, startedAt: micros(s.StartedAt), harness: s.Harness, actor: s.Actor}
	f.setMutable(s)
	return f
}

// setMutable takes the fields SessionUpdate writes from s.
func (f *statsFacts) setMutable(s *logbook.Session) {
	f.outcome, f.blocker, f.agent, f.model = string(s.Outcome), string(s.Blocker), s.Agent, s.Model
	f.ended, f.closedAt = s.Status == logbook.StatusEnded, nullMicros(s.ClosedAt)
	f.inputTokens, f.outputTokens, f.toolCalls = s.InputTokens, s.OutputTokens, s.ToolCallCount
	f.costMicros, f.topLevel = s.CostMicros, s.ParentID == ""
}

// statsSums are the sums a rollup row keeps.
type statsSums struct {
	sessions, durationSeconds, toolCalls  int64
	inputTokens, outputTokens, costMicros tokenSum
}

func (s statsSums) plus(o statsSums) statsSums {
	return statsSums{s.sessions + o.sessions, s.durationSeconds + o.durationSeconds, s.toolCalls + o.toolCalls,
		s.inputTokens.plus(o.inputTokens), s.outputTokens.plus(o.outputTokens), s.costMicros.plus(o.costMicros)}
}

func (s statsSums) minus(o statsSums) statsSums {
	return s.plus(statsSums{-o.sessions, -o.durationSeconds, -o.toolCalls, o.inputTokens.negated(), o.outputTokens.negated(),
		o.costMicros.negated()})
}

func (s statsSums) zero() bool { return s == statsSums{} }

// tokenSum is a sum of token counts (or costs, as large) in two parts, hi·2^31 + lo, each the
// sum of its part of every count: a count may be up to 2^63-1, and a sum
// of such would overflow where two parts cannot (migration 0014).
type tokenSum struct{ hi, lo int64 }

func tokens(count int64) tokenSum { return tokenSum{count >> 31, count & (1<<31 - 1)} }

func (t tokenSum) plus(o tokenSum) tokenSum { return tokenSum{t.hi + o.hi, t.lo + o.lo} }

func (t tokenSum) negated() tokenSum { return tokenSum{-t.hi, -t.lo} }

// total is the sum, saturated at the bounds of an int64.
func (t tokenSum) total() int64 {
	v := new(big.Int).Lsh(big.NewInt(t.hi), 31)
	v.Add(v, big.NewInt(t.lo))
	switch {
	case v.IsInt64():
		return v.Int64()
	case v.Sign() > 0:
		return math.MaxInt64
	default:
		return math.MinInt64
	}
}

// sums is what the session adds to its rollup rows: itself, its tokens,
// tool calls and cost, and its duration once it ended (see
// store.SessionStats).
func (f statsFacts) sums() statsSums {
	s := statsSums{sessions: 1, inputTokens: tokens(f.inputTokens), outputTokens: tokens(f.outputTokens), toolCalls: f.toolCalls,
		costMicros: tokens(f.costMicros)}
	if f.ended && f.closedAt.Valid {
		s.durationSeconds = seconds(f.startedAt, f.closedAt.Int64)
	}
	return s
}

// seconds is the whole seconds from one instant to another (microseconds),
// never below zero.
func seconds(from, to int64) int64 {
	return max(0, (to-from)/1_000_000)
}

// runningSums is what a running session adds when read at now: its
// duration so far.
func (f statsFacts) runningSums(now int64) statsSums {
	if f.ended {
		return statsSums{}
	}
	return statsSums{durationSeconds: seconds(f.startedAt, now)}
}

const (
	quarterMicros = int64(15 * time.Minute / time.Microsecond)
	quartersADay  = 96
	dayMicros     = quartersADay * quarterMicros
)

// statsKey is what places a session in the rollups.
type statsKey struct {
	project                                        string
	quarter                                        int64 // quarter hours since the Unix epoch it started in
	outcome, blocker, harness, agent, actor, model string
	topLevel                                       int64 // 1: no parent; 0: a subagent
}

func (f statsFacts) key() statsKey {
	k := statsKey{f.project, floorDiv(f.startedAt, quarterMicros), f.outcome, f.blocker, f.harness, f.agent, f.actor, f.model, 0}
	if f.topLevel {
		k.topLevel = 1
	}
	return k
}

// value is the key's value in one grouping (not the day).
func (k statsKey) value(by logbook.StatsBy) string {
	switch by {
	case logbook.ByOutcome:
		return k.outcome
	case logbook.ByBlocker:
		return k.blocker
	case logbook.ByHarness:
		return k.harness
	case logbook.ByAgent:
		return k.agent
	case logbook.ByActor:
		return k.actor
	case logbook.ByModel:
		return k.model
	}
	return ""
}

// statsDimensions are the groupings session_stats_quarters keeps, each a
// column of session_stats_days of the same name.
var statsDimensions = []logbook.StatsBy{logbook.ByOutcome, logbook.ByBlocker, logbook.ByHarness,
	logbook.ByAgent, logbook.ByActor, logbook.ByModel}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// statsDelta is what one change of a session adds to the rollups.
type statsDelta struct {
	sessionID string
	key       statsKey
	sums      statsSums
}

// touchDelta is what recording or deleting a session's touches of a file
// adds to the busiest files' rollup (touch_stats_days).
type touchDelta struct {
	sessionID string
	row       touchRow
	count     int64
}

// touchRow keys a row of touch_stats_days: the UTC day of the first time
// a session touched the file.
type touchRow struct {
	project, value string
	day            int64
}

// txStats collects a transaction's deltas until it commits; a nil *txStats
// (outside a transaction) collects nothing.
type txStats struct {
	deltas  []statsDelta
	touches []touchDelta
	marks   [][2]int // len(deltas), len(touches) at each open savepoint
}

// touched notes count more touches of a file by a session that first
// touched it at first (microseconds).
func (t *txStats) touched(sessionID, project, value string, first, count int64) {
	t.touches = append(t.touches, touchDelta{sessionID, touchRow{project, value, floorDiv(first, dayMicros)}, count})
}

// change notes that a session's facts went from was to now; nil is a
// session that did not exist (inserted) or no longer does (deleted).
func (t *txStats) change(was, now *statsFacts) {
	switch {
	case was != nil && now != nil && was.key() == now.key():
		if d := now.sums().minus(was.sums()); !d.zero() {
			t.deltas = append(t.deltas, statsDelta{now.id, now.key(), d})
		}
	default:
		if was != nil {
			t.deltas = append(t.deltas, statsDelta{was.id, was.key(), statsSums{}.minus(was.sums())})
		}
		if now != nil {
			t.deltas = append(t.deltas, statsDelta{now.id, now.key(), now.sums()})
		}
	}
}

func (t *txStats) savepoint() { t.marks = append(t.marks, [2]int{len(t.deltas), len(t.touches)}) }

func (t *txStats) rollbackToSavepoint() {
	if n := len(t.marks); n > 0 {
		t.deltas, t.touches = t.deltas[:t.marks[n-1][0]], t.touches[:t.marks[n-1][1]]
	}
}

func (t *txStats) releaseSavepoint() {
	if n := len(t.marks); n > 0 {
		t.marks = t.marks[:n-1]
	}
}

// dayRow keys the rows of session_stats_days, dimensionRow those of
// session_stats_quarters (bucket: a quarter hour) and
// session_stats_dimension_days (bucket: a UTC day).
type dayRow struct {
	project                                        string
	day                                            int64
	outcome, blocker, harness, agent, actor, model string
	topLevel                                       int64
}

type dimensionRow struct {
	project, dimension string
	bucket             int64
	value              string
	topLevel           int64
}

func compareDimensionRows(a, b dimensionRow) int {
	return cmp.Or(cmp.Compare(a.project, b.project), cmp.Compare(a.dimension, b.dimension), cmp.Compare(a.bucket, b.bucket),
		cmp.Compare(a.value, b.value), cmp.Compare(a.topLevel, b.topLevel))
}

func dimensionKey(r dimensionRow) []any {
	return []any{r.project, r.dimension, r.bucket, r.value, r.topLevel}
}

// flushStats writes the transaction's deltas into the rollups, added up
// per row, just before it commits. Until the backfill has counted every
// session, the changes of sessions it has not reached are left to it: it
// will count them as they are then. Rows are written in key order, so
// that two transactions on PostgreSQL lock the rows they share in the same
// order and never wait for each other in a circle.
func (e executor) flushStats(ctx context.Context) error {
	if e.stats == nil || len(e.stats.deltas)+len(e.stats.touches) == 0 {
		return nil
	}
	done, after, err := e.statsBackfilled(ctx)
	if err != nil {
		return err
	}
	days := map[dayRow]statsSums{}
	quarters, dimensionDays := map[dimensionRow]statsSums{}, map[dimensionRow]statsSums{}
	for _, d := range e.stats.deltas {
		if !done && d.sessionID > after {
			continue
		}
		k := d.key
		day := dayRow{k.project, floorDiv(k.quarter, quartersADay), k.outcome, k.blocker, k.harness, k.agent, k.actor, k.model, k.topLevel}
		days[day] = days[day].plus(d.sums)
		for _, dim := range statsDimensions {
			q := dimensionRow{k.project, string(dim), k.quarter, k.value(dim), k.topLevel}
			quarters[q] = quarters[q].plus(d.sums)
			q.bucket = day.day
			dimensionDays[q] = dimensionDays[q].plus(d.sums)
		}
	}
	touches := map[touchRow]int64{}
	for _, d := range e.stats.touches {
		if done || d.sessionID <= after {
			touches[d.row] += d.count
		}
	}
	e.stats.deltas, e.stats.touches = e.stats.deltas[:0], e.stats.touches[:0]
	var upserts []statement
	upserts = appendUpserts(upserts, e, touches, func(a, b touchRow) int {
		return cmp.Or(cmp.Compare(a.project, b.project), cmp.Compare(a.day, b.day), cmp.Compare(a.value, b.value))
	}, "touch_stats_days", "project, day, value", func(r touchRow) []any {
		return []any{r.project, r.day, r.value}
	}, []string{"touches"}, func(n int64) []any { return []any{n} })
	upserts = appendUpserts(upserts, e, days, func(a, b dayRow) int {
		return cmp.Or(cmp.Compare(a.project, b.project), cmp.Compare(a.day, b.day), cmp.Compare(a.outcome, b.outcome),
			cmp.Compare(a.blocker, b.blocker), cmp.Compare(a.harness, b.harness), cmp.Compare(a.agent, b.agent),
			cmp.Compare(a.actor, b.actor), cmp.Compare(a.model, b.model), cmp.Compare(a.topLevel, b.topLevel))
	}, "session_stats_days", "project, day, outcome, blocker, harness, agent, actor, model, top_level", func(r dayRow) []any {
		return []any{r.project, r.day, r.outcome, r.blocker, r.harness, r.agent, r.actor, r.model, r.topLevel}
	}, statsSumColumns, statsSums.values)
	upserts = appendUpserts(upserts, e, dimensionDays, compareDimensionRows, "session_stats_dimension_days", "project, dimension, day, value, top_level",
		dimensionKey, statsSumColumns, statsSums.values)
	upserts = appendUpserts(upserts, e, quarters, compareDimensionRows, "session_stats_quarters", "project, dimension, quarter, value, top_level",
		dimensionKey, statsSumColumns, statsSums.values)
	if e.d.ModifyingCTEs {
		upserts = combineStatements(upserts)
	}
	for _, u := range upserts {
		if err := e.writeLater(ctx, piped{statement: u, doing: "updating the statistics' rollups"}); err != nil {
			return err
		}
	}
	return nil
}

// statement is one SQL statement, its parameters numbered from $1, and
// its arguments.
type statement struct {
	sql  string
	args []any
}

// maxParameters is the most parameters PostgreSQL takes in a statement.
const maxParameters = 65535

// combineStatements joins statements that return no rows into one, each
// but the last a data-modifying WITH query of the last: one round trip
// instead of one each. Where they take more parameters together than
// PostgreSQL allows (a statistics backfill's large batches) they are left
// apart. (The rows are then locked in another order than when combined;
// the backfill holds the tables against other writers meanwhile.)
func combineStatements(statements []statement) []statement {
	params := 0
	for _, st := range statements {
		params += len(st.args)
	}
	if len(statements) < 2 || params > maxParameters {
		return statements
	}
	var b strings.Builder
	var args []any
	last := len(statements) - 1
	for i, st := range statements {
		switch {
		case i == 0:
			b.WriteString("WITH ")
		case i < last:
			b.WriteString(", ")
		default:
			b.WriteString(" ")
		}
		if i < last {
			b.WriteString("w" + strconv.Itoa(i) + " AS (" + renumber(st.sql, len(args)) + ")")
		} else {
			b.WriteString(renumber(st.sql, len(args)))
		}
		args = append(args, st.args...)
	}
	return []statement{{b.String(), args}}
}

// renumber adds by to the number of every $N parameter of query, which
// holds no other "$".
func renumber(query string, by int) string {
	if by == 0 {
		return query
	}
	var b strings.Builder
	for i := 0; i < len(query); i++ {
		b.WriteByte(query[i])
		if query[i] != '$' {
			continue
		}
		j := i + 1
		for j < len(query) && query[j] >= '0' && query[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(query[i+1 : j])
		b.WriteString(strconv.Itoa(n + by))
		i = j - 1
	}
	return b.String()
}

// appendUpserts appends the statements that add sums to rows of a rollup
// table whose key columns are keyColumns (then shard) and whose sums are
// sumColumns, in the order of compare, in multi-row upserts of the
// engine's chunk size. Rows whose sums are zero are left alone.
func appendUpserts[K, V comparable](upserts []statement, e executor, rows map[K]V, compare func(a, b K) int,
	table, keyColumns string, keyValues func(K) []any, sumColumns []string, sumValues func(V) []any) []statement {
	var zero V
	keys := make([]K, 0, len(rows))
	for k, sums := range rows {
		if sums != zero {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, compare)
	keyCount := strings.Count(keyColumns, ",") + 1
	columns := keyCount + len(sumColumns)
	shard := cmp.Or(e.d.StatsShardSQL, "0")
	var set strings.Builder
	for i, c := range sumColumns {
		if i > 0 {
			set.WriteString(", ")
		}
		set.WriteString(c + " = " + table + "." + c + " + excluded." + c)
	}
	for start := 0; start < len(keys); start += e.d.InsertRows {
		part := keys[start:min(start+e.d.InsertRows, len(keys))]
		args := make([]any, 0, len(part)*columns)
		var values strings.Builder
		for i, k := range part {
			args = append(append(args, keyValues(k)...), sumValues(rows[k])...)
			if i > 0 {
				values.WriteString(", ")
			}
			values.WriteByte('(')
			for c := range columns {
				if c == keyCount {
					values.WriteString(shard + ", ")
				}
				values.WriteString("$" + strconv.Itoa(i*columns+c+1))
				if c < columns-1 {
					values.WriteString(", ")
				}
			}
			values.WriteByte(')')
		}
		upserts = append(upserts, statement{`INSERT INTO ` + table + ` (` + keyColumns + `, shard, ` + strings.Join(sumColumns, ", ") + `)
			VALUES ` + values.String() + `
			ON CONFLICT (` + keyColumns + `, shard) DO UPDATE SET ` + set.String(), args})
	}
	return upserts
}

// statsBackfilled says whether the backfill has counted every session and,
// if not, the id up to which it has. Once it has, the store remembers it:
// only StatsRebuild starts a backfill again.
func (e executor) statsBackfilled(ctx context.Context) (done bool, after string, err error) {
	if e.root.statsDone.Load() {
		return true, "", nil
	}
	err = e.queryRow(ctx, `SELECT done, after_id FROM session_stats_backfill`).Scan(&done, &after)
	if err != nil {
		return false, "", e.interpretError(err, "reading how far the statistics backfill has come")
	}
	if done {
		e.root.statsDone.Store(true)
	}
	return done, after, nil
}

// oldStats returns session id's facts as stored before a change, from the
// transaction's session cache, else was (the caller's reading of the row,
// when not nil), else the database.
func (e executor) oldStats(ctx context.Context, id string, was *logbook.Session) (statsFacts, error) {
	if s, ok := e.txRows.get(id); ok {
		return factsOf(&s), nil
	}
	if was != nil {
		f := factsOf(was)
		f.id = id
		return f, nil
	}
	f, err := scanStatsFacts(e.queryRow(ctx, `SELECT `+statsColumns+` FROM sessions WHERE id = $1`, id))
	return f, e.interpretError(err, "reading session")
}

// statsChanged reports whether an update of s from was writes a column
// the statistics count.
func statsChanged(s, was *logbook.Session) bool {
	if was == nil {
		return true
	}
	return s.Outcome != was.Outcome || s.Blocker != was.Blocker || s.Agent != was.Agent || s.Model != was.Model ||
		s.Status != was.Status || nullMicros(s.ClosedAt) != nullMicros(was.ClosedAt) ||
		s.InputTokens != was.InputTokens || s.OutputTokens != was.OutputTokens || s.ToolCallCount != was.ToolCallCount ||
		s.CostMicros != was.CostMicros || s.ParentID != was.ParentID
}

// SessionStats answers from the rollups and, where they cannot split the
// window, from the sessions (see store.Store).
func (e executor) SessionStats(ctx context.Context, p store.SessionStatsParams) ([]logbook.StatsRow, error) {
	e = e.forReadAcross(ctx)
	if !p.By.Valid() || (p.Then != "" && (!p.Then.Valid() || p.Then == p.By)) {
		return nil, logbook.Invalid("by", "group by two different ones of %v", logbook.StatsGroupings)
	}
	g := &statsGroups{by: p.By, then: p.Then, zone: p.Zone, topLevel: p.TopLevel, sums: map[[2]string]statsSums{}}
	if g.zone == nil {
		g.zone = time.UTC
	}
	since, now := micros(p.Since), micros(p.Now)
	done, _, err := e.statsBackfilled(ctx)
	if err != nil {
		return nil, err
	}
	// scans are the spans [from, to) of start times read from the sessions.
	var scans [][2]int64
	switch {
	case !done: // the rollups are not whole yet
		scans = [][2]int64{{since, math.MaxInt64}}
	case p.Then != "" && p.By != logbook.ByDay && p.Then != logbook.ByDay:
		err = e.statsFromDays(ctx, p.Project, since, g)
	default:
		scans, err = e.statsFromQuarters(ctx, p.Project, since, now, g)
	}
	if err != nil {
		return nil, err
	}
	for _, span := range scans {
		err := e.statsFromSessions(ctx, g, `SELECT `+statsColumns+` FROM sessions
			WHERE project = $1 AND started_at >= $2 AND started_at < $3`, func(f statsFacts) statsSums { return f.sums() },
			p.Project, span[0], span[1])
		if err != nil {
			return nil, err
		}
	}
	// The running sessions' durations so far, which the rollups leave out.
	err = e.statsFromSessions(ctx, g, `SELECT `+statsColumns+` FROM sessions
		WHERE project = $1 AND status = 'active' AND started_at >= $2`, func(f statsFacts) statsSums { return f.runningSums(now) },
		p.Project, since)
	if err != nil {
		return nil, err
	}
	return g.rows(), nil
}

// statsSumColumns are a rollup row's sums, in the order of scanSums.
var statsSumColumns = []string{"sessions", "duration_seconds", "input_tokens_hi", "input_tokens_lo",
	"output_tokens_hi", "output_tokens_lo", "tool_calls", "cost_micros_hi", "cost_micros_lo"}

// statsSumsSQL adds up a rollup's sums (as BIGINT: PostgreSQL's SUM of
// BIGINT is NUMERIC).
var statsSumsSQL = func() string {
	sums := make([]string, len(statsSumColumns))
	for i, c := range statsSumColumns {
		sums[i] = "CAST(SUM(" + c + ") AS BIGINT)"
	}
	return strings.Join(sums, ", ")
}()

// values are the sums in the order of statsSumColumns.
func (s statsSums) values() []any {
	return []any{s.sessions, s.durationSeconds, s.inputTokens.hi, s.inputTokens.lo, s.outputTokens.hi, s.outputTokens.lo, s.toolCalls,
		s.costMicros.hi, s.costMicros.lo}
}

// scanSums are where the columns of statsSumsSQL are read into.
func (s *statsSums) scanSums() []any {
	return []any{&s.sessions, &s.durationSeconds, &s.inputTokens.hi, &s.inputTokens.lo,
		&s.outputTokens.hi, &s.outputTokens.lo, &s.toolCalls, &s.costMicros.hi, &s.costMicros.lo}
}

// statsFromQuarters adds up the rollups by grouping for statistics by at
// most one grouping besides the day, and returns the spans it leaves to
// the sessions: the part of a quarter hour the window starts in and, by
// day, a quarter hour that a day of the zone starts inside (none in any
// zone in use today). UTC days, and windows whatever their days, add up
// session_stats_dimension_days for the whole UTC days and
// session_stats_quarters before the first of them: a few hundred rows.
// Days of another zone add up quarters.
func (e executor) statsFromQuarters(ctx context.Context, project string, since, now int64, g *statsGroups) ([][2]int64, error) {
	dimension := g.by
	if dimension == logbook.ByDay {
		dimension = cmp.Or(g.then, logbook.ByOutcome) // by day alone: every session has one outcome
	}
	first := ceilDiv(since, quarterMicros)
	var scans [][2]int64
	if since < first*quarterMicros {
		scans = append(scans, [2]int64{since, first * quarterMicros})
	}
	byDay := g.by == logbook.ByDay || g.then == logbook.ByDay
	if !byDay || g.zone == time.UTC {
		add := func(_ int64, value string, s statsSums) { g.add(value, "", s) }
		day, localDay := "0", "0"
		if byDay {
			add = func(day int64, value string, s statsSums) { g.addDay(dateOf(day), value, s) }
			day, localDay = "day", localDaySQL(0)
		}
		firstDay := ceilDiv(first, quartersADay)
		err := e.addRollup(ctx, g, "session_stats_dimension_days", "day", day, project, dimension, firstDay, math.MaxInt64, add)
		if err != nil {
			return nil, err
		}
		return scans, e.addRollup(ctx, g, "session_stats_quarters", "quarter", localDay, project, dimension, first, firstDay*quartersADay, add)
	}
	// Days of a zone: the window is cut where its offset from UTC changes
	// (summer time), and each part adds its quarters up into local days in
	// the query. Past two days from now (sessions that say they start in
	// the future), or where the offset is not whole quarter hours (before
	// standard time), quarters are read one by one.
	horizon := ceilDiv(now, quarterMicros) + 2*quartersADay
	for from := first; from < math.MaxInt64; {
		at := time.UnixMicro(from * quarterMicros).In(g.zone)
		_, offset := at.Zone()
		_, change := at.ZoneBounds()
		to := int64(math.MaxInt64)
		if !change.IsZero() {
			to = floorDiv(change.UnixMicro(), quarterMicros)
		}
		if offset%900 != 0 || from >= horizon {
			return scans, e.addQuartersOneByOne(ctx, g, project, dimension, from, &scans)
		}
		if to != math.MaxInt64 && to > horizon {
			to = horizon
		}
		err := e.addRollup(ctx, g, "session_stats_quarters", "quarter", localDaySQL(offset/900), project, dimension, from, to,
			func(day int64, value string, s statsSums) { g.addDay(dateOf(day), value, s) })
		if err != nil {
			return nil, err
		}
		if to != math.MaxInt64 && change.UnixMicro()%quarterMicros != 0 { // a change inside a quarter hour
			scans = append(scans, [2]int64{to * quarterMicros, (to + 1) * quarterMicros})
			to++
		}
		from = to
	}
	return scans, nil
}

// localDaySQL is the day, since the Unix epoch, of the zone offset
// quarters hours east of UTC that a quarter hour (column quarter) starts
// on, rounded down before the epoch too.
func localDaySQL(offset int) string {
	local := "(quarter + " + strconv.Itoa(offset) + ")"
	return "CASE WHEN " + local + " >= 0 THEN " + local + " / 96 ELSE -((95 - " + local + ") / 96) END"
}

// dateOf is the date of a day since the Unix epoch.
func dateOf(day int64) string { return time.Unix(day*86400, 0).UTC().Format(time.DateOnly) }

// addRollup adds up the rows of a rollup by grouping (table, whose time
// column is column) from from to to, by bucket (an expression of column)
// and value, and hands each sum to add.
func (e executor) addRollup(ctx context.Context, g *statsGroups, table, column, bucket, project string, dimension logbook.StatsBy, from, to int64,
	add func(bucket int64, value string, s statsSums)) error {
	if from >= to {
		return nil
	}
	rows, err := e.query(ctx, `SELECT `+bucket+`, value, `+statsSumsSQL+` FROM `+table+`
		WHERE project = $1 AND dimension = $2 AND `+column+` >= $3 AND `+column+` < $4`+g.topLevelSQL()+` GROUP BY 1, 2`,
		project, string(dimension), from, to)
	if err != nil {
		return e.interpretError(err, "reading statistics")
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		var value string
		var s statsSums
		if err := rows.Scan(append([]any{&n, &value}, s.scanSums()...)...); err != nil {
			return e.interpretError(err, "reading statistics")
		}
		add(n, value, s)
	}
	return e.interpretError(rows.Err(), "reading statistics")
}

// addQuartersOneByOne adds the quarters from from on by day, each by the
// local date it starts on, and leaves each quarter a day starts inside to
// the sessions (adding it to scans).
func (e executor) addQuartersOneByOne(ctx context.Context, g *statsGroups, project string, dimension logbook.StatsBy, from int64, scans *[][2]int64) error {
	return e.addRollup(ctx, g, "session_stats_quarters", "quarter", "quarter", project, dimension, from, math.MaxInt64, func(quarter int64, value string, s statsSums) {
		start := quarter * quarterMicros
		if day := g.day(start); g.day(start+quarterMicros-1) == day {
			g.addDay(day, value, s)
		} else if span := [2]int64{start, start + quarterMicros}; !slices.Contains(*scans, span) { // once, not once per value
			*scans = append(*scans, span)
		}
	})
}

// statsFromDays adds up statistics by two groupings neither of which is
// the day: session_stats_days, which keeps every grouping at once, for
// the window's whole UTC days, and the sessions of its partial first day.
func (e executor) statsFromDays(ctx context.Context, project string, since int64, g *statsGroups) error {
	// The window's first day is partial when it starts after midnight.
	// Its sessions are added up in the database, pair by pair, from the
	// shorter side of the window's start: those since the start, or the
	// whole day's rollup less those of the day before the start.
	fromDay := ceilDiv(since, dayMicros)
	if dayStart := floorDiv(since, dayMicros) * dayMicros; dayStart < since {
		if since-dayStart < fromDay*dayMicros-since {
			fromDay--
			if err := e.addSessionsByPair(ctx, g, project, dayStart, since, -1); err != nil {
				return err
			}
		} else if err := e.addSessionsByPair(ctx, g, project, since, fromDay*dayMicros, 1); err != nil {
			return err
		}
	}
	// The groupings are column names of the table (statsDimensions).
	return e.addPairs(ctx, g, 1, `SELECT `+string(g.by)+`, `+string(g.then)+`, `+statsSumsSQL+` FROM session_stats_days
		WHERE project = $1 AND day >= $2`+g.topLevelSQL()+` GROUP BY 1, 2`, project, fromDay)
}

// addSessionsByPair adds (sign 1) or takes away (sign -1) the sums of the
// project's sessions started in [from, to), grouped by g's two groupings
// (neither the day, each a column of sessions) in the database: a row a
// pair rather than a row a session, which the one by one reading of a
// day's sessions of a busy project (tens of thousands) made slow. The sums
// are statsFacts.sums, in SQL.
func (e executor) addSessionsByPair(ctx context.Context, g *statsGroups, project string, from, to, sign int64) error {
	topLevel := ""
	if g.topLevel {
		topLevel = " AND parent_id = ''"
	}
	split := func(column string) string { // tokens(): a count's high and low bits, summed apart
		return `CAST(SUM(` + column + ` >> 31) AS BIGINT), CAST(SUM(` + column + ` & 2147483647) AS BIGINT)`
	}
	return e.addPairs(ctx, g, sign, `SELECT `+string(g.by)+`, `+string(g.then)+`, COUNT(*),
		CAST(SUM(CASE WHEN status = 'ended' AND closed_at > started_at THEN (closed_at - started_at) / 1000000 ELSE 0 END) AS BIGINT),
		`+split("input_tokens")+`, `+split("output_tokens")+`, CAST(SUM(tool_call_count) AS BIGINT), `+split("cost_micros")+`
		FROM sessions WHERE project = $1 AND started_at >= $2 AND started_at < $3`+topLevel+` GROUP BY 1, 2`, project, from, to)
}

// addPairs adds (sign 1) or takes away (sign -1) the rows query selects:
// the two groupings' values, then the sums in the order of scanSums.
func (e executor) addPairs(ctx context.Context, g *statsGroups, sign int64, query string, args ...any) error {
	rows, err := e.query(ctx, query, args...)
	if err != nil {
		return e.interpretError(err, "reading statistics")
	}
	defer rows.Close()
	for rows.Next() {
		var key, then string
		var s statsSums
		if err := rows.Scan(append([]any{&key, &then}, s.scanSums()...)...); err != nil {
			return e.interpretError(err, "reading statistics")
		}
		if sign < 0 {
			s = statsSums{}.minus(s)
		}
		g.add(key, then, s)
	}
	return e.interpretError(rows.Err(), "reading statistics")
}

// statsFromSessions adds what sums says of each session query selects.
func (e executor) statsFromSessions(ctx context.Context, g *statsGroups, query string, sums func(statsFacts) statsSums, args ...any) error {
	rows, err := e.query(ctx, query, args...)
	if err != nil {
		return e.interpretError(err, "reading statistics")
	}
	defer rows.Close()
	for rows.Next() {
		f, err := scanStatsFacts(rows)
		if err != nil {
			return e.interpretError(err, "reading statistics")
		}
		if g.topLevel && !f.topLevel {
			continue
		}
		if s := sums(f); !s.zero() {
			g.add(g.value(g.by, f), g.value(g.then, f), s)
		}
	}
	return e.interpretError(rows.Err(), "reading statistics")
}

// statsGroups adds up statistics by their two keys.
type statsGroups struct {
	by, then logbook.StatsBy
	zone     *time.Location
	topLevel bool // sessions with no parent only
	sums     map[[2]string]statsSums
}

// topLevelSQL is the condition on a rollup's rows that keeps the
// sessions with no parent, when only they count.
func (g *statsGroups) topLevelSQL() string {
	if g.topLevel {
		return ` AND top_level = 1`
	}
	return ""
}

// addDay adds sums of a day and, if there is a second grouping, its value.
func (g *statsGroups) addDay(day, value string, s statsSums) {
	switch {
	case g.then == "":
		g.add(day, "", s)
	case g.by == logbook.ByDay:
		g.add(day, value, s)
	default:
		g.add(value, day, s)
	}
}

func (g *statsGroups) add(key, then string, s statsSums) {
	k := [2]string{key, then}
	g.sums[k] = g.sums[k].plus(s)
}

// day is the date, in the zone, of an instant (microseconds).
func (g *statsGroups) day(at int64) string {
	return time.UnixMicro(at).In(g.zone).Format(time.DateOnly)
}

// value is a session's key in a grouping ("" for none).
func (g *statsGroups) value(by logbook.StatsBy, f statsFacts) string {
	if by == logbook.ByDay {
		return g.day(f.startedAt)
	}
	return f.key().value(by)
}

// rows lists the groups that hold sessions, in key order.
func (g *statsGroups) rows() []logbook.StatsRow {
	out := []logbook.StatsRow{}
	for k, s := range g.sums {
		if s.sessions == 0 { // a rollup row every session of which moved on
			continue
		}
		out = append(out, logbook.StatsRow{Key: k[0], Then: k[1], Sessions: s.sessions, DurationSeconds: s.durationSeconds,
			InputTokens: s.inputTokens.total(), OutputTokens: s.outputTokens.total(), ToolCalls: s.toolCalls,
			CostMicros: s.costMicros.total()})
	}
	slices.SortFunc(out, func(a, b logbook.StatsRow) int { return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Then, b.Then)) })
	return out
}

// StatsPending says how many sessions the backfill has still to count.
func (s *Store) StatsPending(ctx context.Context) (int64, error) {
	done, after, err := s.statsBackfilled(ctx)
	if err != nil || done {
		return 0, err
	}
	var n int64
	err = s.queryRow(ctx, `SELECT COUNT(*) FROM sessions WHERE id > $1`, after).Scan(&n)
	return n, s.interpretError(err, "counting the sessions left to count")
}

// StatsBackfill counts the next sessions, in id order, into the rollups.
// On PostgreSQL it first keeps other transactions from changing sessions
// until it commits (Dialect.StatsBackfillLockSQL): a change committed
// while it reads would be neither in what it read nor counted by its
// writer, who saw these sessions as not yet counted.
func (s *Store) StatsBackfill(ctx context.Context, limit int) (int, bool, error) {
	t, err := s.begin(ctx)
	if err != nil {
		return 0, false, err
	}
	defer t.Rollback()
	for _, stmt := range s.d.StatsBackfillLockSQL {
		if _, err := t.exec(ctx, stmt); err != nil {
			if s.d.IsLockTimeout != nil && s.d.IsLockTimeout(err) {
				return 0, false, nil // writers kept it waiting: try again later
			}
			return 0, false, t.interpretError(err, "locking sessions for the statistics backfill")
		}
	}
	var done bool
	var after string
	if err := t.queryRow(ctx, `SELECT done, after_id FROM session_stats_backfill`).Scan(&done, &after); err != nil {
		return 0, false, t.interpretError(err, "reading how far the statistics backfill has come")
	}
	if done {
		s.statsDone.Store(true)
		return 0, true, nil
	}
	rows, err := t.query(ctx, `SELECT `+statsColumns+` FROM sessions WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return 0, false, t.interpretError(err, "reading sessions to count")
	}
	var counted []statsFacts
	for rows.Next() {
		f, err := scanStatsFacts(rows)
		if err != nil {
			rows.Close()
			return 0, false, t.interpretError(err, "reading sessions to count")
		}
		counted = append(counted, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, t.interpretError(err, "reading sessions to count")
	}
	for i := range counted {
		t.stats.change(nil, &counted[i])
	}
	finished := len(counted) < limit
	last := after
	if len(counted) > 0 {
		last = counted[len(counted)-1].id
	}
	// The files these sessions touched.
	if err := t.countTouches(ctx, `SELECT session_id, project, value, first_at, count FROM touches
		WHERE session_id > $1 AND session_id <= $2 AND kind = 'file'`, after, last); err != nil {
		return 0, false, err
	}
	after = last
	// The cursor moves first: the commit writes the deltas of sessions up
	// to it (flushStats).
	if _, err := t.exec(ctx, `UPDATE session_stats_backfill SET after_id = $1, done = $2`, after, finished); err != nil {
		return 0, false, t.interpretError(err, "recording how far the statistics backfill has come")
	}
	if err := t.Commit(); err != nil {
		return 0, false, err
	}
	if finished {
		s.statsDone.Store(true)
	}
	return len(counted), finished, nil
}

// countTouches adds the touches query selects to the busiest files' rollup.
func (e executor) countTouches(ctx context.Context, query string, args ...any) error {
	rows, err := e.query(ctx, query, args...)
	if err != nil {
		return e.interpretError(err, "reading touches to count")
	}
	defer rows.Close()
	for rows.Next() {
		var session, project, value string
		var first, count int64
		if err := rows.Scan(&session, &project, &value, &first, &count); err != nil {
			return e.interpretError(err, "reading touches to count")
		}
		e.stats.touched(session, project, value, first, count)
	}
	return e.interpretError(rows.Err(), "reading touches to count")
}

// StatsRebuild empties the rollups for the backfill to fill again.
func (s *Store) StatsRebuild(ctx context.Context) error {
	s.statsDone.Store(false)
	return s.inTx(ctx, func(e executor) error {
		for _, stmt := range []string{`DELETE FROM session_stats_days`, `DELETE FROM session_stats_quarters`, `DELETE FROM touch_stats_days`, `DELETE FROM session_stats_dimension_days`,
			`UPDATE session_stats_backfill SET after_id = '', done = NOT EXISTS (SELECT 1 FROM sessions)`} {
			if _, err := e.exec(ctx, stmt); err != nil {
				return e.interpretError(err, "emptying the statistics")
			}
		}
		return nil
	})
}

// inTx runs fn in a transaction of its own: how a method that changes
// sessions, called outside a transaction, changes the rollups with them.
func (s *Store) inTx(ctx context.Context, fn func(e executor) error) error {
	t, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer t.Rollback()
	if err := fn(t.executor); err != nil {
		return err
	}
	return t.Commit()
}
