package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, to reach the database beside the store
	_ "modernc.org/sqlite"             // the "sqlite" driver

	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestLegacyPoliciesLoseTheirDefaultAllows: a policy stored before the
// defer decision named every class, read_only and workspace_write "allow"
// among them, whether a person chose that or not. Migration 11 drops those
// two allows, on both engines, and keeps every other decision.
func TestLegacyPoliciesLoseTheirDefaultAllows(t *testing.T) {
	engines := []struct {
		name, driver string
		url          func(testing.TB) string
		open         func(context.Context, string) (store.Store, error)
	}{
		{"sqlite", "sqlite", testdb.SQLitePath, func(ctx context.Context, u string) (store.Store, error) { return sqlitestore.Open(ctx, u) }},
		{"postgres", "pgx", testdb.PostgresURL, func(ctx context.Context, u string) (store.Store, error) { return pgstore.Open(ctx, u) }},
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			u := e.url(t)
			st, err := e.open(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			legacy := `{"read_only":"allow","workspace_write":"allow","network":"ask","config_mutation":"ask","service_control":"ask","package_install":"ask","privilege":"ask","destructive":"deny","unknown":"ask"}`
			chosen := `{"network":"deny"}`
			for name, p := range map[string]string{"legacy": legacy, "chosen": chosen} {
				if err := st.ProjectEnsure(ctx, name, time.Now()); err != nil {
					t.Fatal(err)
				}
				if err := st.ProjectPolicySet(ctx, name, p); err != nil {
					t.Fatal(err)
				}
			}
			st.Close()

			// Run migration 11 again, as on a database made before it.
			db, err := sql.Open(e.driver, u)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = 11`); err != nil {
				t.Fatal(err)
			}
			db.Close()
			st, err = e.open(ctx, u)
			if err != nil {
				t.Fatalf("migrating again: %v", err)
			}
			defer st.Close()

			got := map[string]map[string]string{}
			for _, name := range []string{"legacy", "chosen"} {
				raw, err := st.ProjectPolicyGet(ctx, name)
				if err != nil {
					t.Fatal(err)
				}
				var p map[string]string
				if err := json.Unmarshal([]byte(raw), &p); err != nil {
					t.Fatalf("policy of %s after the migration is not JSON: %q", name, raw)
				}
				got[name] = p
			}
			if l := got["legacy"]; l["read_only"] != "" || l["workspace_write"] != "" || l["network"] != "ask" || l["destructive"] != "deny" || len(l) != 7 {
				t.Errorf("legacy policy after the migration: %v; want the two allows gone, the rest kept", l)
			}
			if c := got["chosen"]; len(c) != 1 || c["network"] != "deny" {
				t.Errorf("a policy without allows changed: %v", c)
			}
		})
	}
}
