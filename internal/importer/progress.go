package importer

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// IsTerminal reports whether w is a terminal (a character device), where
// a progress bar may be redrawn in place.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// Bar draws an import's progress on one terminal line, redrawn in place:
//
//	[#####.....]  12/40 files  3.2/8.0 MB  5,120 entries
//
// It redraws at most ten times a second.
type Bar struct {
	w     io.Writer
	width int // characters of the bar itself
	last  time.Time
	drawn int // length of the line drawn last, to blank what is left of it
}

// NewBar returns a bar that draws on w.
func NewBar(w io.Writer) *Bar { return &Bar{w: w, width: 20} }

// Update redraws the bar for p, unless it was redrawn less than 100 ms ago.
func (b *Bar) Update(p Progress) {
	if now := time.Now(); now.Sub(b.last) >= 100*time.Millisecond {
		b.last = now
		b.draw(p)
	}
}

// Done draws the bar for p one last time and ends its line.
func (b *Bar) Done(p Progress) {
	b.draw(p)
	fmt.Fprintln(b.w)
}

func (b *Bar) draw(p Progress) {
	filled := b.width
	if p.BytesTotal > 0 {
		filled = int(int64(b.width) * min(p.BytesDone, p.BytesTotal) / p.BytesTotal)
	}
	line := fmt.Sprintf("[%s%s] %d/%d files  %s/%s MB  %s entries",
		strings.Repeat("#", filled), strings.Repeat(".", b.width-filled),
		p.Files, p.FilesTotal, megabytes(p.BytesDone), megabytes(p.BytesTotal), thousands(p.Entries))
	pad := max(b.drawn-len(line), 0)
	b.drawn = len(line)
	fmt.Fprintf(b.w, "\r%s%s", line, strings.Repeat(" ", pad))
}

// Summary is the one line an import ends with, e.g.
//
//	imported 40 files (8.0 MB): 38 sessions (12 new), 5 subagents, 5,120 entries recorded, 0 already there, 7 malformed lines skipped
func Summary(c Counts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "imported %s (%s MB): %s (%s new), %s, %s recorded, %s already there",
		count(c.Files, "file", "files"), megabytes(c.Bytes), count(c.Sessions, "session", "sessions"), thousands(c.New),
		count(c.Subagents, "subagent", "subagents"), count(c.Recorded, "entry", "entries"), thousands(c.Duplicates))
	if c.Refused > 0 {
		fmt.Fprintf(&b, ", %s refused (their subagent had ended)", thousands(c.Refused))
	}
	fmt.Fprintf(&b, ", %s skipped", count(c.Skipped, "malformed line", "malformed lines"))
	if c.Open > 0 {
		fmt.Fprintf(&b, "; %s left open (active in the last hours)", count(c.Open, "session", "sessions"))
	}
	if c.Failed > 0 {
		fmt.Fprintf(&b, "; %s could not be read", count(c.Failed, "file", "files"))
	}
	return b.String()
}

// count is n and the noun, singular for 1.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

func megabytes(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) }

func thousands(n int) string { return Thousands(int64(n)) }

// Thousands writes n with commas between groups of three digits.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + Thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
