package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/logbookhq/logbook/internal/logbook"
)

// decode reads a JSON body of at most logbook.MaxRequestLen bytes into v.
// Unknown fields are ignored, so older servers accept newer clients; a
// wrong type or broken JSON is a *logbook.ValidationError naming the field.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, logbook.MaxRequestLen))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return logbook.Invalid("", "the body is empty; send a JSON object")
	}
	if err := checkDepth(body, MaxJSONDepth); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return logbook.Invalid("", "the body holds more than one JSON value; send one object")
	}
	return nil
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

// flexString is a JSON string that may also be sent as a number, for ids
// like issue 12 that clients write either way.
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("expected a string or a number")
	}
	*f = flexString(n.String())
	return nil
}

func (f *flexString) ptr() *string {
	if f == nil {
		return nil
	}
	s := string(*f)
	return &s
}

// queryInt reads an optional whole-number query parameter.
func queryInt(r *http.Request, name string, fallback int64) (int64, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return fallback, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return 0, logbook.Invalid(name, "%q is not a whole number of 0 or more", raw)
	}
	return n, nil
}

// queryBool reads an optional true/false query parameter.
func queryBool(r *http.Request, name string) (bool, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, logbook.Invalid(name, "%q is not true or false", raw)
	}
	return b, nil
}
