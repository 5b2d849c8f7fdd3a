package httpapi

import (
	"net/http"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// MaxJSONDepth is how deeply a request body's arrays and objects may nest,
// besides the limits of package logbook (body size, batch size, text
// lengths), maxFilters and the per-token limits of package service.
// logbook's own requests nest five levels at most (an entry's payload is
// the client's, hence the room).
const MaxJSONDepth = 64

// checkDepth refuses a JSON body that nests arrays and objects deeper than
// max, before a decoder recurses into it. It scans the bytes once and
// allocates nothing; brackets inside strings do not count. It does not
// validate the JSON: the decoder does that next.
func checkDepth(body []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for i, b := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > max {
				return logbook.Invalid("", "the JSON nests deeper than %d levels (at byte %d); send flatter objects", max, i)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

// streamLimited wraps an event-stream handler so that one token holds at
// most the configured number of streams open at once (service.OpenStream);
// one more is 429.
func (h *handler) streamLimited(fn func(http.ResponseWriter, *http.Request, service.Caller)) func(http.ResponseWriter, *http.Request, service.Caller) {
	return func(w http.ResponseWriter, r *http.Request, c service.Caller) {
		release, err := h.svc.OpenStream(bearerToken(r))
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		defer release()
		fn(w, r, c)
	}
}
