package sqlstore

import (
	"context"

	"github.com/logbookhq/logbook/internal/logbook"
)

// commitMatch is the condition on a commit column for the sha in $2 (with
// prefixEnd($2) in $3): the column equals sha or starts with it (an index
// range), or the column, 7 characters or more (a short sha git printed),
// is a prefix of sha.
func commitMatch(column string) string {
	return `(` + column + ` <> '' AND ((` + column + ` >= $2 AND ` + column + ` < $3)
		OR (LENGTH(` + column + `) >= 7 AND ` + column + ` = SUBSTR($2, 1, LENGTH(` + column + `)))))`
}

func (e executor) SessionListByCommit(ctx context.Context, project, sha string, limit int) ([]logbook.Session, error) {
	rows, err := e.query(ctx, `SELECT `+prefixed("s.", sessionColumns)+` FROM sessions s
		WHERE s.project = $1 AND (`+commitMatch("s.head_commit")+`
			OR EXISTS (SELECT 1 FROM entries e WHERE e.session_id = s.id AND `+commitMatch("e.commit_sha")+`))
		ORDER BY s.started_at DESC, s.id DESC LIMIT $4`,
		project, sha, prefixEnd(sha), limit)
	if err != nil {
		return nil, e.interpretError(err, "listing sessions by commit")
	}
	return e.collectSessions(rows, "listing sessions by commit")
}
