package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/logbookhq/logbook/internal/logbook"
)

// decode reads a JSON body of at most logbook.MaxRequestLen bytes into v.
// Unknown fields are ignored, so older servers accept newer clients; a
// wrong type or broken JSON is a *logbook.ValidationError naming the field.
//
// The body is held once: read into a buffer of its declared length (not
// grown by doubling) and decoded from it in place. An 8 MiB body costs
// 8 MiB here, besides what it decodes to.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r, logbook.MaxRequestLen)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return logbook.Invalid("", "the body is empty; send a JSON object")
	}
	if err := checkDepth(body, MaxJSONDepth); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return jsonError(err)
	}
	return nil
}

// decodeKnown is decode for a setting whose every field must be known: a
// misspelt one would leave what it names as it was while its sender
// believes it set. A body that does not fit says to send shape.
func decodeKnown(w http.ResponseWriter, r *http.Request, v any, shape string) error {
	var raw json.RawMessage
	if err := decode(w, r, &raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return logbook.Invalid("", "%v; send %s", jsonError(err), shape)
	}
	return nil
}

// readBody reads r's body, of at most limit bytes (more is an
// *http.MaxBytesError). A body that declares its length is read into a
// buffer of that size.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength <= 0 || r.ContentLength > limit {
		return io.ReadAll(body)
	}
	buf := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// jsonError turns a decoding error into a message a person can act on.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return logbook.Invalid("", "the body is not valid JSON (at byte %d: %s)", syntax.Offset, syntax.Error())
	case errors.As(err, &typ) && typ.Field != "":
		return logbook.Invalid(typ.Field, "expected %s, got a JSON %s", describeType(typ.Type.String()), typ.Value)
	case errors.As(err, &typ):
		return logbook.Invalid("", "expected a JSON object, got a JSON %s", typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return logbook.Invalid("", "the body ends in the middle of a JSON value")
	default:
		return logbook.Invalid("", "the body cannot be read as JSON: %s", err.Error())
	}
}

func describeType(goType string) string {
	switch {
	case strings.Contains(goType, "int"):
		return "a whole number"
	case strings.Contains(goType, "string") || strings.HasSuffix(goType, "Kind") || strings.HasSuffix(goType, "Outcome") ||
		strings.HasSuffix(goType, "Blocker") || strings.HasSuffix(goType, "StepStatus"):
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.Contains(goType, "bool"):
		return "true or false"
	default:
		return "an object"
	}
}
