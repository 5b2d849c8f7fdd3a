package service

import (
	"context"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Prices returns the prices a project's model calls are costed at: the
// built-in table (logbook.DefaultPrices) with the project's own.
func (s *Service) Prices(ctx context.Context, c Caller, project string) (ledger.Prices, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return ledger.Prices{}, err
	}
	own, err := s.store.ProjectPricesGet(ctx, project)
	if err != nil && !isNotFound(err) {
		return ledger.Prices{}, err
	}
	return pricesAnswer(project, own), nil
}

// SetPrices replaces a project's own prices (by model name, as
// logbook.PriceTable.Lookup matches them). Only the admin may. They price
// the model calls recorded from then on: a cost is fixed when its call is
// recorded, so what was recorded before keeps the price it had.
func (s *Service) SetPrices(ctx context.Context, c Caller, project string, own map[string]logbook.Price) (ledger.Prices, error) {
	if !c.Admin {
		return ledger.Prices{}, fmt.Errorf("only the admin token sets a project's prices: %w", logbook.ErrForbidden)
	}
	project, err := logbook.Name("project", project, logbook.MaxID)
	if err != nil {
		return ledger.Prices{}, err
	}
	if project == "" {
		return ledger.Prices{}, logbook.Invalid("project", "name the project")
	}
	if err := logbook.ValidateProjectPrices(own); err != nil {
		return ledger.Prices{}, err
	}
	for name, p := range own {
		p.Source = "" // the project's own, whatever the body said
		own[name] = p
	}
	err = s.inTx(ctx, func(tx *work) error {
		if err := tx.ProjectEnsure(ctx, project, s.now()); err != nil {
			return err
		}
		return tx.ProjectPricesSet(ctx, project, own)
	})
	if err != nil {
		return ledger.Prices{}, err
	}
	return pricesAnswer(project, own), nil
}

func pricesAnswer(project string, own map[string]logbook.Price) ledger.Prices {
	table := logbook.DefaultPrices().WithProjectPrices(own)
	if own == nil {
		own = map[string]logbook.Price{}
	}
	return ledger.Prices{Project: project, Date: table.Date, Models: table.Models, Own: own}
}

// priceEntries fixes the cost of every model call among entries of sess
// (logbook.Usage.SetCost): the harness's own figure, else the call's
// tokens at the project's prices. The project's own prices are read, in
// the transaction, only when a call needs pricing.
func priceEntries(ctx context.Context, tx *work, sess *logbook.Session, entries []logbook.Entry) error {
	var table *logbook.PriceTable
	for _, e := range entries {
		if e.Usage == nil {
			continue
		}
		if table == nil && !e.Usage.CostReported() {
			own, err := tx.ProjectPricesGet(ctx, sess.Project)
			if err != nil && !isNotFound(err) {
				return err
			}
			t := logbook.DefaultPrices().WithProjectPrices(own)
			table = &t
		}
		if table != nil {
			e.Usage.SetCost(*table, sess.Model)
		} else {
			e.Usage.SetCost(logbook.PriceTable{}, "") // reported: kept
		}
	}
	return nil
}

// CostParams say whose cost Cost adds up: one session's (SessionID), or
// that of the project's sessions started since Since, of one agent's
// (Agent) or of all (TopLevel: those with no parent only).
type CostParams struct {
	Project   string
	SessionID string
	Agent     string
	Since     time.Time
	TopLevel  bool
}

// Cost is what model calls cost, in millionths of a US dollar: those of
// one session, or of the sessions of a project (or of one of its agents)
// started since a time, e.g. the start of today for a budget per day.
// Sessions' costs are read from the statistics' rollups, never from the
// entries. A session's cost leaves out its subagents', which are sessions
// of their own.
func (s *Service) Cost(ctx context.Context, c Caller, p CostParams) (int64, error) {
	if p.SessionID != "" {
		sess, err := s.store.SessionGet(ctx, store.SessionGetParams{ID: p.SessionID})
		if err != nil {
			return 0, err
		}
		if !c.sees(sess.Project) {
			return 0, fmt.Errorf("session %s is not in this token's project: %w", p.SessionID, logbook.ErrNotFound)
		}
		return sess.CostMicros, nil
	}
	by := logbook.ByOutcome
	if p.Agent != "" {
		by = logbook.ByAgent
	}
	rows, err := s.Stats(ctx, c, StatsParams{Project: p.Project, Since: p.Since, By: by, TopLevel: p.TopLevel})
	if err != nil {
		return 0, err
	}
	var total int64
	for _, r := range rows {
		if p.Agent == "" || r.Key == p.Agent {
			total = logbook.AddTokens(total, r.CostMicros)
		}
	}
	return total, nil
}
