package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// SetAside is what the spool folder holds that never reached the server:
// records the server refused for good (rejected.jsonl), and spool lines
// that could not be read (spool.bad). The hook keeps them so a person can
// see why and fix it; it never sends them again by itself.
type SetAside struct {
	Rejected []Rejected
	// Bad counts unreadable lines in spool.bad.
	Bad int
}

// Empty reports whether nothing is set aside.
func (a SetAside) Empty() bool { return len(a.Rejected) == 0 && a.Bad == 0 }

// setAsideFrom reads what was set aside after the given byte offsets of
// rejected.jsonl and spool.bad (0, 0: everything), and the offsets at
// their ends, for the next call.
func (s *Spool) setAsideFrom(from setAsideMark) (SetAside, setAsideMark, error) {
	var out SetAside
	rejected, rejectedEnd, err := readFrom(s.path(rejectedFile), from.Rejected)
	if err != nil {
		return out, from, err
	}
	for _, line := range bytes.Split(rejected, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r Rejected
		if json.Unmarshal(line, &r) != nil {
			r = Rejected{Error: "an unreadable line of " + rejectedFile}
		}
		out.Rejected = append(out.Rejected, r)
	}
	bad, badEnd, err := readFrom(s.path(badFile), from.Bad)
	if err != nil {
		return out, from, err
	}
	out.Bad = bytes.Count(bad, []byte("\n"))
	return out, setAsideMark{Rejected: rejectedEnd, Bad: badEnd}, nil
}

// SetAside reads everything set aside in the spool folder.
func (s *Spool) SetAside() (SetAside, error) {
	a, _, err := s.setAsideFrom(setAsideMark{})
	return a, err
}

// readFrom reads a file from offset on and returns its size. A file
// shorter than offset was emptied or replaced (by a person who dealt with
// it): it is read from its start.
func readFrom(path string, offset int64) ([]byte, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, offset, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, offset, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if offset > info.Size() {
		offset = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, offset, info.Size()-offset))
	if err != nil {
		return nil, offset, fmt.Errorf("cannot read %s: %w", path, err)
	}
	return data, info.Size(), nil
}

// setAsideMark is how far into the set-aside files the hook has told the
// user, kept in the spool folder (setAsideMarkCache).
type setAsideMark struct {
	Rejected int64 `json:"rejected"`
	Bad      int64 `json:"bad"`
}

const setAsideMarkCache = "reported.json"

// unreported returns what was set aside since the user was last told, and
// notes that they are told now. Two hooks starting at once may both tell:
// told twice is better than never.
func (s *Spool) unreported() (SetAside, error) {
	var mark setAsideMark
	s.readCache(setAsideMarkCache, &mark)
	a, end, err := s.setAsideFrom(mark)
	if err != nil || a.Empty() {
		return a, err
	}
	return a, s.writeCache(setAsideMarkCache, end)
}

// maxReasons is how many distinct reasons a summary names.
const maxReasons = 5

// Summary says in a few lines what was set aside and why, most frequent
// reason first, and where the records are kept.
func (a SetAside) Summary(spoolDir string) string {
	var b strings.Builder
	if n := len(a.Rejected); n > 0 {
		counts := map[string]int{}
		for _, r := range a.Rejected {
			counts[r.Error]++
		}
		reasons := make([]string, 0, len(counts))
		for reason := range counts {
			reasons = append(reasons, reason)
		}
		sort.Slice(reasons, func(i, j int) bool {
			if counts[reasons[i]] != counts[reasons[j]] {
				return counts[reasons[i]] > counts[reasons[j]]
			}
			return reasons[i] < reasons[j]
		})
		fmt.Fprintf(&b, "%d hook %s refused by the logbook server for good and set aside in %s%c%s; %s not in the logbook. Why:",
			n, plural(n, "record was", "records were"), spoolDir, os.PathSeparator, rejectedFile, plural(n, "it is", "they are"))
		for i, reason := range reasons {
			if i == maxReasons {
				fmt.Fprintf(&b, "\n- and %d other reasons", len(reasons)-maxReasons)
				break
			}
			fmt.Fprintf(&b, "\n- %d× %s", counts[reason], reason)
		}
	}
	if a.Bad > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d unreadable spool %s set aside in %s%c%s.", a.Bad, plural(a.Bad, "line was", "lines were"), spoolDir, os.PathSeparator, badFile)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
