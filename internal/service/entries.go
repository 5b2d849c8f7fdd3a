package service

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// AppendEntries records a batch of at most 500 entries in one transaction:
// all of it or none. Entries are numbered after the session's last one,
// with no gap; an entry whose key the session already has (or that repeats
// a key earlier in the batch) is skipped and counted as a duplicate.
// Touched files are recorded (paths normalized) and prompt entries that
// name "#N" link the session to issue N. It is a heartbeat of the session.
func (s *Service) AppendEntries(ctx context.Context, c Caller, id string, b Batch) (AppendResult, error) {
	if err := normalizeEntries(b.Entries); err != nil {
		return AppendResult{}, err
	}
	touched, err := normalizeTouches(b.Touched)
	if err != nil {
		return AppendResult{}, err
	}
	var result AppendResult
	var cost int64
	// The batch's keys and touches go with the session's lock: where a
	// group's entries and touches are written together at its end, the
	// store learns then which of them are stored already (see
	// store.Tx.LockSessions).
	lock := store.SessionKeys{ID: id, Keys: []string{}}
	for _, e := range b.Entries {
		if e.Key != "" {
			lock.Keys = append(lock.Keys, e.Key)
		}
	}
	if len(touched) > 0 {
		lock.Touches = touched
	}
	_, err = s.writeSession(ctx, c, lock, s.inSessionTx, func(tx *work, sess *logbook.Session, now time.Time) error {
		var err error
		before := sess.CostMicros
		if result, err = appendLocked(ctx, tx, sess, b.Entries, now); err != nil {
			return err
		}
		cost = sess.CostMicros - before
		if len(touched) > 0 {
			for i := range touched {
				// A batch recorded after the fact says when (an import).
				touched[i].FirstAt = pastOrNow(touched[i].FirstAt, time.Time{}, now)
			}
			if err := tx.TouchUpsert(ctx, sess.ID, sess.Project, touched); err != nil {
				return err
			}
		}
		var named []logbook.Link
		for _, e := range b.Entries {
			if e.Kind == logbook.KindPrompt {
				named = append(named, namedLinks(e.Text)...)
			}
		}
		if len(named) > 0 {
			return syncLinks(ctx, tx, sess, named...)
		}
		return nil
	})
	if err == nil {
		s.costed(cost)
	}
	return result, err
}

// costed tells Options.Costed what a committed batch's model calls cost.
func (s *Service) costed(micros int64) {
	if s.costedFunc != nil && micros > 0 {
		s.costedFunc(micros)
	}
}

// normalizeTouches checks and cleans what a batch says the session touched.
func normalizeTouches(touches []logbook.Touch) ([]logbook.Touch, error) {
	if len(touches) > logbook.MaxBatch {
		return nil, logbook.Invalid("touched", "a batch names at most %d touches", logbook.MaxBatch)
	}
	out := make([]logbook.Touch, 0, len(touches))
	for i, t := range touches {
		switch t.Kind {
		case "", logbook.TouchFile:
			t.Kind, t.Value = logbook.TouchFile, logbook.NormalizeSubject(t.Value)
		case logbook.TouchCommand:
			t.Value = logbook.Clip(t.Value, logbook.MaxLongText)
		default:
			return nil, logbook.Invalid(fmt.Sprintf("touched[%d].kind", i), "%q is not a touch kind; use file or command", t.Kind)
		}
		if t.Value == "" {
			return nil, logbook.Invalid(fmt.Sprintf("touched[%d].value", i), "say what was touched: a file path or a command")
		}
		out = append(out, t)
	}
	return out, nil
}

// Compact supersedes every active entry of the session and appends the
// replacement (usually a summary) in one transaction. Superseded entries
// stay readable with GetParams.All.
func (s *Service) Compact(ctx context.Context, c Caller, id string, entries []logbook.Entry) (AppendResult, error) {
	if err := normalizeEntries(entries); err != nil {
		return AppendResult{}, err
	}
	var result AppendResult
	var cost int64
	_, err := s.writeHeartbeat(ctx, c, id, func(tx *work, sess *logbook.Session, now time.Time) error {
		if _, err := tx.EntrySupersede(ctx, id, now); err != nil {
			return err
		}
		var err error
		before := sess.CostMicros
		result, err = appendLocked(ctx, tx, sess, entries, now)
		cost = sess.CostMicros - before
		return err
	})
	if err == nil {
		s.costed(cost)
	}
	return result, err
}

func normalizeEntries(entries []logbook.Entry) error {
	if len(entries) > logbook.MaxBatch {
		return logbook.Invalid("entries", "a batch holds at most %d entries, this one has %d; send it in parts", logbook.MaxBatch, len(entries))
	}
	for i := range entries {
		if err := entries[i].Normalize(fmt.Sprintf("entries[%d]", i)); err != nil {
			return err
		}
		// The owner writes these; only a note from outside has an author,
		// which logbook sets (AddNote), never the one who sends it.
		if entries[i].Author != nil {
			return logbook.Invalid(fmt.Sprintf("entries[%d].author", i), "logbook records who wrote an entry; leave author out")
		}
	}
	return nil
}

// appendLocked numbers and stores entries of a session whose row the
// transaction holds, updates the session's counters and the texts its
// title and blocker are derived from, and announces the new entries (see
// announce). The caller writes the session row. Model calls are costed
// first (priceEntries).
//
// Entries whose key the session already has (a harness sending a batch
// again) are skipped without a gap in the numbering. That is rare, so the
// batch is first inserted as it comes, the insert itself skipping stored
// keys; only when it skipped some, and they left gaps, is the batch taken
// back, its keys looked up and the new entries numbered again.
func appendLocked(ctx context.Context, tx *work, sess *logbook.Session, entries []logbook.Entry, now time.Time) (AppendResult, error) {
	result := AppendResult{LastSeq: sess.EntryCount}
	if err := priceEntries(ctx, tx, sess, entries); err != nil {
		return result, err
	}
	fresh := number(sess, entries, nil, now)
	inserted, err := tx.EntryInsert(ctx, fresh)
	if err != nil {
		return result, err
	}
	switch {
	case inserted == len(fresh): // no key was stored before: the usual case
	case len(fresh) == 1:
		fresh = nil // the one entry was stored already: no gap
	default:
		if fresh, err = appendAgain(ctx, tx, sess, entries, fresh, now); err != nil {
			return result, err
		}
	}
	result.Duplicates = len(entries) - len(fresh)
	for i := range fresh {
		count(sess, &fresh[i])
	}
	if err := raiseOnEntries(ctx, tx, sess, fresh, now); err != nil {
		return result, err
	}
	sess.EntryCount += int64(len(fresh))
	result.Recorded, result.LastSeq = len(fresh), sess.EntryCount
	sess.DeriveTitle()
	sess.Unannounced += int64(result.Recorded)
	if now.Sub(sess.AnnouncedAt) >= logbook.AppendedEvery {
		announce(tx, sess, now)
	}
	return result, nil
}

// appendAgain takes back a batch whose insert skipped entries with stored
// keys, leaving gaps in the numbering, and inserts its new entries
// numbered again after looking their keys up.
func appendAgain(ctx context.Context, tx *work, sess *logbook.Session, entries, tried []logbook.Entry, now time.Time) ([]logbook.Entry, error) {
	if err := tx.EntryDeleteAfter(ctx, sess.ID, sess.EntryCount); err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range tried {
		if e.Key != "" {
			keys = append(keys, e.Key)
		}
	}
	stored, err := tx.EntryExistingKeys(ctx, sess.ID, keys)
	if err != nil {
		return nil, err
	}
	fresh := number(sess, entries, stored, now)
	inserted, err := tx.EntryInsert(ctx, fresh)
	if err != nil {
		return nil, err
	}
	if inserted < len(fresh) {
		return nil, fmt.Errorf("session %s: %d of %d entries were already stored though their keys were looked up first; nothing was recorded",
			sess.ID, len(fresh)-inserted, len(fresh))
	}
	return fresh, nil
}

// number gives entries the session's next seqs, leaving out every entry
// whose key is in stored or repeats a key earlier in the batch, and stamps
// those without a time with now.
func number(sess *logbook.Session, entries []logbook.Entry, stored map[string]bool, now time.Time) []logbook.Entry {
	fresh := make([]logbook.Entry, 0, len(entries))
	seen := map[string]bool{}
	seq := sess.EntryCount
	for _, e := range entries {
		if e.Key != "" {
			if stored[e.Key] || seen[e.Key] {
				continue
			}
			seen[e.Key] = true
		}
		seq++
		e.SessionID, e.Seq = sess.ID, seq
		if e.At.IsZero() {
			e.At = now
		}
		e.At = e.At.UTC().Truncate(time.Microsecond)
		fresh = append(fresh, e)
	}
	return fresh
}

// announce emits session.appended for the entries a locked session has
// appended since its last one, if any: their count and the last seq. The
// caller writes the session row. Entries appended within
// logbook.AppendedEvery of the last announcement wait for the next append
// after it, for announcePending (run every AppendedEvery) or for the
// session's end, whichever comes first.
func announce(tx *work, sess *logbook.Session, now time.Time) {
	if sess.Unannounced == 0 {
		return
	}
	tx.emit(sess.Project, logbook.EventSessionAppended, sess.ID, now, map[string]any{
		"count": sess.Unannounced, "last_seq": sess.EntryCount, "root_id": sess.Root()})
	sess.Unannounced, sess.AnnouncedAt = 0, now
}

// announcePending announces the entries active sessions appended and
// have not announced yet (see announce). Run keeps calling it; as what it
// announces is read from the sessions' rows, nothing is lost to a crash:
// the next run announces it.
func (s *Service) announcePending(ctx context.Context) error {
	ids, err := s.store.SessionListUnannounced(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	now := s.now()
	announceOne := func(tx *work, id string) error {
		sess, err := tx.SessionGet(ctx, store.SessionGetParams{ID: id, ForUpdate: true})
		if isNotFound(err) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		was := sess
		announce(tx, &sess, now) // nothing when announced meanwhile
		return tx.SessionUpdate(ctx, &sess, &was)
	}
	if s.store.SingleWriter() {
		// One writer at a time and no row locks: one transaction.
		return s.inTx(ctx, func(tx *work) error {
			for _, id := range ids {
				if err := announceOne(tx, id); err != nil {
					return err
				}
			}
			return nil
		})
	}
	// Row locks: a session a transaction, so that none holds one session
	// while waiting for another (ending a tree locks the parent, then its
	// children). Each joins the next group of its session's committer, as
	// an append does (inSessionTx): the group locks its sessions in one
	// statement and writes their rows and events once, where a
	// transaction of its own cost five round trips a session.
	g, ctx := errgroup.WithContext(ctx)
	limit := 4 // a transaction each, on the pool's connections
	if s.sessionCommitters.Load() != nil {
		limit = sessionGroupMax // a group's worth at once
	}
	g.SetLimit(limit)
	for _, id := range ids {
		g.Go(func() error {
			return s.inSessionTx(ctx, store.SessionKeys{ID: id}, func(tx *work) error { return announceOne(tx, id) })
		})
	}
	return g.Wait()
}

// count adds one entry to the session's counters and remembered texts.
func count(sess *logbook.Session, e *logbook.Entry) {
	if e.IsMessage() {
		sess.MessageCount++
	}
	if e.Kind == logbook.KindToolCall {
		sess.ToolCallCount++
	}
	if e.Usage != nil {
		sess.InputTokens = logbook.AddTokens(sess.InputTokens, e.Usage.InputTokens)
		sess.OutputTokens = logbook.AddTokens(sess.OutputTokens, e.Usage.OutputTokens)
		sess.CostMicros = logbook.AddTokens(sess.CostMicros, e.Usage.CostMicros)
	}
	if e.Kind == logbook.KindPrompt && sess.Prompt == "" {
		sess.Prompt = logbook.Clip(e.Text, logbook.MaxLongText)
	}
	if e.IsAssistantText() {
		if sess.FirstAssistant == "" {
			sess.FirstAssistant = logbook.Clip(e.Text, logbook.MaxTitle)
		}
		sess.LastAssistant = logbook.Clip(e.Text, logbook.MaxLongText)
	}
}
