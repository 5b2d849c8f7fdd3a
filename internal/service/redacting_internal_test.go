package service

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
	"github.com/logbookhq/logbook/internal/testdb"
)

// testSecret is a GitHub token, assembled at run time so that the source
// holds no token-shaped literal.
var testSecret = "gh" + "p_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"

// exempt are the store's methods whose values are not redacted, and why.
var exempt = map[string]string{
	"KeyEnsure": "stores logbook's own random keys, never a client's value",
	"Backup":    "takes the path of the copy to write, which is not stored",
	// These delete rows; run, they would leave nothing to look at.
	"SessionDeleteTree": "deletes", "SessionPruneEnded": "deletes", "EventPrune": "deletes", "EntryDeleteAfter": "deletes",
}

// exemptColumns are the columns that keep what they are given whole, and
// why.
var exemptColumns = map[string]string{
	"alert_rules.webhook_url": "logbook posts to it; a Slack URL carries its own secret in its path, and is only shown masked",
	"alert_rules.secret":      "logbook's own random key that signs the webhook's bodies",
}

// TestEveryStoreMethodRedacts calls every method of store.Executor (found
// by reflection, so a method added later is called too) through the
// redacting store, with every string of every argument holding a secret,
// and then reads every column of every table: none may hold it. All the
// strings are one value, so that the rows refer to one another (an entry
// to its session) and the writes succeed.
func TestEveryStoreMethodRedacts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		ctx := context.Background()
		raw := e.Open(t)
		st := newRedactingStore(raw)
		value := "v " + testSecret
		tx, err := st.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		executor := reflect.TypeFor[store.Executor]()
		first := []string{"ProjectEnsure", "SessionInsert", "AgentEnsure"} // what the others refer to
		var order []string
		order = append(order, first...)
		for i := range executor.NumMethod() {
			order = append(order, executor.Method(i).Name)
		}
		failed := map[string]error{}
		for _, name := range order {
			if exempt[name] != "" {
				continue
			}
			m := reflect.ValueOf(tx).MethodByName(name)
			args := []reflect.Value{reflect.ValueOf(ctx)}
			for i := 1; i < m.Type().NumIn(); i++ {
				arg := reflect.New(m.Type().In(i)).Elem()
				fill(arg, value)
				args = append(args, arg)
			}
			if err := tx.Savepoint(ctx); err != nil {
				t.Fatal(err)
			}
			out := m.Call(args)
			if err, _ := out[len(out)-1].Interface().(error); err != nil {
				failed[name] = err
				if err := tx.RollbackToSavepoint(ctx); err != nil {
					t.Fatal(err)
				}
				continue
			}
			delete(failed, name)
			if err := tx.ReleaseSavepoint(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for name, err := range failed {
			if !errors.Is(err, logbook.ErrNotFound) && !errors.Is(err, logbook.ErrConflict) {
				t.Logf("%s failed: %v", name, err)
			}
		}

		db := raw.(interface{ DB() *sql.DB }).DB()
		for _, table := range []string{"sessions", "entries", "plan_steps", "claims", "touches", "links", "events", "agents", "agent_tasks", "agent_rotations", "tokens"} {
			var n int
			if err := db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Errorf("no row reached %s: the methods writing it failed, so the test shows nothing of them", table)
			}
		}
		for _, where := range columnsHolding(t, db, e.Name, testSecret) {
			if exemptColumns[where] != "" {
				continue
			}
			t.Errorf("stored unredacted: %s", where)
		}
	})
}

// fill sets every string in v to s, every number to 1, every time to now,
// and gives every pointer, slice and raw JSON one value holding s.
func fill(v reflect.Value, s string) {
	switch {
	case v.Type() == reflect.TypeFor[json.RawMessage]():
		raw, _ := json.Marshal(map[string]string{"field": s})
		v.SetBytes(raw)
		return
	case v.Type() == reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Now().UTC().Truncate(time.Microsecond)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), s)
			}
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), s)
		v.Set(p)
	case reflect.Slice:
		one := reflect.MakeSlice(v.Type(), 1, 1)
		fill(one.Index(0), s)
		v.Set(one)
	}
}

// columnsHolding lists the columns of every table of the catalogue where
// some value holds secret.
func columnsHolding(t *testing.T, db *sql.DB, engine, secret string) []string {
	t.Helper()
	listing := `SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table'`
	read := `SELECT COUNT(*) FROM %q WHERE instr(CAST(%q AS BLOB), CAST($1 AS BLOB)) > 0`
	if engine == "postgres" {
		listing = `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`
		read = `SELECT COUNT(*) FROM %q WHERE strpos(%q::text, $1) > 0`
	}
	rows, err := db.Query(listing)
	if err != nil {
		t.Fatal(err)
	}
	var columns [][2]string
	for rows.Next() {
		var c [2]string
		if err := rows.Scan(&c[0], &c[1]); err != nil {
			t.Fatal(err)
		}
		columns = append(columns, c)
	}
	rows.Close()
	if len(columns) < 50 {
		t.Fatalf("the catalogue listed %d columns", len(columns))
	}
	var found []string
	for _, c := range columns {
		var n int
		if err := db.QueryRow(fmt.Sprintf(read, c[0], c[1]), secret).Scan(&n); err != nil {
			t.Fatalf("reading %s.%s: %v", c[0], c[1], err)
		}
		if n > 0 {
			found = append(found, c[0]+"."+c[1])
		}
	}
	return found
}

// TestCleanerCopies: what the store is given is redacted in a copy; the
// caller's values stay as they were. Free text gets plain placeholders,
// identifiers tagged ones, the same for the same secret.
func TestCleanerCopies(t *testing.T) {
	st := newRedactingStore(testdb.SQLite(t))
	ctx := context.Background()
	sess := &logbook.Session{ID: "s", Goal: "use " + testSecret, HarnessSessionID: "run " + testSecret,
		Branch: testSecret}
	entries := []logbook.Entry{{Text: testSecret, Key: "k " + testSecret, Payload: json.RawMessage(`{"token":"abc","x":"` + testSecret + `"}`)}}
	orig, origEntries := *sess, entries[0]

	clean, err := st.c.cleanSession(ctx, sess, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.c.clean(ctx, &entries); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*sess, orig) {
		t.Errorf("the caller's session changed: %+v", *sess)
	}
	if got := entries[0]; reflect.DeepEqual(got, origEntries) {
		t.Errorf("the cleaned copy of the entries is unchanged: %+v", got)
	}
	tag := st.c.tag(testSecret)
	for name, tc := range map[string]struct{ got, want string }{
		"goal (text)":             {clean.Goal, "use [REDACTED:github_token]"},
		"harness session id (id)": {clean.HarnessSessionID, "run [REDACTED:github_token:" + tag + "]"},
		"branch (id)":             {clean.Branch, "[REDACTED:github_token:" + tag + "]"},
		"entry text":              {entries[0].Text, "[REDACTED:github_token]"},
		"entry key":               {entries[0].Key, "k [REDACTED:github_token:" + tag + "]"},
		"payload":                 {string(entries[0].Payload), `{"token":"[REDACTED:secret]","x":"[REDACTED:github_token]"}`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, want %q", name, tc.got, tc.want)
		}
	}
	if strings.Contains(fmt.Sprint(orig), "[REDACTED") {
		t.Errorf("the original was redacted")
	}

	// The key is the database's: a second store on it tags alike.
	again := newRedactingStore(st.st)
	if err := again.c.ready(ctx); err != nil {
		t.Fatal(err)
	}
	if got := again.c.tag(testSecret); got != tag {
		t.Errorf("another store on the same database tags %s, not %s", got, tag)
	}
}

// BenchmarkBoundary measures what the redacting store adds to a batch of
// 100 entries as hooks send them and to the session update that follows.
//
//	go test ./internal/service -run '^$' -bench Boundary -benchmem
func BenchmarkBoundary(b *testing.B) {
	st := newRedactingStore(testdb.SQLite(b))
	ctx := context.Background()
	if err := st.c.ready(ctx); err != nil {
		b.Fatal(err)
	}
	entries := make([]logbook.Entry, 100)
	for i := range entries {
		entries[i] = logbook.Entry{SessionID: "01JBZ8K2M3N4P5Q6R7S8T9V0W1", Seq: int64(i + 1), Kind: logbook.KindToolResult,
			ToolCallID: fmt.Sprint("toolu_", i), Key: fmt.Sprint("toolu_", i, ":result"),
			Text: "--- FAIL: TestLogin (0.02s)\n    login_test.go:41: expected 200, got 500\nFAIL"}
	}
	was := logbook.Session{ID: "01JBZ8K2M3N4P5Q6R7S8T9V0W1", Project: "demo", Actor: "alice", Harness: "claude-code",
		HarnessSessionID: "0d4c5b2e-0000-4000-8000-000000000001", Title: "Fix the flaky login test", Branch: "fix-login"}
	sess := was
	sess.LastAssistant, sess.EntryCount = "The handler returns 500 when the password is empty; adding a check.", 100
	b.Run("Append100Entries", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			batch := entries
			if err := st.c.clean(ctx, &batch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SessionUpdate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := st.c.cleanSession(ctx, &sess, &was); err != nil {
				b.Fatal(err)
			}
		}
	})
}
