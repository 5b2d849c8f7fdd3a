package service

import (
	"context"
	"strings"

	"github.com/logbookhq/logbook/internal/logbook"
)

// SessionsByCommit lists the sessions of a project behind a git commit:
// those whose head commit is sha, or one of whose entries carries it
// (entries record the commit they saw or made). sha may be abbreviated, as
// git prints it (7 hex digits or more); a stored short sha also matches
// the full one. Newest started first, at most logbook.MaxPageSize,
// subagents included.
func (s *Service) SessionsByCommit(ctx context.Context, c Caller, project, sha string) ([]logbook.Session, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return nil, err
	}
	sha = strings.ToLower(strings.TrimSpace(sha))
	if len(sha) < 7 || len(sha) > logbook.MaxCommit || strings.Trim(sha, "0123456789abcdef") != "" {
		return nil, logbook.Invalid("sha", "%q is not a commit; give 7 to %d hex digits, as git log or git blame print them", sha, logbook.MaxCommit)
	}
	sessions, err := s.store.SessionListByCommit(ctx, project, sha, logbook.MaxPageSize)
	if err != nil {
		return nil, err
	}
	now := s.now()
	for i := range sessions {
		sessions[i] = s.withState(sessions[i], now)
		sessions[i].DurationSeconds = int64(sessions[i].DurationAt(now).Seconds())
	}
	return sessions, nil
}
