package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

func testMaintenance(t *testing.T, newStore func(testing.TB) store.Store) {
	ctx := context.Background()

	t.Run("KeyEnsure", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		// Racing replicas all get the first key stored.
		got := make([]string, 8)
		errs := make([]error, len(got))
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i], errs[i] = st.KeyEnsure(ctx, "redaction", fmt.Sprint("value-", i), base) })
		}
		wg.Wait()
		for i := range got {
			must(t, errs[i])
			equal(t, fmt.Sprint("key answered to caller ", i), got[i], got[0])
		}
		again, err := st.KeyEnsure(ctx, "redaction", "another", base)
		must(t, err)
		equal(t, "key ensured again", again, got[0])

		other, err := st.KeyEnsure(ctx, "other", "o", base)
		must(t, err)
		equal(t, "a key of another name", other, "o")

		tx, err := st.Begin(ctx)
		must(t, err)
		inTx, err := tx.KeyEnsure(ctx, "rolled-back", "r1", base)
		must(t, err)
		equal(t, "key in a transaction", inTx, "r1")
		must(t, tx.Rollback())
		after, err := st.KeyEnsure(ctx, "rolled-back", "r2", base)
		must(t, err)
		equal(t, "key after its transaction rolled back", after, "r2")
	})

	t.Run("TokenRevoke", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		must(t, st.TokenInsert(ctx, &logbook.Token{ID: "t1", Hash: "h1", Project: "p", Actor: "alice", CreatedAt: base}))
		must(t, st.TokenInsert(ctx, &logbook.Token{ID: "t2", Hash: "h2", Project: "p", Actor: "alice", CreatedAt: base}))
		must(t, st.TokenInsert(ctx, &logbook.Token{ID: "t3", Hash: "h3", Project: "p", Actor: "bob", CreatedAt: base}))
		must(t, st.TokenInsert(ctx, &logbook.Token{ID: "t4", Hash: "h4", Project: "q", Actor: "alice", CreatedAt: base}))
		must(t, st.TokenInsert(ctx, &logbook.Token{ID: "t5", Hash: "h5", Actor: "admin", Admin: true, CreatedAt: base}))

		at := base.Add(time.Hour)
		got, err := st.TokenRevoke(ctx, "h1", at)
		must(t, err)
		equal(t, "revoked token id", got.ID, "t1")
		if got.RevokedAt == nil || !got.RevokedAt.Equal(at) {
			t.Errorf("revoked_at = %v, want %v", got.RevokedAt, at)
		}
		if _, err := st.TokenGetByHash(ctx, "h1"); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("a revoked token is still found: err = %v", err)
		}
		if _, err := st.TokenRevoke(ctx, "h1", at); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("revoking twice: err = %v, want ErrNotFound", err)
		}
		if _, err := st.TokenRevoke(ctx, "nope", at); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("revoking an unknown token: err = %v, want ErrNotFound", err)
		}
		got, err = st.TokenRevoke(ctx, "t2", at) // by id
		must(t, err)
		equal(t, "revoked by id", got.Hash, "h2")

		must(t, st.TokenInsert(ctx, &logbook.Token{ID: "t6", Hash: "h6", Project: "p", Actor: "bob", CreatedAt: base}))
		n, err := st.TokenRevokeActor(ctx, "p", "bob", at)
		must(t, err)
		equal(t, "bob's tokens revoked", n, int64(2))
		for hash, live := range map[string]bool{"h3": false, "h6": false, "h4": true, "h5": true} {
			_, err := st.TokenGetByHash(ctx, hash)
			equal(t, "token "+hash+" still valid", err == nil, live)
		}
		n, err = st.TokenRevokeActor(ctx, "", "admin", at)
		must(t, err)
		equal(t, "admin tokens revoked by actor", n, int64(0))
	})

	t.Run("SessionPruneEnded", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		must(t, st.ProjectEnsure(ctx, "p", base))
		must(t, st.ProjectEnsure(ctx, "q", base))
		cutoff := base.Add(30 * 24 * time.Hour)
		old, recent := base.Add(time.Hour), cutoff.Add(time.Hour)
		// session makes a session that ended at closed (nil: still going)
		// with two entries.
		session := func(project, parent, root string, closed *time.Time) logbook.Session {
			t.Helper()
			s := logbook.Session{ID: logbook.NewID(base), Project: project, Actor: "alice", ParentID: parent, RootID: root,
				Status: logbook.StatusActive, StartedAt: base, LastSeenAt: base}
			if closed != nil {
				s.Status, s.ClosedAt, s.EndReason = logbook.StatusEnded, closed, "ended"
			}
			_, err := st.SessionInsert(ctx, &s)
			must(t, err)
			insertAll(t, st, []logbook.Entry{
				{SessionID: s.ID, Seq: 1, At: base, Kind: logbook.KindNote, Text: "one"},
				{SessionID: s.ID, Seq: 2, At: base, Kind: logbook.KindNote, Text: "two"},
			})
			return s
		}
		// Old and ended, with an old ended subagent and grandchild: pruned.
		gone := session("p", "", "", &old)
		goneChild := session("p", gone.ID, gone.ID, &old)
		goneGrandchild := session("p", goneChild.ID, gone.ID, &old)
		alsoGone := session("q", "", "", &old)
		// Kept: ended after the cutoff; still going; old but with a subagent
		// still going; old but with a subagent that ended after the cutoff.
		kept := []logbook.Session{session("p", "", "", &recent), session("p", "", "", nil)}
		busy := session("p", "", "", &old)
		kept = append(kept, busy, session("p", busy.ID, busy.ID, nil))
		late := session("q", "", "", &old)
		kept = append(kept, late, session("q", late.ID, late.ID, &recent))

		deleted, err := st.SessionPruneEnded(ctx, cutoff, 1)
		must(t, err)
		equal(t, "sessions deleted by a batch of one tree", deleted["sessions"], int64(3))
		equal(t, "entries deleted by it", deleted["entries"], int64(6))
		for _, s := range []logbook.Session{gone, goneChild, goneGrandchild} {
			if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID}); !errors.Is(err, logbook.ErrNotFound) {
				t.Errorf("session %s of the oldest tree was not pruned: %v", s.ID, err)
			}
		}
		deleted, err = st.SessionPruneEnded(ctx, cutoff, 10)
		must(t, err)
		equal(t, "sessions deleted by the next batch", deleted["sessions"], int64(1))
		if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: alsoGone.ID}); !errors.Is(err, logbook.ErrNotFound) {
			t.Errorf("the old session of another project was not pruned: %v", err)
		}
		deleted, err = st.SessionPruneEnded(ctx, cutoff, 10)
		must(t, err)
		equal(t, "sessions deleted when none is left", deleted["sessions"], int64(0))
		for _, s := range kept {
			if _, err := st.SessionGet(ctx, store.SessionGetParams{ID: s.ID}); err != nil {
				t.Errorf("session %s (closed %v) should be kept: %v", s.ID, s.ClosedAt, err)
			}
			entries, err := st.EntryList(ctx, store.EntryListParams{SessionID: s.ID, Limit: 10})
			must(t, err)
			equal(t, "entries of a kept session", len(entries), 2)
		}
	})

	t.Run("Backup", func(t *testing.T) {
		t.Parallel()
		st := newStore(t)
		newSession(t, st, sessionOpts{})
		path := filepath.Join(t.TempDir(), "backup.db")
		err := st.Backup(ctx, path)
		if !st.CanBackup() {
			if err == nil || err.Error() == "" {
				t.Fatalf("Backup where the store cannot back up: err = %v, want one that says which tool can", err)
			}
			return
		}
		must(t, err)
		if info, err := os.Stat(path); err != nil || info.Size() == 0 {
			t.Fatalf("the backup file: %v (size %v)", err, info)
		}
		tx, err := st.Begin(ctx)
		must(t, err)
		defer tx.Rollback()
		if err := tx.Backup(ctx, filepath.Join(t.TempDir(), "in-tx.db")); err == nil {
			t.Error("a backup inside a transaction succeeded")
		}
	})
}
