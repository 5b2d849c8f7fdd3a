package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestAuthCache: with AuthCacheTTL, a token's lookup is remembered that
// long. A revocation in this process takes effect at once; one made by
// another process (logbook token revoke) within the TTL.
func TestAuthCache(t *testing.T) {
	ctx := context.Background()
	st := testdb.SQLite(t)
	clk := &clock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	server := service.New(st, service.Options{NowFunc: clk.Now, AuthCacheTTL: 2 * time.Second})
	cli := service.New(st, service.Options{NowFunc: clk.Now}) // another process on the same database
	admin := service.Caller{Actor: "admin", Admin: true}

	token, err := cli.CreateToken(ctx, admin, "p", "alice")
	must(t, err)
	if _, err := server.Authenticate(ctx, token); err != nil {
		t.Fatal(err)
	}
	_, err = cli.RevokeToken(ctx, admin, token)
	must(t, err)
	if _, err := server.Authenticate(ctx, token); err != nil {
		t.Errorf("within the TTL the remembered token should still work: %v", err)
	}
	clk.Add(3 * time.Second)
	if _, err := server.Authenticate(ctx, token); !errors.Is(err, logbook.ErrUnauthorized) {
		t.Errorf("after the TTL a revoked token: %v, want ErrUnauthorized", err)
	}

	other, err := server.CreateToken(ctx, admin, "p", "bob")
	must(t, err)
	if _, err := server.Authenticate(ctx, other); err != nil {
		t.Fatal(err)
	}
	_, err = server.RevokeToken(ctx, admin, other)
	must(t, err)
	if _, err := server.Authenticate(ctx, other); !errors.Is(err, logbook.ErrUnauthorized) {
		t.Errorf("revoked in the same process: %v, want ErrUnauthorized at once", err)
	}
}
