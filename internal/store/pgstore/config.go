package pgstore

import (
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// pgconnConfig parses a connection URL, saying what is wrong with it
// without echoing a password.
func pgconnConfig(connURL string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(connURL)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL URL %s cannot be read; write it as postgres://user:password@host:5432/dbname", redactURL(connURL))
	}
	return cfg, nil
}

// redactURL hides the password of a connection URL for messages and logs.
func redactURL(connURL string) string {
	u, err := url.Parse(connURL)
	if err != nil {
		return "(unreadable URL)"
	}
	return u.Redacted()
}
