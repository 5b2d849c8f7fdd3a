package sqlstore

import (
	"context"

	"github.com/logbookhq/logbook/internal/store"
)

// SessionCostOfDay reads the cost of a UTC day's sessions from
// session_stats_dimension_days: the rows of the agent grouping (by agent,
// or one agent's) or of the outcome grouping (every session has one
// outcome, "" while running, so they add up to the day's), a row per
// value, top_level and shard. Until the statistics backfill has counted
// every session the rollups are not whole, and the day's sessions are
// added up instead (the index on project and started_at finds them).
func (e executor) SessionCostOfDay(ctx context.Context, p store.SessionCostOfDayParams) (map[string]int64, error) {
	day := floorDiv(micros(p.Day), dayMicros)
	byAgent := p.ByAgent || p.Agent != ""
	keyOf := func(agent string) string {
		if byAgent {
			return agent
		}
		return ""
	}
	sums := map[string]tokenSum{}
	done, _, err := e.statsBackfilled(ctx)
	if err != nil {
		return nil, err
	}
	if !done {
		// The transaction's own writes are in the sessions it reads.
		rows, err := e.query(ctx, `SELECT agent, cost_micros FROM sessions
			WHERE project = $1 AND started_at >= $2 AND started_at < $3 AND ($4 = '' OR agent = $4)`,
			p.Project, day*dayMicros, (day+1)*dayMicros, p.Agent)
		if err != nil {
			return nil, e.interpretError(err, "adding up the day's cost")
		}
		defer rows.Close()
		for rows.Next() {
			var agent string
			var cost int64
			if err := rows.Scan(&agent, &cost); err != nil {
				return nil, e.interpretError(err, "adding up the day's cost")
			}
			sums[keyOf(agent)] = sums[keyOf(agent)].plus(tokens(cost))
		}
		if err := rows.Err(); err != nil {
			return nil, e.interpretError(err, "adding up the day's cost")
		}
		return costTotals(sums), nil
	}
	dimension := "outcome"
	if byAgent {
		dimension = "agent"
	}
	rows, err := e.query(ctx, `SELECT value, cost_micros_hi, cost_micros_lo FROM session_stats_dimension_days
		WHERE project = $1 AND dimension = $2 AND day = $3 AND ($4 = '' OR value = $4)`, p.Project, dimension, day, p.Agent)
	if err != nil {
		return nil, e.interpretError(err, "adding up the day's cost")
	}
	defer rows.Close()
	for rows.Next() {
		var value string
		var part tokenSum
		if err := rows.Scan(&value, &part.hi, &part.lo); err != nil {
			return nil, e.interpretError(err, "adding up the day's cost")
		}
		sums[keyOf(value)] = sums[keyOf(value)].plus(part)
	}
	if err := rows.Err(); err != nil {
		return nil, e.interpretError(err, "adding up the day's cost")
	}
	// What this transaction changed so far reaches the rollups when it
	// commits (flushStats); until then it is in its deltas.
	if e.stats != nil {
		for _, d := range e.stats.deltas {
			k := d.key
			if k.project != p.Project || floorDiv(k.quarter, quartersADay) != day || (p.Agent != "" && k.agent != p.Agent) {
				continue
			}
			sums[keyOf(k.agent)] = sums[keyOf(k.agent)].plus(d.sums.costMicros)
		}
	}
	return costTotals(sums), nil
}

// costTotals turns sums of costs into totals, leaving out the zero ones.
func costTotals(sums map[string]tokenSum) map[string]int64 {
	totals := make(map[string]int64, len(sums))
	for k, s := range sums {
		if t := s.total(); t != 0 {
			totals[k] = t
		}
	}
	return totals
}
