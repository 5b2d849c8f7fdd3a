package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Prices: a project's own prices, kept as a JSON object on its row.

// ProjectPricesGet reads a project's prices. Inside a transaction the
// first read of a project's is kept for the rest of it: a group of
// requests sharing one (the service's group commit) prices each of its
// model calls, and reads them once.
func (e executor) ProjectPricesGet(ctx context.Context, name string) (map[string]logbook.Price, error) {
	raw, kept := e.prices[name]
	if !kept {
		if err := e.readingOther().queryRow(ctx, `SELECT prices FROM projects WHERE name = $1`, name).Scan(&raw); err != nil {
			return nil, e.interpretError(err, "reading prices")
		}
		if e.prices != nil {
			e.prices[name] = raw
		}
	}
	if raw == "" {
		return nil, nil
	}
	var prices map[string]logbook.Price
	if err := json.Unmarshal([]byte(raw), &prices); err != nil {
		return nil, fmt.Errorf("the stored prices of project %s cannot be read: %w", name, err)
	}
	return prices, nil
}

func (e executor) ProjectPricesSet(ctx context.Context, name string, prices map[string]logbook.Price) error {
	raw := ""
	if len(prices) > 0 {
		b, err := json.Marshal(prices)
		if err != nil {
			return fmt.Errorf("encoding prices: %w", err)
		}
		raw = string(b)
	}
	res, err := e.exec(ctx, `UPDATE projects SET prices = $2 WHERE name = $1`, name, raw)
	if err != nil {
		return e.interpretError(err, "storing prices")
	}
	delete(e.prices, name)
	return e.expectOne(res, "storing prices")
}
