package service_test

import (
	"database/sql"

	"github.com/logbookhq/logbook/internal/store"
)

// rawDB reaches the database under a store, for tests that look at rows
// the API never shows (token hashes).
func rawDB(st store.Store) *sql.DB {
	return st.(interface{ DB() *sql.DB }).DB()
}
