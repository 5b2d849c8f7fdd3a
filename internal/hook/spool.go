package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Files in the spool folder.
const (
	spoolFile    = "spool.jsonl"    // records not yet delivered, oldest first
	badFile      = "spool.bad"      // spool lines that could not be read, set aside
	rejectedFile = "rejected.jsonl" // records the server refused for good, with its answer
	appendLock   = "spool.lock"     // held briefly to append to or rewrite spoolFile
	deliverLock  = "deliver.lock"   // held by the one process delivering
)

// Spool is the folder where records wait for the server. Records are
// appended to one JSON-lines file under a lock, so concurrent hook
// processes never interleave lines, and delivered by one process at a
// time, oldest first, so the server sees them in the order they happened.
// The folder also holds the hook's small caches (policies, session ids,
// failed turns).
type Spool struct {
	dir string
}

// OpenSpool returns the spool in dir, making the folder (mode 0700: the
// records hold prompts and tool output) when needed.
func OpenSpool(dir string) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot make the spool folder %s (set LOGBOOK_SPOOL_DIR to a writable folder): %w", dir, err)
	}
	return &Spool{dir: dir}, nil
}

// Dir is the spool's folder.
func (s *Spool) Dir() string { return s.dir }

func (s *Spool) path(name string) string { return filepath.Join(s.dir, name) }

// Append writes records at the end of the spool.
func (s *Spool) Append(recs ...Record) error {
	if len(recs) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("cannot encode a %s record for the spool: %w", r.Event, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	unlock, err := lock(s.path(appendLock), false)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := os.OpenFile(s.path(spoolFile), os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cannot open the spool %s: %w", s.path(spoolFile), err)
	}
	defer f.Close()
	data := buf.Bytes()
	// A process killed in the middle of a write leaves a line without its
	// newline; start on a fresh line so only that line is lost to spool.bad.
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("cannot write to the spool %s: %w", s.path(spoolFile), err)
	}
	return nil
}

// Pending returns how many lines wait in the spool.
func (s *Spool) Pending() (int, error) {
	data, err := s.read()
	return bytes.Count(data, []byte("\n")), err
}

// read returns the spool's content under the append lock.
func (s *Spool) read() ([]byte, error) {
	unlock, err := lock(s.path(appendLock), false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	data, err := os.ReadFile(s.path(spoolFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the spool %s: %w", s.path(spoolFile), err)
	}
	return data, nil
}

// Rejected is a record the server refused for good, and why.
type Rejected struct {
	Record Record    `json:"record"`
	Status int       `json:"status,omitempty"`
	Error  string    `json:"error"`
	At     time.Time `json:"at"`
}

// DeliverFunc delivers records in order. It returns how many of them, from
// the first, it is done with (delivered or rejected), the rejected ones,
// and the error that stopped it early, if any: a failure worth retrying
// later, such as a server that is down.
type DeliverFunc func(ctx context.Context, recs []Record) (done int, rejected []Rejected, err error)

// DrainReport says what one Drain did.
type DrainReport struct {
	Delivered int
	Rejected  []Rejected
	// Bad counts spool lines that could not be read, set aside in spool.bad.
	Bad int
	// Remaining counts records still in the spool.
	Remaining int
	// Busy is true when another process was delivering the whole time.
	Busy bool
	// Err is why delivery stopped before the spool was empty.
	Err error
}

// Drain delivers the spool with deliver, oldest record first, until the
// spool is empty, deliver stops, or ctx ends. Records deliver is done
// with leave the spool; refused ones go to rejected.jsonl, unreadable
// lines to spool.bad. Only one process drains at a time: Drain waits for
// another to finish as long as ctx allows, and reports Busy if it never
// got its turn. The spool is read a chunk of lines at a time; records
// appended meanwhile are delivered in the same run.
func (s *Spool) Drain(ctx context.Context, deliver DeliverFunc) (DrainReport, error) {
	var rep DrainReport
	unlock, err := lockWait(ctx, s.path(deliverLock))
	if err != nil {
		return rep, err
	}
	if unlock == nil {
		rep.Busy = true
		n, err := s.Pending()
		rep.Remaining = n
		return rep, err
	}
	defer unlock()
	for ctx.Err() == nil {
		data, err := s.read()
		if err != nil {
			return rep, err
		}
		if len(data) == 0 {
			break
		}
		lines, n := firstLines(data, drainChunk)
		var recs []Record
		var recLines, bad [][]byte
		for _, line := range lines {
			rec, ok := parseRecord(line)
			if !ok {
				bad = append(bad, line)
				continue
			}
			recs = append(recs, rec)
			recLines = append(recLines, line)
		}
		done, rejected := 0, []Rejected(nil)
		if len(recs) > 0 {
			done, rejected, rep.Err = deliver(ctx, recs)
		}
		if err := s.setAside(badFile, bad); err != nil {
			return rep, err
		}
		if err := s.setAsideRejected(rejected); err != nil {
			return rep, err
		}
		rep.Bad += len(bad)
		rep.Rejected = append(rep.Rejected, rejected...)
		rep.Delivered += done - len(rejected)
		if done > 0 || len(bad) > 0 {
			if err := s.consume(n, recLines[done:]); err != nil {
				return rep, err
			}
		}
		if rep.Err != nil || done < len(recs) {
			break
		}
	}
	n, err := s.Pending()
	rep.Remaining = n
	if rep.Err == nil && n > 0 {
		rep.Err = ctx.Err()
	}
	return rep, err
}

// drainChunk is how many spool lines are read and delivered at a time, so
// that a hook call with the server down reads the head of a long spool,
// not all of it.
const drainChunk = 256

// firstLines returns up to max non-blank lines from the start of data and
// how many bytes they span. A last line without its newline counts too:
// Append starts a fresh line after it.
func firstLines(data []byte, max int) (lines [][]byte, n int) {
	for n < len(data) && len(lines) < max {
		end := bytes.IndexByte(data[n:], '\n')
		next := n + end + 1
		if end < 0 {
			end, next = len(data)-n, len(data)
		}
		if line := data[n : n+end]; len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, line)
		}
		n = next
	}
	return lines, n
}

// parseRecord reads one spool line; ok is false when it is not a record.
func parseRecord(line []byte) (Record, bool) {
	var r Record
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, false
	}
	if r.Session.Harness == "" || r.Session.HarnessSessionID == "" {
		return Record{}, false
	}
	return r, true
}

// consume replaces the first n bytes of the spool, which this process
// read, by keep; whatever was appended after them stays, after keep.
func (s *Spool) consume(n int, keep [][]byte) error {
	unlock, err := lock(s.path(appendLock), false)
	if err != nil {
		return err
	}
	defer unlock()
	path := s.path(spoolFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cannot read the spool %s: %w", path, err)
	}
	if n > len(data) {
		return fmt.Errorf("the spool %s shrank while this process delivered it; was it edited by hand?", path)
	}
	rest := data[n:]
	if len(keep) == 0 && len(rest) == 0 {
		return os.Truncate(path, 0)
	}
	var buf bytes.Buffer
	for _, line := range keep {
		buf.Write(line)
		buf.WriteByte('\n')
	}
	buf.Write(rest)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("cannot rewrite the spool %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// setAside appends lines to a set-aside file.
func (s *Spool) setAside(name string, lines [][]byte) error {
	if len(lines) == 0 {
		return nil
	}
	f, err := os.OpenFile(s.path(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cannot set records aside in %s: %w", s.path(name), err)
	}
	defer f.Close()
	for _, line := range lines {
		if _, err := f.Write(append(bytes.TrimRight(line, "\r"), '\n')); err != nil {
			return fmt.Errorf("cannot set records aside in %s: %w", s.path(name), err)
		}
	}
	return nil
}

func (s *Spool) setAsideRejected(rejected []Rejected) error {
	lines := make([][]byte, 0, len(rejected))
	for _, r := range rejected {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		lines = append(lines, line)
	}
	return s.setAside(rejectedFile, lines)
}

// readCache reads a small cache file of the spool folder into v; it
// reports whether there was one to read.
func (s *Spool) readCache(name string, v any) bool {
	data, err := os.ReadFile(s.path(name))
	return err == nil && json.Unmarshal(data, v) == nil
}

// writeCache replaces a small cache file atomically, so a concurrent
// reader sees the old or the new content, never half of it.
func (s *Spool) writeCache(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	path := s.path(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// removeCache removes a cache file, if there is one.
func (s *Spool) removeCache(name string) {
	_ = os.Remove(s.path(name))
}

// lockWait takes the lock at path, waiting while ctx allows. It returns a
// nil unlock (and no error) when ctx ended first.
func lockWait(ctx context.Context, path string) (unlock func(), err error) {
	for {
		unlock, err := lock(path, true)
		if err != nil || unlock != nil {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// idCacheName is the cache file holding the logbook id of a session.
func idCacheName(spec SessionSpec) string {
	return filepath.Join("ids", stableKey("session", spec.identity())[len("session:"):])
}

// rememberID notes the logbook id of the session spec names, for the
// claims guard, which must tell this session's claims from others'.
func (s *Spool) rememberID(spec SessionSpec, id string) {
	var known string
	if s.readCache(idCacheName(spec), &known) && known == id {
		return
	}
	_ = s.writeCache(idCacheName(spec), id)
}

// knownID returns the logbook id of the session spec names, when a
// delivery has learnt it.
func (s *Spool) knownID(spec SessionSpec) string {
	var id string
	s.readCache(idCacheName(spec), &id)
	return id
}

// startedCacheName is the cache file holding the spec a session was last
// started with, and its logbook id.
func startedCacheName(spec SessionSpec) string {
	return filepath.Join("started", stableKey("session", spec.identity())[len("session:"):])
}

// startedSession is the content of a started cache file.
type startedSession struct {
	Spec json.RawMessage `json:"spec"`
	ID   string          `json:"id"`
}

// rememberStarted notes that the session spec names was started with
// exactly the spec whose JSON is raw, and got id.
func (s *Spool) rememberStarted(spec SessionSpec, raw []byte, id string) {
	_ = s.writeCache(startedCacheName(spec), startedSession{Spec: raw, ID: id})
}

// startedID returns the logbook id of the session spec names if it was
// started with exactly the spec whose JSON is raw, or "" (also for a nil
// spool).
func (s *Spool) startedID(spec SessionSpec, raw []byte) string {
	var known startedSession
	if s == nil || !s.readCache(startedCacheName(spec), &known) || !bytes.Equal(known.Spec, raw) {
		return ""
	}
	return known.ID
}

// forgetStarted drops the started cache of the session spec names.
func (s *Spool) forgetStarted(spec SessionSpec) {
	if s != nil {
		s.removeCache(startedCacheName(spec))
	}
}
