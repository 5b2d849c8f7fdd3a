package crashtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" driver, for the integrity check
)

// mountTmpfs mounts a tmpfs of size bytes on a new folder and returns it;
// it is unmounted when the test ends. Where mounting is not permitted (not
// root, or a container without CAP_SYS_ADMIN) it skips the test, except
// under CI=true, where it fails: CI runs as root and must run this test.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small-disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil && os.Getenv("CI") == "true" {
		t.Fatalf("the full-disk test must run under CI=true, but a %s tmpfs cannot be mounted to fill (%v: %s); run CI as root with CAP_SYS_ADMIN", size, err, strings.TrimSpace(string(out)))
	}
	if err != nil {
		t.Skipf("SKIPPING the full-disk test: cannot mount a %s tmpfs to fill (%v: %s); it needs root with CAP_SYS_ADMIN", size, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file until the disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 16<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return
		}
	}
}

// integrityCheck runs SQLite's integrity check on the database file,
// through a connection of its own, next to the server's.
func integrityCheck(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q %v", res, err)
	}
}

// TestSQLiteDiskFull fills the disk under a running server. Writes then
// fail as 503 with Retry-After and a detail that names the cause; reads
// go on; the file stays sound; once space is freed, the same batch goes
// through without a restart, and nothing acknowledged is lost, also
// across a kill -9.
func TestSQLiteDiskFull(t *testing.T) {
	dir := mountTmpfs(t, "8m")
	db := filepath.Join(dir, "logbook.db")
	srv := startServer(t, db)
	l := newLoad(t, srv, 3)
	ctx := context.Background()
	for _, c := range l.clients {
		if !l.start(ctx, c) {
			t.FailNow()
		}
		for range 20 {
			l.send(ctx, c)
		}
	}
	before := l.acked()

	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	c := l.clients[0]
	var refused reply
	for attempt := 0; refused.status == 0; attempt++ {
		if attempt == 5000 {
			t.Fatalf("a full disk still takes writes after %d batches", attempt)
		}
		keys, body := c.nextBatch()
		r, err := srv.do(ctx, "POST", "/v1/sessions/"+c.session+"/entries", c.token, body)
		switch {
		case err != nil:
			t.Fatalf("the server stopped answering on a full disk: %v", err)
		case r.status == 200:
			l.ack(c, keys, r) // pages the database had free took it
		default:
			refused = r
		}
	}
	var p struct{ Detail string }
	_ = json.Unmarshal(refused.body, &p)
	if refused.status != 503 || refused.header.Get("Retry-After") == "" || !strings.Contains(p.Detail, "full") {
		t.Fatalf("a write on a full disk: %d (Retry-After %q) %s; want 503 with Retry-After naming the full disk",
			refused.status, refused.header.Get("Retry-After"), refused.body)
	}
	t.Logf("full disk: %d entries acknowledged before; the write was refused with %d %q", l.acked(), refused.status, p.Detail)

	// Reads go on, and the file is sound.
	srv.must("GET", "/v1/sessions/"+c.session, c.token, nil, 200)
	srv.must("GET", "/v1/sessions?project="+project, c.token, nil, 200)
	integrityCheck(t, db)

	// Space comes back: the refused batch goes through as it is, and more.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for _, c := range l.clients {
		for range 5 {
			keys, body := c.nextBatch()
			l.ack(c, keys, srv.must("POST", "/v1/sessions/"+c.session+"/entries", c.token, body, 200))
		}
	}
	t.Logf("after freeing space: %d entries acknowledged in all (%d before the disk filled)", l.acked(), before)
	srv.kill()
	srv.start()
	integrityCheck(t, db)
	l.faults.check(t)
	l.verify()
}
