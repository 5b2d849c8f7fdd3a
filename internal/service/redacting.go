package service

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/redact"
	"github.com/logbookhq/logbook/internal/store"
)

// The service reaches its store only through a redactingStore, the one
// boundary every value crosses on its way into the database: no secret the
// redact package recognises is stored, whichever route (the API, MCP, the
// hooks, the importers, OTLP) and whichever field it came in by.
//
// Every string that crosses the store's interface is redacted: the fields
// of the values written and the values looked up by, at any depth, found by
// reflection so that a field or a column added later is covered without a
// word here. A field the domain tags redact:"text" is free text, whose
// secrets become "[REDACTED:kind]". Every other string is an identifier or
// a name (a harness session id, an idempotency key, a claim subject, a
// branch, a path), whose secrets become "[REDACTED:kind:tag]", the tag a
// keyed hash of the secret: two identifiers that differed still differ, the
// same one sent again is redacted alike, and one looked up is redacted as
// it was when stored. So a repeated start or batch stays idempotent, and
// claims, notes, tasks and filters by subject still find their rows, also
// when a secret is in them. JSON values (payloads, event data, policies)
// are redacted member by member (redact.JSON).
//
// The key of that hash is made once per database and kept in it (the keys
// table), so every replica and every restart tags a secret alike. Whoever
// holds the database holds the key too, and could test guesses of a secret
// that appears in an identifier against its tag; free text carries no tag
// for that reason.
//
// What the store is given is redacted in a copy: the caller's values are
// never changed, so a write answers with what its caller sent, and every
// later read with what was stored. Methods that take a store's own
// particulars rather than stored values (Backup's file path) pass them as
// they are.

// redactionKey names the key of the identifiers' keyed hash in the keys table.
const redactionKey = "redaction"

// cleaner redacts values for the store. It is safe for concurrent use.
type cleaner struct {
	st  store.Store // where the key is kept
	mu  sync.Mutex  // held while loading the key
	key atomic.Pointer[[]byte]
	// tagFunc is tag as a func value, made once rather than on every id.
	tagFunc func(secret string) string
}

func newCleaner(st store.Store) *cleaner {
	c := &cleaner{st: st}
	c.tagFunc = c.tag
	return c
}

// ready loads the key the first time it is needed: from the database, or
// made there when it has none yet. It runs on the Store, never in a
// transaction, so that a key made in a transaction later rolled back is
// never used.
func (c *cleaner) ready(ctx context.Context) error {
	if c.key.Load() != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key.Load() != nil {
		return nil
	}
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh) // never fails (crypto/rand)
	stored, err := c.st.KeyEnsure(ctx, redactionKey, hex.EncodeToString(fresh), time.Now())
	if err != nil {
		return fmt.Errorf("error reading the redaction key: %w", err)
	}
	key, err := hex.DecodeString(stored)
	if err != nil || len(key) == 0 {
		return fmt.Errorf("the redaction key in the keys table is not hex: %w", err)
	}
	c.key.Store(&key)
	return nil
}

// tag names a secret found in an identifier: the first 8 bytes (16 hex
// digits) of its HMAC-SHA256 under the database's key. Hex digits are
// nothing the rules take for a secret, so redaction stays idempotent.
func (c *cleaner) tag(secret string) string {
	mac := hmac.New(sha256.New, *c.key.Load())
	mac.Write([]byte(secret))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

// id redacts an identifier or a name; c must be ready.
func (c *cleaner) id(s string) string { return redact.Tagged(s, c.tagFunc) }

// text redacts free text.
func (c *cleaner) text(s string) string { return redact.String(s) }

// jsonText redacts JSON held in a string (a policy); text that is not
// JSON is redacted as text, and stays as it was otherwise.
func (c *cleaner) jsonText(s string) string {
	if !json.Valid([]byte(s)) {
		return c.text(s)
	}
	return string(redact.JSON(json.RawMessage(s)))
}

// clean redacts, in place, what each of ptrs points at: a string is an
// identifier; a struct, a slice, a map or a pointer is walked, and what it
// holds is copied before it is changed, so values shared with the caller
// stay as they were.
func (c *cleaner) clean(ctx context.Context, ptrs ...any) error {
	if err := c.ready(ctx); err != nil {
		return err
	}
	for _, p := range ptrs {
		if err := c.value(reflect.ValueOf(p).Elem(), false); err != nil {
			return err
		}
	}
	return nil
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// value redacts v, which must be settable; text says v is free text.
func (c *cleaner) value(v reflect.Value, text bool) error {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		clean := c.id(s)
		if text {
			clean = c.text(s)
		}
		if clean != s {
			v.SetString(clean)
		}
	case reflect.Struct:
		fields, err := planOf(v.Type())
		if err != nil {
			return err
		}
		for _, f := range fields {
			if err := c.value(v.Field(f.index), f.text); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		if v.IsNil() || !holdsText(v.Type()) {
			return nil
		}
		dup := reflect.New(v.Type().Elem())
		dup.Elem().Set(v.Elem())
		v.Set(dup)
		return c.value(dup.Elem(), text)
	case reflect.Slice:
		switch {
		case v.IsNil() || !holdsText(v.Type()):
		case v.Type() == rawMessageType:
			if raw := v.Bytes(); len(raw) > 0 {
				v.SetBytes(redact.JSON(raw))
			}
		case v.Type().Elem().Kind() == reflect.Uint8:
			v.SetBytes([]byte(c.text(string(v.Bytes()))))
		default:
			dup := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(dup, v)
			v.Set(dup)
			for i := range dup.Len() {
				if err := c.value(dup.Index(i), text); err != nil {
					return err
				}
			}
		}
	case reflect.Array:
		if !holdsText(v.Type()) {
			return nil
		}
		for i := range v.Len() { // an array is a value: v is a copy already
			if err := c.value(v.Index(i), text); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.IsNil() || !holdsText(v.Type()) {
			return nil
		}
		dup := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(it.Key())
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			if err := c.value(k, false); err != nil {
				return err
			}
			if err := c.value(e, text); err != nil {
				return err
			}
			dup.SetMapIndex(k, e)
		}
		v.Set(dup)
	default:
		if holdsText(v.Type()) {
			return fmt.Errorf("redacting a %s: values of this kind cannot be redacted before they are stored", v.Type())
		}
	}
	return nil
}

// cleanSession redacts a copy of the session s for SessionUpdate: only the
// strings that differ from was, the same session as read from the store
// (whose strings were redacted when they were stored), or all of them when
// was is nil.
func (c *cleaner) cleanSession(ctx context.Context, s, was *logbook.Session) (*logbook.Session, error) {
	if was == nil {
		err := c.clean(ctx, &s)
		return s, err
	}
	if err := c.ready(ctx); err != nil {
		return nil, err
	}
	dup := *s
	v, old := reflect.ValueOf(&dup).Elem(), reflect.ValueOf(was).Elem()
	fields, err := planOf(v.Type())
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		field := v.Field(f.index)
		if field.Kind() == reflect.String && field.String() == old.Field(f.index).String() {
			continue
		}
		if err := c.value(field, f.text); err != nil {
			return nil, err
		}
	}
	return &dup, nil
}

// fieldPlan is a field of a struct that can hold a string.
type fieldPlan struct {
	index int
	text  bool // tagged redact:"text"
}

// plans caches planOf by type.
var plans sync.Map // reflect.Type → []fieldPlan

// planOf lists the exported fields of struct type t that can hold a string.
// An unexported one that can is an error: it could not be redacted.
func planOf(t reflect.Type) ([]fieldPlan, error) {
	if p, ok := plans.Load(t); ok {
		return p.([]fieldPlan), nil
	}
	var fields []fieldPlan
	for i := range t.NumField() {
		f := t.Field(i)
		if !holdsText(f.Type) {
			continue
		}
		if !f.IsExported() {
			return nil, fmt.Errorf("redacting a %s: its unexported field %s cannot be redacted before it is stored", t, f.Name)
		}
		fields = append(fields, fieldPlan{index: i, text: f.Tag.Get("redact") == "text"})
	}
	plans.Store(t, fields)
	return fields, nil
}

// timeType holds no text, though its fields are unexported.
var timeType = reflect.TypeFor[time.Time]()

// texty caches holdsText by type.
var texty sync.Map // reflect.Type → bool

// holdsText reports whether a value of type t can hold a string (a byte
// array, a fixed-size binary value, does not).
func holdsText(t reflect.Type) bool {
	if h, ok := texty.Load(t); ok {
		return h.(bool)
	}
	h := holdsTextSeen(t, map[reflect.Type]bool{})
	texty.Store(t, h)
	return h
}

func holdsTextSeen(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == timeType || seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8 || holdsTextSeen(t.Elem(), seen)
	case reflect.Pointer, reflect.Array:
		return holdsTextSeen(t.Elem(), seen)
	case reflect.Map:
		return holdsTextSeen(t.Key(), seen) || holdsTextSeen(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsTextSeen(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}
