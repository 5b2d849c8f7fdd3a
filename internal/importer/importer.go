package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/transcript"
)

// Format is the kind of transcript an import reads.
type Format string

// Formats.
const (
	Claude Format = "claude" // Claude Code session files
	Codex  Format = "codex"  // Codex CLI rollout files
)

// EndReason is the end_reason of sessions an import ends.
const EndReason = "imported"

// FallbackProject is the project of a session whose transcript names no
// working directory, when projects come from the cwd.
const FallbackProject = "imported"

// DefaultLiveWindow is how recent a transcript's last line must be for its
// session to be left open (the server's default session timeout).
const DefaultLiveWindow = logbook.DefaultSessionTimeout

// maxBatchBytes bounds the estimated size of one batch, well under the
// server's 8 MiB request limit.
const maxBatchBytes = 3 << 20

// Options tune an import. Format is required.
type Options struct {
	Format Format
	// Project puts every session in this project.
	Project string
	// ProjectFromCwd, when Project is empty, names each session's project
	// after the git work tree above its cwd (else the cwd's last folder,
	// else FallbackProject). When false and Project is empty, sessions go
	// to the sink's default project: the token's.
	ProjectFromCwd bool
	// LiveWindow: a session whose last line is more recent than this is
	// left open rather than ended (default DefaultLiveWindow).
	LiveWindow time.Duration
	// Now is the current time (default time.Now).
	Now func() time.Time
	// Progress, when set, is called as files are read: at least once per
	// file and after every 64 KiB or so.
	Progress func(Progress)
	// Warn, when set, hears about files that could not be read; the import
	// goes on without them.
	Warn func(error)
}

// Counts is what an import did.
type Counts struct {
	Files  int   // files read
	Failed int   // files that could not be read (see Options.Warn)
	Bytes  int64 // bytes read
	// Sessions and Subagents count the top-level and subagent sessions the
	// files hold; New how many of them this import created.
	Sessions, Subagents, New int
	// Ended is how many sessions this import ended; Open how many it left
	// open because their last line is recent.
	Ended, Open int
	Entries     int // entries the files hold
	Recorded    int // entries stored now
	Duplicates  int // entries already stored by an earlier import
	Refused     int // new entries of subagents that had ended, not stored
	Skipped     int // malformed lines: not JSON, not an object, unknown shapes
	Ignored     int // well-formed lines with nothing to import
}

// Progress is where an import stands.
type Progress struct {
	Counts
	FilesTotal int
	BytesTotal int64
	// BytesDone counts the bytes read so far, in the current file too.
	BytesDone int64
	// File is the file being read.
	File string
}

type parseFunc func(r io.Reader, fileName string, emit func(transcript.Record) error) (transcript.Stats, error)

// Importer imports transcripts into a ledger: the service in process, or
// a server through the typed client. It is not safe for concurrent use.
type Importer struct {
	sink  ledger.Ledger
	opts  Options
	parse parseFunc

	// known maps harness session ids started by this import to their
	// session, so subagents in later files find their parents.
	known map[string]known

	counts     Counts
	filesTotal int
	bytesTotal int64
	bytesDone  int64
	file       string
}

type known struct{ id, project string }

// New returns an Importer writing to sink. An import into a database
// directly acts as ImportActor (see ImportCaller).
func New(sink ledger.Ledger, opts Options) (*Importer, error) {
	im := &Importer{sink: sink, opts: opts, known: make(map[string]known)}
	switch opts.Format {
	case Claude:
		im.parse = transcript.ParseClaude
	case Codex:
		im.parse = transcript.ParseCodex
	default:
		return nil, fmt.Errorf("unknown transcript format %q: use claude or codex", opts.Format)
	}
	if im.opts.LiveWindow <= 0 {
		im.opts.LiveWindow = DefaultLiveWindow
	}
	if im.opts.Now == nil {
		im.opts.Now = time.Now
	}
	if im.opts.Warn == nil {
		im.opts.Warn = func(error) {}
	}
	return im, nil
}

// Run imports every transcript file under paths (see Find) and returns
// what it did. It stops at the first error of the sink (a server that
// cannot be reached, a token that may not write) or when ctx ends; files
// that cannot be read are reported through Options.Warn and skipped.
func (im *Importer) Run(ctx context.Context, paths []string) (Counts, error) {
	files, err := Find(paths, im.opts.Warn)
	if err != nil {
		return im.counts, err
	}
	im.filesTotal = len(files)
	for _, f := range files {
		im.bytesTotal += f.Size
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return im.counts, err
		}
		err := im.importFile(ctx, f)
		var unreadable *readError
		switch {
		case errors.As(err, &unreadable):
			im.counts.Failed++
			im.opts.Warn(err)
		case err != nil:
			return im.counts, err
		}
	}
	im.report()
	return im.counts, nil
}

// readError is a file that could not be read; the import goes on.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// importFile imports one file.
func (im *Importer) importFile(ctx context.Context, f File) error {
	fh, err := os.Open(f.Path)
	if err != nil {
		im.bytesDone += f.Size
		return &readError{fmt.Errorf("cannot open %s: %w", f.Path, err)}
	}
	defer fh.Close()
	im.file = f.Path
	start := im.bytesDone
	r := &fileRun{im: im, ctx: ctx, sessions: make(map[string]*session)}
	stats, err := im.parse(&countingReader{r: fh, done: func(n int64) {
		im.bytesDone = start + n
		im.report()
	}}, filepath.Base(f.Path), r.emit)
	im.bytesDone = start + f.Size
	im.counts.Files++
	im.counts.Bytes += f.Size
	im.counts.Skipped += stats.Skipped
	im.counts.Ignored += stats.Ignored
	if r.sinkErr != nil {
		return fmt.Errorf("importing %s: %w", f.Path, r.sinkErr)
	}
	if err != nil {
		// What was read so far is worth keeping; the file is reported.
		if ferr := r.flushAll(); ferr != nil {
			return fmt.Errorf("importing %s: %w", f.Path, ferr)
		}
		return &readError{fmt.Errorf("stopped reading %s: %w", f.Path, err)}
	}
	if err := r.finish(); err != nil {
		return fmt.Errorf("importing %s: %w", f.Path, err)
	}
	im.report()
	return nil
}

func (im *Importer) report() {
	if im.opts.Progress != nil {
		im.opts.Progress(Progress{Counts: im.counts, FilesTotal: im.filesTotal, BytesTotal: im.bytesTotal,
			BytesDone: im.bytesDone, File: im.file})
	}
}

// countingReader reports how many bytes were read through it.
type countingReader struct {
	r    io.Reader
	n    int64
	done func(n int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.done(c.n)
	return n, err
}

// fileRun is the import of one file: the sessions it holds, their pending
// batches, and the first error of the sink.
type fileRun struct {
	im       *Importer
	ctx      context.Context
	sessions map[string]*session
	order    []*session
	sinkErr  error
}

// session is one session of a file as the import sees it.
type session struct {
	hid, parentHID string
	id             string // logbook id once started
	project        string
	harness        string
	placeholder    bool // a parent in no file read so far, started to hang subagents on
	made, counted  bool // created by this import; counted in Counts.New
	cwd, root      string
	meta, sent     meta // what the transcript says now; what was last sent
	// firstAt and lastAt are the times of the session's first and last
	// lines: its start and, once it is ended, its end.
	firstAt, lastAt time.Time

	// closed: a subagent that was ended earlier and takes no entries;
	// held counts the entries of it this file holds, stored those it had.
	closed       bool
	held, stored int

	pending      []logbook.Entry
	pendingBytes int
	touched      []logbook.Touch
	touchedSeen  map[string]bool
	commitCalls  map[string]bool // tool call ids of git commits awaiting their output
}

// meta is the session metadata a transcript gives.
type meta struct{ model, branch, commit, title string }

func metaOf(s *transcript.Session) meta {
	return meta{model: s.Model, branch: s.Branch, commit: s.Commit, title: s.Title}
}

func (m meta) fields() logbook.SessionFields {
	ptr := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return logbook.SessionFields{Model: ptr(m.model), Branch: ptr(m.branch), HeadCommit: ptr(m.commit), Title: ptr(m.title)}
}

// emit receives the parser's records. An error stops the parser; it is
// kept in sinkErr so importFile can tell it from a read error.
func (r *fileRun) emit(rec transcript.Record) error {
	var err error
	if rec.Session != nil {
		err = r.session(rec.Session)
	} else {
		err = r.entry(rec.Entry)
	}
	if err != nil {
		r.sinkErr = err
	}
	return err
}

func (r *fileRun) session(ts *transcript.Session) error {
	s := r.sessions[ts.HarnessSessionID]
	if s != nil && !s.placeholder {
		s.meta = metaOf(ts)
		s.seen(ts.StartedAt)
		s.seen(ts.LastAt)
		return nil
	}
	if s == nil {
		s = &session{hid: ts.HarnessSessionID}
		r.sessions[s.hid] = s
		r.order = append(r.order, s)
	}
	// A new session, or a parent started as a placeholder earlier in this
	// file that now shows up: start it with what the transcript says.
	s.placeholder = false
	s.parentHID = ts.ParentHarnessSessionID
	s.cwd, s.root = ts.Cwd, workTree(ts.Cwd)
	s.meta = metaOf(ts)
	s.seen(ts.StartedAt)
	s.seen(ts.LastAt)
	if s.project == "" {
		s.project = r.projectFor(ts)
	}
	if s.parentHID != "" {
		r.im.counts.Subagents++
	} else {
		r.im.counts.Sessions++
	}
	return r.start(s, ts.Harness)
}

// projectFor is the project a new session goes into: its parent's for a
// subagent whose parent is known, else as Options say.
func (r *fileRun) projectFor(ts *transcript.Session) string {
	if ts.ParentHarnessSessionID != "" {
		if p := r.sessions[ts.ParentHarnessSessionID]; p != nil {
			return p.project
		}
		if k, ok := r.im.known[ts.ParentHarnessSessionID]; ok {
			return k.project
		}
	}
	switch {
	case r.im.opts.Project != "":
		return r.im.opts.Project
	case !r.im.opts.ProjectFromCwd:
		return ""
	}
	if p := projectFromCwd(ts.Cwd); p != "" {
		return p
	}
	return FallbackProject
}

// start starts s (after its parent) and remembers its id.
func (r *fileRun) start(s *session, harness string) error {
	var parentID string
	if s.parentHID != "" {
		var err error
		if parentID, err = r.parent(s, harness); err != nil {
			return err
		}
	}
	sess, created, err := r.im.sink.StartSession(r.ctx, ledger.StartParams{
		Project: s.project, Harness: harness, HarnessSessionID: s.hid, ParentID: parentID, Fields: s.meta.fields(),
		StartedAt: s.firstAt})
	if err != nil {
		return fmt.Errorf("starting session %s: %w", s.hid, err)
	}
	s.id, s.sent = sess.ID, s.meta
	if sess.Project != "" {
		s.project = sess.Project // the server's choice when none was named
	}
	// A subagent ended on purpose stays ended: it takes no more entries.
	s.closed = sess.ParentID != "" && sess.State == logbook.StateEnded && sess.EndReason != logbook.EndReasonTimedOut
	s.stored = int(sess.EntryCount)
	s.harness = harness
	if created {
		s.made = true
	}
	if s.made && !s.placeholder && !s.counted {
		s.counted = true
		r.im.counts.New++
	}
	r.im.known[s.hid] = known{id: sess.ID, project: s.project}
	return nil
}

// parent returns the logbook id of s's parent, starting the parent as an
// empty placeholder when no file read so far holds it.
func (r *fileRun) parent(s *session, harness string) (string, error) {
	if p := r.sessions[s.parentHID]; p != nil {
		return p.id, nil
	}
	if k, ok := r.im.known[s.parentHID]; ok {
		return k.id, nil
	}
	p := &session{hid: s.parentHID, project: s.project, placeholder: true, firstAt: s.firstAt, lastAt: s.lastAt}
	r.sessions[p.hid] = p
	r.order = append(r.order, p)
	if err := r.start(p, harness); err != nil {
		return "", err
	}
	return p.id, nil
}

// seen widens the session's span of activity to t (a zero t says nothing).
func (s *session) seen(t time.Time) {
	if t.IsZero() {
		return
	}
	if s.firstAt.IsZero() || t.Before(s.firstAt) {
		s.firstAt = t
	}
	if t.After(s.lastAt) {
		s.lastAt = t
	}
}

func (r *fileRun) entry(te *transcript.Entry) error {
	s := r.sessions[te.HarnessSessionID]
	if s == nil { // the parser always announces a session first
		return fmt.Errorf("entry %s of session %s came before the session", te.Key, te.HarnessSessionID)
	}
	r.im.counts.Entries++
	s.seen(te.At)
	if s.closed {
		s.held++
		return nil
	}
	e := toEntry(te)
	switch {
	case e.Kind == logbook.KindToolCall && e.ToolCallID != "" && logbook.RunsGitCommit(e.Payload):
		if s.commitCalls == nil {
			s.commitCalls = make(map[string]bool)
		}
		s.commitCalls[e.ToolCallID] = true
	case e.Kind == logbook.KindToolResult && s.commitCalls[e.ToolCallID]:
		delete(s.commitCalls, e.ToolCallID)
		if e.Commit == "" {
			e.Commit = logbook.CommitInOutput(e.Text)
		}
	}
	for _, path := range touchedFiles(&e) {
		if !filepath.IsAbs(path) && s.cwd != "" {
			path = filepath.Join(s.cwd, path)
		}
		s.touch(relativeTo(path, s.root), e.At)
	}
	s.pending = append(s.pending, e)
	s.pendingBytes += entrySize(&e)
	if len(s.pending) >= logbook.MaxBatch || len(s.touched) >= logbook.MaxBatch || s.pendingBytes >= maxBatchBytes {
		return r.flush(s)
	}
	return nil
}

// touch records that the session changed a file at a time, once per batch.
func (s *session) touch(path string, at time.Time) {
	if path == "" || s.touchedSeen[path] {
		return
	}
	if s.touchedSeen == nil {
		s.touchedSeen = make(map[string]bool)
	}
	s.touchedSeen[path] = true
	s.touched = append(s.touched, logbook.Touch{Kind: logbook.TouchFile, Value: path, FirstAt: at})
}

// flush sends the session's pending batch.
func (r *fileRun) flush(s *session) error {
	if len(s.pending) == 0 && len(s.touched) == 0 {
		return nil
	}
	res, err := r.im.sink.AppendEntries(r.ctx, s.id, ledger.Batch{Entries: s.pending, Touched: s.touched})
	switch {
	case errors.Is(err, logbook.ErrEnded):
		// A subagent ended since it was started: it takes nothing more.
		s.closed = true
		r.im.counts.Refused += len(s.pending)
	case err != nil:
		return fmt.Errorf("recording entries of session %s (%s): %w", s.hid, s.id, err)
	}
	r.im.counts.Recorded += res.Recorded
	r.im.counts.Duplicates += res.Duplicates
	clear(s.pending) // let go of the texts before the array is reused
	s.pending, s.pendingBytes = s.pending[:0], 0
	s.touched, s.touchedSeen = s.touched[:0], nil
	return nil
}

func (r *fileRun) flushAll() error {
	for _, s := range r.order {
		if err := r.flush(s); err != nil {
			return err
		}
	}
	return nil
}

// finish sends what is pending, the metadata that changed since the
// session was started, and ends the sessions that are over (subagents
// before their parents).
func (r *fileRun) finish() error {
	if err := r.flushAll(); err != nil {
		return err
	}
	for _, s := range r.order {
		if s.parentHID != "" {
			if p := r.sessions[s.parentHID]; p != nil && p.placeholder {
				p.seen(s.firstAt)
				p.seen(s.lastAt)
			}
		}
		if s.placeholder || s.meta == s.sent {
			continue
		}
		if _, _, err := r.im.sink.StartSession(r.ctx, ledger.StartParams{
			Project: s.project, Harness: s.harness, HarnessSessionID: s.hid, Fields: s.meta.fields()}); err != nil {
			return fmt.Errorf("updating session %s: %w", s.hid, err)
		}
		s.sent = s.meta
	}
	cutoff := r.im.opts.Now().Add(-r.im.opts.LiveWindow)
	for _, subagents := range []bool{true, false} {
		for _, s := range r.order {
			if (s.parentHID != "") != subagents {
				continue
			}
			if s.closed {
				// Entries up to the count it has were stored by an earlier
				// import (same file, same keys); the rest came too late.
				dup := min(s.held, s.stored)
				r.im.counts.Duplicates += dup
				r.im.counts.Refused += s.held - dup
				continue
			}
			if s.lastAt.After(cutoff) {
				if !s.placeholder {
					r.im.counts.Open++
				}
				continue
			}
			end := ledger.EndParams{Outcome: logbook.OutcomeSuccess, Reason: EndReason, EndedAt: s.lastAt}
			if _, err := r.im.sink.EndSession(r.ctx, s.id, end); err != nil {
				return fmt.Errorf("ending session %s: %w", s.hid, err)
			}
			if !s.placeholder {
				r.im.counts.Ended++
			}
		}
	}
	return nil
}
