package hook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/logbookhq/logbook/internal/client"
	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// maxBatchBytes bounds the JSON of one batch of entries, well under the
// server's 8 MiB request limit.
const maxBatchBytes = 2 << 20

// sender delivers records to the server. It remembers the logbook id of
// each session it started during one run, so a run of records for one
// session costs one start and one append.
type sender struct {
	l     ledger.Ledger
	spool *Spool
	ids   map[string]string // SessionSpec JSON → logbook session id
	// fromCache holds the identities of the sessions whose id came from
	// the spool's cache rather than a start in this run.
	fromCache map[string]bool
}

func newSender(l ledger.Ledger, spool *Spool) *sender {
	return &sender{l: l, spool: spool, ids: map[string]string{}, fromCache: map[string]bool{}}
}

// deliver is a DeliverFunc. Consecutive records of one session go as one
// batch; when a batch is refused for good, its records are sent one by one
// so that only the faulty one is set aside.
func (s *sender) deliver(ctx context.Context, recs []Record) (int, []Rejected, error) {
	var rejected []Rejected
	for i := 0; i < len(recs); {
		j := batchEnd(recs, i)
		err := s.send(ctx, recs[i:j])
		switch {
		case err == nil:
		case !permanent(err):
			return i, rejected, err
		case j-i == 1:
			rejected = append(rejected, rejection(recs[i], err))
		default:
			for k := i; k < j; k++ {
				if err := s.send(ctx, recs[k:k+1]); err != nil {
					if !permanent(err) {
						return k, rejected, err
					}
					rejected = append(rejected, rejection(recs[k], err))
				}
			}
		}
		i = j
	}
	return len(recs), rejected, nil
}

// batchEnd returns the end of the batch that starts at recs[i]: the
// records after it of the same session, up to one that ends the session,
// within the server's batch limits.
func batchEnd(recs []Record, i int) int {
	first, _ := json.Marshal(recs[i].Session)
	entries, size := 0, 0
	j := i
	for ; j < len(recs); j++ {
		spec, _ := json.Marshal(recs[j].Session)
		raw, _ := json.Marshal(recs[j].Entries)
		if j > i && (string(spec) != string(first) ||
			entries+len(recs[j].Entries) > logbook.MaxBatch || size+len(raw) > maxBatchBytes) {
			break
		}
		entries += len(recs[j].Entries)
		size += len(raw)
		if recs[j].End != nil {
			return j + 1
		}
	}
	return j
}

// send delivers records of one session: start it, append their entries
// and touches in one batch, and end it when the last record says so.
func (s *sender) send(ctx context.Context, recs []Record) error {
	spec := recs[0].Session
	err := s.sendTo(ctx, spec, recs)
	if err != nil && s.cached(spec) && staleID(err) {
		// An id came from an earlier run (the session's, or its parent's),
		// and the server no longer takes writes to it (a new database, a
		// session ended elsewhere): start the sessions again, as a run
		// without the cache would have.
		for sp := &spec; sp != nil; sp = sp.Parent {
			s.forget(*sp)
		}
		err = s.sendTo(ctx, spec, recs)
	}
	if err == nil && recs[len(recs)-1].End != nil {
		s.forget(spec) // the next event of this session (a resume) starts it again
	}
	return err
}

// sendTo delivers records of one session to the session id resolve gives.
func (s *sender) sendTo(ctx context.Context, spec SessionSpec, recs []Record) error {
	id, err := s.resolve(ctx, spec)
	if err != nil {
		return err
	}
	var batch ledger.Batch
	for _, r := range recs {
		batch.Entries = append(batch.Entries, r.Entries...)
		for _, t := range r.Touched {
			batch.Touched = append(batch.Touched, logbook.Touch{Kind: t.Kind, Value: t.Value})
		}
	}
	if len(batch.Entries) > 0 {
		if _, err := s.l.AppendEntries(ctx, id, batch); err != nil {
			return err
		}
	}
	if end := recs[len(recs)-1].End; end != nil {
		if _, err := s.l.EndSession(ctx, id, *end); err != nil {
			return err
		}
	}
	return nil
}

// resolve starts the session spec names (its parent first) and returns
// its logbook id. Starting is idempotent on the server and refreshes the
// session's fields, so it is needed only when they changed: a session
// started with the same spec, in this run or an earlier one (the spool's
// cache), is not started again. Each hook call is a process of its own,
// so without the cache every delivery would cost a start and an append.
func (s *sender) resolve(ctx context.Context, spec SessionSpec) (string, error) {
	raw, _ := json.Marshal(spec)
	if id, ok := s.ids[string(raw)]; ok {
		return id, nil
	}
	if id := s.spool.startedID(spec, raw); id != "" {
		s.ids[string(raw)] = id
		s.fromCache[spec.identity()] = true
		return id, nil
	}
	set := func(v string) *string {
		if v == "" {
			return nil // not given: the session keeps what it has
		}
		return &v
	}
	req := ledger.StartParams{Project: spec.Project, Harness: spec.Harness, HarnessSessionID: spec.HarnessSessionID,
		Fields: logbook.SessionFields{Model: set(spec.Model), AgentType: set(spec.AgentType), Branch: set(spec.Branch), HeadCommit: set(spec.HeadCommit)}}
	if spec.Parent != nil {
		parentID, err := s.resolve(ctx, *spec.Parent)
		if err != nil {
			return "", err
		}
		req.ParentID = parentID
	}
	sess, _, err := s.l.StartSession(ctx, req)
	if err != nil {
		return "", err
	}
	if sess.ID == "" {
		return "", errors.New("the server started a session but sent no id; is LOGBOOK_URL a logbook server?")
	}
	s.ids[string(raw)] = sess.ID
	delete(s.fromCache, spec.identity())
	if s.spool != nil {
		s.spool.rememberID(spec, sess.ID)
		s.spool.rememberStarted(spec, raw, sess.ID)
	}
	return sess.ID, nil
}

// staleID reports whether the server refused a write for naming a
// session it no longer takes writes to: not found, ended, or a subagent's
// parent it does not know.
func staleID(err error) bool {
	var p *client.Problem
	return errors.Is(err, logbook.ErrNotFound) || errors.Is(err, logbook.ErrEnded) ||
		errors.As(err, &p) && p.Field == "parent_id"
}

// cached reports whether the id of spec's session, or of a parent of it,
// came from the spool's cache in this run.
func (s *sender) cached(spec SessionSpec) bool {
	for sp := &spec; sp != nil; sp = sp.Parent {
		if s.fromCache[sp.identity()] {
			return true
		}
	}
	return false
}

// forget drops what this run and the spool know of spec's session start,
// so that the next delivery starts it again.
func (s *sender) forget(spec SessionSpec) {
	for raw := range s.ids {
		var known SessionSpec
		if json.Unmarshal([]byte(raw), &known) == nil && known.identity() == spec.identity() {
			delete(s.ids, raw)
		}
	}
	delete(s.fromCache, spec.identity())
	s.spool.forgetStarted(spec)
}

// permanent reports whether the server refused a request for good: a 4xx
// answer other than 408 and 429 (try again later) and 401 (the token is
// missing or wrong: the record is fine, the configuration is not, so it
// waits in the spool until LOGBOOK_TOKEN is fixed).
func permanent(err error) bool {
	var p *client.Problem
	if !errors.As(err, &p) {
		return false
	}
	switch p.Status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusUnauthorized:
		return false
	}
	return p.Status >= 400 && p.Status < 500
}

func rejection(r Record, err error) Rejected {
	out := Rejected{Record: r, Error: err.Error(), At: time.Now().UTC()}
	var p *client.Problem
	if errors.As(err, &p) {
		out.Status = p.Status
	}
	return out
}
