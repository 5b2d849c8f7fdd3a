package logbook

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Name cleans a name a client gives something by: a project, an actor, an
// agent, a harness and a harness session id, a task id. Names are keys
// (a session is started again by its harness session id, a token stands
// for a project and an actor), so one rule holds for all of them, on every
// surface:
//
//   - surrounding white space is trimmed, and the trimmed name is what is
//     stored, compared and answered (" demo " is project "demo");
//   - a name holding a control character (NUL, a tab, a newline, DEL, …)
//     or bytes that are not UTF-8 is refused with a *ValidationError for
//     field: stored, it would read as another name ("a\x00" as "a");
//   - a name longer than max characters is clipped like Clip.
//
// An empty name is returned as "" without error: whether one is required
// is the caller's to say.
func Name(field, s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return "", Invalid(field, "the name holds bytes that are not UTF-8; send it as UTF-8 text")
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return "", Invalid(field, "the name holds a control character (%U at byte %d); names are printable text without NUL, tabs or line breaks", r, i)
		}
	}
	return Clip(s, max), nil
}
