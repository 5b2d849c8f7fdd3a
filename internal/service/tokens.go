package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// adminActor is the actor the admin token stands for. No token of a
// project is made for it.
const adminActor = "admin"

// tokenPrefix starts every token logbook makes, so a leaked one is easy to
// recognise (and to redact).
const tokenPrefix = "lbk_"

// newTokenValue returns a new random token: 32 random bytes.
func newTokenValue() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// hashToken is how tokens are stored and looked up: their SHA-256. A
// lookup by hash through a unique index reveals nothing by its timing
// about how much of a guess was right.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// BearerToken returns the token of an Authorization header's value, as
// RFC 6750 sends it: the scheme "Bearer" in any case (RFC 9110 makes
// schemes case-insensitive), one or more spaces, the token. No header is
// ErrUnauthorized asking for one; a token without the scheme, or another
// scheme (Basic, …), is ErrUnauthorized saying what to send. The error
// never repeats the header, which may hold a secret.
func BearerToken(header string) (string, error) {
	header = strings.TrimSpace(header)
	if header == "" {
		return "", fmt.Errorf("no token: send Authorization: Bearer TOKEN: %w", logbook.ErrUnauthorized)
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", fmt.Errorf("the Authorization header must be the scheme Bearer, a space and the token (RFC 6750): send Authorization: Bearer TOKEN: %w", logbook.ErrUnauthorized)
	}
	return strings.TrimLeft(token, " "), nil
}

// Authenticate returns the caller a bearer token stands for, or
// ErrUnauthorized.
func (s *Service) Authenticate(ctx context.Context, token string) (Caller, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return Caller{}, fmt.Errorf("no token: send Authorization: Bearer TOKEN: %w", logbook.ErrUnauthorized)
	}
	hash := hashToken(token)
	if c, ok := s.auth.get(hash, s.nowFunc()); ok {
		return c, nil
	}
	t, err := s.store.TokenGetByHash(ctx, hash)
	if errors.Is(err, logbook.ErrNotFound) {
		return Caller{}, fmt.Errorf("this token is not known or was revoked: %w", logbook.ErrUnauthorized)
	}
	if err != nil {
		return Caller{}, err
	}
	// The lookup went by hash through an index; the final comparison is in
	// constant time all the same.
	if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 {
		return Caller{}, fmt.Errorf("this token is not known or was revoked: %w", logbook.ErrUnauthorized)
	}
	c := Caller{Actor: t.Actor, Project: t.Project, Admin: t.Admin, TokenID: t.ID, hash: hash}
	s.auth.put(hash, c, s.nowFunc())
	return c, nil
}

// Recheck looks the caller's token up again, past the auth cache, and
// answers ErrUnauthorized once it has been revoked. A request that lasts
// (an event stream) calls it every RecheckEvery, so a revoked token's
// stream ends within the auth cache's lifetime as its requests do. A
// caller not made from a token (the CLI's admin on the database) always
// passes.
func (s *Service) Recheck(ctx context.Context, c Caller) error {
	if c.hash == "" {
		return nil
	}
	t, err := s.store.TokenGetByHash(ctx, c.hash)
	if errors.Is(err, logbook.ErrNotFound) {
		// Revoked, perhaps by another process: what this process
		// remembers of the token goes too, so its next request fails at
		// once, not when the cache entry runs out.
		s.auth.drop(c.hash)
		return fmt.Errorf("this token was revoked: %w", logbook.ErrUnauthorized)
	}
	if err != nil {
		return err
	}
	s.auth.put(c.hash, Caller{Actor: t.Actor, Project: t.Project, Admin: t.Admin, TokenID: t.ID, hash: c.hash}, s.nowFunc())
	return nil
}

// RecheckEvery is how often a lasting request calls Recheck: the auth
// cache's lifetime (Options.AuthCacheTTL), or every second when there is
// no cache.
func (s *Service) RecheckEvery() time.Duration {
	if s.auth.ttl > 0 {
		return s.auth.ttl
	}
	return time.Second
}

// authCache remembers, for a short while, what token hashes stand for (see
// Options.AuthCacheTTL). It is bounded: when full it starts over.
type authCache struct {
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]authEntry
}

type authEntry struct {
	caller  Caller
	expires time.Time
}

const maxAuthEntries = 10000

func (a *authCache) get(hash string, now time.Time) (Caller, bool) {
	if a.ttl <= 0 {
		return Caller{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[hash]
	if !ok || now.After(e.expires) {
		return Caller{}, false
	}
	return e.caller, true
}

func (a *authCache) put(hash string, c Caller, now time.Time) {
	if a.ttl <= 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.entries) >= maxAuthEntries {
		clear(a.entries)
	}
	a.entries[hash] = authEntry{caller: c, expires: now.Add(a.ttl)}
}

// drop forgets one token.
func (a *authCache) drop(hash string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.entries, hash)
}

// forget drops every remembered token, after a revocation in this process.
func (a *authCache) forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.entries)
}

// EnsureAdminToken makes sure an admin token exists. With fixed set (from
// LOGBOOK_ADMIN_TOKEN) that token is stored if it is not yet; a value that
// was revoked, or that is a project's token, is an error saying to choose
// another, never a server without an admin. Otherwise, when no admin
// token exists (the last one was revoked, say), one is generated. It
// returns the new token's value when it generated one (to be shown once),
// else "".
func (s *Service) EnsureAdminToken(ctx context.Context, fixed string) (string, error) {
	now := s.now()
	if fixed = strings.TrimSpace(fixed); fixed != "" {
		stored := func() (bool, error) {
			t, err := s.store.TokenGetByHash(ctx, hashToken(fixed))
			switch {
			case err == nil && !t.Admin:
				return false, fmt.Errorf("LOGBOOK_ADMIN_TOKEN is the token of actor %q in project %q, not the admin's; choose another value", t.Actor, t.Project)
			case errors.Is(err, logbook.ErrNotFound):
				return false, nil
			}
			return err == nil, err
		}
		if ok, err := stored(); ok || err != nil {
			return "", err
		}
		err := s.store.TokenInsert(ctx, &logbook.Token{ID: logbook.NewID(now), Hash: hashToken(fixed), Actor: adminActor, Admin: true, CreatedAt: now})
		if errors.Is(err, logbook.ErrConflict) { // another replica stored it first, or it was revoked
			if ok, err := stored(); ok || err != nil {
				return "", err
			}
			return "", errors.New("LOGBOOK_ADMIN_TOKEN names a token that was revoked; choose a new value (it becomes the admin token at the next start)")
		}
		return "", err
	}
	exists, err := s.store.TokenAdminExists(ctx)
	if err != nil || exists {
		return "", err
	}
	value := newTokenValue()
	if err := s.store.TokenInsert(ctx, &logbook.Token{ID: logbook.NewID(now), Hash: hashToken(value), Actor: adminActor, Admin: true, CreatedAt: now}); err != nil {
		return "", err
	}
	return value, nil
}

// CreateToken makes a bearer token for actor in project, making the
// project the first time it is named, and returns its value. Only the
// admin may.
func (s *Service) CreateToken(ctx context.Context, c Caller, project, actor string) (string, error) {
	value, _, err := s.MakeToken(ctx, c, project, actor)
	return value, err
}

// MakeToken is CreateToken that also returns the token's record, whose
// project and actor are the names as stored (see logbook.Name): what to
// show the caller, rather than what it sent.
func (s *Service) MakeToken(ctx context.Context, c Caller, project, actor string) (string, logbook.Token, error) {
	if !c.Admin {
		return "", logbook.Token{}, fmt.Errorf("only the admin token makes tokens: %w", logbook.ErrForbidden)
	}
	project, err := logbook.Name("project", project, logbook.MaxID)
	if err != nil {
		return "", logbook.Token{}, err
	}
	if project == "" {
		return "", logbook.Token{}, logbook.Invalid("project", "name the project the token is for")
	}
	actor, err = logbook.Name("actor", actor, logbook.MaxID)
	if err != nil {
		return "", logbook.Token{}, err
	}
	if actor == "" {
		return "", logbook.Token{}, logbook.Invalid("actor", "name the actor (a person or service account) the token is for")
	}
	if actor == adminActor {
		// Owning a session is having its actor's name: a project's "admin"
		// would own the admin token's sessions, and the admin its.
		return "", logbook.Token{}, logbook.Invalid("actor", "%q is the admin token's actor; name the person or service account the token is for", adminActor)
	}
	value := newTokenValue()
	now := s.now()
	t := logbook.Token{ID: logbook.NewID(now), Hash: hashToken(value), Project: project, Actor: actor, CreatedAt: now}
	err = s.inTx(ctx, func(tx *work) error {
		if err := tx.ProjectEnsure(ctx, project, now); err != nil {
			return err
		}
		return tx.TokenInsert(ctx, &t)
	})
	if err != nil {
		return "", logbook.Token{}, err
	}
	return value, t, nil
}
