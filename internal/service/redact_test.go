package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store/sqlitestore"
)

// TestSecretsNeverReachTheDatabase writes secrets through every free-text
// field and looks for them in the bytes of the SQLite file itself.
func TestSecretsNeverReachTheDatabase(t *testing.T) {
	// Assembled at run time so the source holds no token-shaped literal.
	secrets := []string{
		"AKIA" + "IOSFODNN7EXAMPLE",
		"gh" + "p_" + "R2d2C3p0L8k9J7h6G5f4D3s2A1q0W9e8R7t6",
		"sk-" + "ant-api03-" + "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3Bx-AAAA",
		"xox" + "b-" + "2147483647-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
		"hunter2-" + "very-secret-pw",
	}
	leak := "deploy with " + secrets[0] + " and " + secrets[1] + "; Authorization: Bearer " + secrets[2] +
		" slack " + secrets[3] + " db postgres://app:" + secrets[4] + "@db.internal:5432/prod"

	path := filepath.Join(t.TempDir(), "l.db")
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, path)
	must(t, err)
	svc := service.New(st, service.Options{})
	alice := service.Caller{Actor: "alice", Project: "p"}
	s, _, err := svc.StartSession(ctx, alice, service.StartParams{Fields: logbook.SessionFields{Title: &leak, Goal: &leak, Task: &leak, Prompt: &leak}})
	must(t, err)
	payload, _ := json.Marshal(map[string]any{"command": leak, "env": map[string]string{"GITHUB_TOKEN": secrets[1]}})
	_, err = svc.AppendEntries(ctx, alice, s.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindPrompt, Text: leak},
		{Kind: logbook.KindToolCall, Tool: "Bash", Payload: payload},
		{Kind: logbook.KindToolResult, Text: leak},
	}})
	must(t, err)
	_, err = svc.EndSession(ctx, alice, s.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Result: leak, Reason: leak})
	must(t, err)
	_, err = svc.AddTask(ctx, alice, "p", "eng", service.TaskInput{TaskID: "t", Title: leak, Text: leak})
	must(t, err)

	v, err := svc.GetSession(ctx, alice, s.ID, service.GetParams{})
	must(t, err)
	if !strings.Contains(v.Entries[0].Text, "[REDACTED") || !strings.Contains(v.Entries[0].Text, "deploy with") {
		t.Errorf("the redacted prompt lost its shape: %q", v.Entries[0].Text)
	}
	if !json.Valid(v.Entries[1].Payload) {
		t.Errorf("the redacted payload is not JSON: %s", v.Entries[1].Payload)
	}
	raw, _ := json.Marshal(v)
	for _, secret := range secrets {
		if strings.Contains(string(raw), secret) {
			t.Errorf("the API answers with a secret: %s", secret)
		}
	}

	db := rawDB(st)
	_, err = db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	must(t, err)
	st.Close()
	for _, file := range []string{path, path + "-wal"} {
		data, err := os.ReadFile(file)
		if os.IsNotExist(err) {
			continue
		}
		must(t, err)
		for _, secret := range secrets {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds the secret %s…", filepath.Base(file), secret[:6])
			}
		}
	}
}
