package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// DefaultPruneBatch is how many session trees Prune deletes per
// transaction: small enough that writers waiting on the database (SQLite
// has one writer at a time) wait milliseconds, not seconds.
const DefaultPruneBatch = 100

// RevokeToken revokes a token: the token's value, or its id. It stops
// working at once here, and on other servers within their
// Options.AuthCacheTTL. Only the admin may. It returns the revoked token's
// record (its hash, never its value).
func (s *Service) RevokeToken(ctx context.Context, c Caller, token string) (logbook.Token, error) {
	if !c.Admin {
		return logbook.Token{}, fmt.Errorf("only the admin token revokes tokens: %w", logbook.ErrForbidden)
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return logbook.Token{}, logbook.Invalid("token", "give the token to revoke (its value), or its id")
	}
	now := s.now()
	t, err := s.store.TokenRevoke(ctx, hashToken(token), now)
	if errors.Is(err, logbook.ErrNotFound) {
		t, err = s.store.TokenRevoke(ctx, token, now) // an id, or the hash itself
	}
	if errors.Is(err, logbook.ErrNotFound) {
		return logbook.Token{}, fmt.Errorf("no token that is not revoked matches: %w", logbook.ErrNotFound)
	}
	s.auth.forget()
	return t, err
}

// RevokeActorTokens revokes every token of an actor in a project (not the
// admin's), for when the token's value is lost. Only the admin may.
func (s *Service) RevokeActorTokens(ctx context.Context, c Caller, project, actor string) (int64, error) {
	if !c.Admin {
		return 0, fmt.Errorf("only the admin token revokes tokens: %w", logbook.ErrForbidden)
	}
	project, err := logbook.Name("project", project, logbook.MaxID)
	if err != nil {
		return 0, err
	}
	if actor, err = logbook.Name("actor", actor, logbook.MaxID); err != nil {
		return 0, err
	}
	if project == "" || actor == "" {
		return 0, logbook.Invalid("actor", "name the project and the actor whose tokens to revoke")
	}
	n, err := s.store.TokenRevokeActor(ctx, project, actor, s.now())
	s.auth.forget()
	return n, err
}

// Backup writes a consistent copy of the database to path while the
// server keeps running. path must not exist; the copy is written beside it
// and renamed into place, so a failed backup leaves no partial file under
// that name. Only the admin may. On PostgreSQL it returns an error that
// says how to use pg_dump instead.
func (s *Service) Backup(ctx context.Context, c Caller, path string) error {
	if !c.Admin {
		return fmt.Errorf("only the admin backs up the database: %w", logbook.ErrForbidden)
	}
	if path == "" {
		return logbook.Invalid("path", "name the file to write the backup to")
	}
	if _, err := os.Stat(path); err == nil {
		return logbook.Invalid("path", "%s exists already; choose a new file (a backup never overwrites one)", path)
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".partial")
	_ = os.Remove(tmp) // left over by an interrupted backup
	if err := s.store.Backup(ctx, tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("error moving the backup into place: %w", err)
	}
	return nil
}

// PruneResult says what Prune deleted.
type PruneResult struct {
	// Sessions counts the sessions deleted, subagents included.
	Sessions int64 `json:"sessions"`
	// Entries counts their entries.
	Entries int64 `json:"entries"`
	// Rows counts the rows deleted per table.
	Rows map[string]int64 `json:"rows"`
	// Batches is how many transactions it took.
	Batches int `json:"batches"`
}

// Prune deletes the sessions that ended before before, with their
// subagents and everything of theirs, batch trees per transaction (default
// DefaultPruneBatch), so writers are never held up for long. Sessions
// still going, or with a subagent still going, are kept. Only the admin
// may. When ctx ends between batches it returns what it did so far with
// ctx's error.
func (s *Service) Prune(ctx context.Context, c Caller, before time.Time, batch int) (PruneResult, error) {
	res := PruneResult{Rows: map[string]int64{}}
	if !c.Admin {
		return res, fmt.Errorf("only the admin prunes sessions: %w", logbook.ErrForbidden)
	}
	if batch <= 0 {
		batch = DefaultPruneBatch
	}
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		var deleted map[string]int64
		err := s.inTx(ctx, func(tx *work) error {
			var err error
			deleted, err = tx.SessionPruneEnded(ctx, before, batch)
			return err
		})
		if err != nil {
			return res, err
		}
		if deleted["sessions"] == 0 {
			return res, nil
		}
		res.Batches++
		for table, n := range deleted {
			res.Rows[table] += n
		}
		res.Sessions, res.Entries = res.Rows["sessions"], res.Rows["entries"]
	}
}
