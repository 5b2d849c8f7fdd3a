//go:build unix

package sqlitestore_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// TestFilesArePrivate: a database made in a folder that exists, its
// write-ahead log and shared-memory files, and a backup of it, are
// readable by their owner only, whatever the umask lets through; a file
// that existed keeps the mode its owner gave it.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, under which SQLite makes files 0644
	t.Cleanup(func() { syscall.Umask(old) })
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "logbook.db")
	st, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.ProjectEnsure(ctx, "p", time.Now()); err != nil { // a write, so the log exists
		t.Fatal(err)
	}
	backup := filepath.Join(dir, "copy.db")
	if err := st.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{path, path + "-wal", path + "-shm", backup} {
		info, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(name), info.Mode().Perm())
		}
	}

	shared := filepath.Join(dir, "shared.db")
	if err := os.WriteFile(shared, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	st2, err := sqlitestore.Open(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	st2.Close()
	if info, err := os.Stat(shared); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("an existing file's mode changed: %v %v", info.Mode().Perm(), err)
	}
}
