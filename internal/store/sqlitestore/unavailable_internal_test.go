package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnavailableReadOnly: a real write to a read-only SQLite database is
// unavailable, with a reason that says to make the file writable; a unique
// violation is not.
func TestUnavailableReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	st, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`INSERT INTO projects (name, created_at) VALUES ('p', 0)`)
	if err == nil {
		t.Fatal("a write to a read-only SQLite database succeeded")
	}
	reason, ok := unavailable(fmt.Errorf("error storing: %w", err))
	if !ok || !strings.Contains(reason, "read-only") {
		t.Errorf("a read-only database: unavailable = %q, %v; want a reason naming read-only", reason, ok)
	}

	rw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	_, err = rw.Exec(`INSERT INTO projects (name, created_at) VALUES ('p', 0), ('p', 0)`)
	if err == nil {
		t.Fatal("a duplicate project was stored")
	}
	if _, ok := unavailable(err); ok {
		t.Errorf("a unique violation is unavailable: %v", err)
	}
	if _, ok := unavailable(errors.New("index out of range")); ok {
		t.Error("an error without a SQLite code is unavailable")
	}
}
