package service_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/store/pgstore"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestTokensAreStoredAsHashes: a token is lbk_ and 32 random bytes,
// base64url; the database holds its SHA-256 and nowhere its value, so a
// copy of the database (a backup, a stolen file) holds no usable token.
func TestTokensAreStoredAsHashes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		ctx := context.Background()
		url := e.URL(t)
		var st store.Store
		var err error
		if e.Name == "sqlite" {
			st, err = sqlitestore.Open(ctx, url)
		} else {
			st, err = pgstore.Open(ctx, url)
		}
		must(t, err)
		t.Cleanup(func() { st.Close() })
		svc := service.New(st, service.Options{})
		admin := service.Caller{Actor: "admin", Admin: true}

		shape := regexp.MustCompile(`^lbk_[A-Za-z0-9_-]{43}$`)
		var tokens []string
		for _, actor := range []string{"alice", "bob"} {
			token, err := svc.CreateToken(ctx, admin, "p", actor)
			must(t, err)
			raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, "lbk_"))
			if !shape.MatchString(token) || err != nil || len(raw) != 32 {
				t.Errorf("token %q is not lbk_ and 32 bytes base64url", token)
			}
			tokens = append(tokens, token)
		}
		if tokens[0] == tokens[1] {
			t.Errorf("two tokens are the same")
		}
		generated, err := svc.EnsureAdminToken(ctx, "")
		must(t, err)
		tokens = append(tokens, generated)

		stored := storedText(t, e.Name, url)
		for _, token := range tokens {
			if bytes.Contains(stored, []byte(token)) {
				t.Errorf("the database holds a token's value")
			}
			sum := sha256.Sum256([]byte(token))
			if !bytes.Contains(stored, []byte(hex.EncodeToString(sum[:]))) {
				t.Errorf("the database does not hold a token's SHA-256: it is looked up by something else")
			}
			if _, err := svc.Authenticate(ctx, token); err != nil {
				t.Errorf("a stored token does not authenticate: %v", err)
			}
		}
	})
}

// storedText returns everything the database at url holds: the bytes of a
// SQLite file and its write-ahead log, or every row of every PostgreSQL
// table as text.
func storedText(t *testing.T, engine, url string) []byte {
	t.Helper()
	if engine == "sqlite" {
		var all []byte
		for _, name := range []string{url, url + "-wal"} {
			b, err := os.ReadFile(name)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return all
	}
	db, err := sql.Open("pgx", url)
	must(t, err)
	defer db.Close()
	rows, err := db.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
	must(t, err)
	var tables []string
	for rows.Next() {
		var name string
		must(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	must(t, rows.Err())
	rows.Close()
	if len(tables) < 5 {
		t.Fatalf("found only tables %v", tables)
	}
	var all []byte
	for _, table := range tables {
		rows, err := db.Query(`SELECT CAST(t AS text) FROM "` + table + `" t`)
		must(t, err)
		for rows.Next() {
			var row string
			must(t, rows.Scan(&row))
			all = append(all, row...)
			all = append(all, '\n')
		}
		must(t, rows.Err())
		rows.Close()
	}
	return all
}

// TestBearerToken: the Authorization header is read as RFC 6750 says: the
// scheme Bearer in any case, then the token; a bare token or another
// scheme is refused, and the refusal does not repeat what was sent.
func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		name, header, want string
	}{
		{"Bearer", "Bearer lbk_abc", "lbk_abc"},
		{"lower case", "bearer lbk_abc", "lbk_abc"},
		{"upper case, spaces", "  BEARER   lbk_abc ", "lbk_abc"},
		{"no header", "", ""},
		{"a bare token", "lbk_abc", ""},
		{"another scheme", "Basic lbk_abc", ""},
		{"the scheme alone", "Bearer", ""},
		{"the scheme run into the token", "Bearerlbk_abc", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := service.BearerToken(tc.header)
			if tc.want != "" {
				if got != tc.want || err != nil {
					t.Errorf("BearerToken(%q) = %q, %v; want %q", tc.header, got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, logbook.ErrUnauthorized) || got != "" {
				t.Errorf("BearerToken(%q) = %q, %v; want ErrUnauthorized", tc.header, got, err)
			}
			if err != nil && strings.Contains(err.Error(), "lbk_abc") {
				t.Errorf("the error repeats the header: %v", err)
			}
		})
	}
}

// TestAdminTokenAfterRevocation: revoking the admin token makes the next
// start generate a new one; a LOGBOOK_ADMIN_TOKEN that was revoked, or
// that is a project's token, is refused rather than leaving the server
// without an admin.
func TestAdminTokenAfterRevocation(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		ctx := context.Background()
		svc := service.New(e.Open(t), service.Options{})
		first, err := svc.EnsureAdminToken(ctx, "")
		must(t, err)
		admin, err := svc.Authenticate(ctx, first)
		must(t, err)
		_, err = svc.RevokeToken(ctx, admin, first)
		must(t, err)
		second, err := svc.EnsureAdminToken(ctx, "") // the next start
		must(t, err)
		if c, err := svc.Authenticate(ctx, second); err != nil || !c.Admin || second == first {
			t.Fatalf("after revoking the admin token, the next start made %v (%v)", c, err)
		}
		if again, err := svc.EnsureAdminToken(ctx, ""); again != "" || err != nil {
			t.Errorf("a start with an admin token made another: %q, %v", again, err)
		}

		admin, _ = svc.Authenticate(ctx, second)
		must(t, errOf(svc.EnsureAdminToken(ctx, "fixed-admin")))
		_, err = svc.RevokeToken(ctx, admin, "fixed-admin")
		must(t, err)
		if _, err := svc.EnsureAdminToken(ctx, "fixed-admin"); err == nil || !strings.Contains(err.Error(), "revoked") {
			t.Errorf("a revoked LOGBOOK_ADMIN_TOKEN: %v, want an error saying it was revoked", err)
		}
		alice, err := svc.CreateToken(ctx, admin, "p", "alice")
		must(t, err)
		if _, err := svc.EnsureAdminToken(ctx, alice); err == nil || !strings.Contains(err.Error(), "alice") {
			t.Errorf("a project's token as LOGBOOK_ADMIN_TOKEN: %v, want an error", err)
		}
		if c, _ := svc.Authenticate(ctx, alice); c.Admin {
			t.Errorf("alice's token became the admin's")
		}
	})
}

func errOf(_ string, err error) error { return err }
