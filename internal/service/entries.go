package service

import (
	"context"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// AppendResult says what a batch of entries did.
type AppendResult struct {
	Recorded   int   `json:"recorded"`
	Duplicates int   `json:"duplicates"`
	LastSeq    int64 `json:"last_seq"`
}

// AppendEntries records a batch of at most 500 entries in one transaction:
// all of it or none. Entries are numbered after the session's last one,
// with no gap; an entry whose key the session already has (or that repeats
// a key earlier in the batch) is skipped and counted as a duplicate. It is
// a heartbeat of the session.
func (s *Service) AppendEntries(ctx context.Context, c Caller, id string, entries []logbook.Entry) (AppendResult, error) {
	if err := normalizeEntries(entries); err != nil {
		return AppendResult{}, err
	}
	var result AppendResult
	_, err := s.writeHeartbeat(ctx, c, id, func(tx store.Tx, sess *logbook.Session) error {
		var err error
		result, err = appendLocked(ctx, tx, sess, entries, s.now())
		return err
	})
	return result, err
}

// Compact supersedes every active entry of the session and appends the
// replacement (usually a summary) in one transaction. Superseded entries
// stay readable with GetParams.All.
func (s *Service) Compact(ctx context.Context, c Caller, id string, entries []logbook.Entry) (AppendResult, error) {
	if err := normalizeEntries(entries); err != nil {
		return AppendResult{}, err
	}
	var result AppendResult
	_, err := s.writeHeartbeat(ctx, c, id, func(tx store.Tx, sess *logbook.Session) error {
		now := s.now()
		if _, err := tx.EntrySupersede(ctx, id, now); err != nil {
			return err
		}
		var err error
		result, err = appendLocked(ctx, tx, sess, entries, now)
		return err
	})
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
	}
	return nil
}

// appendLocked numbers and stores entries of a session whose row the
// transaction holds, and updates the session's counters and the texts its
// title and blocker are derived from. The caller writes the session row.
func appendLocked(ctx context.Context, tx store.Tx, sess *logbook.Session, entries []logbook.Entry, now time.Time) (AppendResult, error) {
	result := AppendResult{LastSeq: sess.EntryCount}
	var keys []string
	for _, e := range entries {
		if e.Key != "" {
			keys = append(keys, e.Key)
		}
	}
	seen, err := tx.EntryExistingKeys(ctx, sess.ID, keys)
	if err != nil {
		return result, err
	}
	fresh := make([]logbook.Entry, 0, len(entries))
	for _, e := range entries {
		if e.Key != "" && seen[e.Key] {
			result.Duplicates++
			continue
		}
		if e.Key != "" {
			seen[e.Key] = true
		}
		sess.EntryCount++
		e.SessionID, e.Seq = sess.ID, sess.EntryCount
		if e.At.IsZero() {
			e.At = now
		}
		e.At = e.At.UTC().Truncate(time.Microsecond)
		count(sess, &e)
		fresh = append(fresh, e)
	}
	if err := tx.EntryInsert(ctx, fresh); err != nil {
		return result, err
	}
	result.Recorded, result.LastSeq = len(fresh), sess.EntryCount
	sess.DeriveTitle()
	return result, nil
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
		sess.InputTokens += e.Usage.InputTokens
		sess.OutputTokens += e.Usage.OutputTokens
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
