package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchText builds about 64 KB of tool output: a directory listing, source
// code and log lines, with a secret of a few kinds every ~8 KB when
// withSecrets is set.
func benchText(withSecrets bool) string {
	chunk := strings.Repeat("drwxr-xr-x  8 dev staff  256 Sep  7 18:25 src\n", 40) +
		"func (s *Store) Append(ctx context.Context, sessionID string, entries []Entry) error {\n" +
		"\tfor i, e := range entries { if err := s.insert(ctx, sessionID, i, e); err != nil { return err } }\n}\n" +
		strings.Repeat("2025-09-07T10:00:00Z INFO request id=3f2a9c1e path=/v1/sessions status=200 took=3ms max_tokens=4096\n", 40)
	secrets := []string{
		"export GITHUB_TOKEN=" + ghPAT + "\n",
		"DATABASE_URL=postgres://app:s3cr3t@db:5432/app\n",
		"Authorization: Bearer " + jwt + "\n",
		"OPENAI_API_KEY=" + openAIProj + "\n",
	}
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		b.WriteString(chunk)
		if withSecrets {
			b.WriteString(secrets[i%len(secrets)])
		}
	}
	return b.String()
}

// BenchmarkString measures String on 64 KB entries (MB/s), with and without
// secrets in them.
func BenchmarkString(b *testing.B) {
	for _, bc := range []struct {
		name    string
		secrets bool
	}{{"clean", false}, {"secrets", true}} {
		text := benchText(bc.secrets)
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if out := String(text); bc.secrets == (out == text) {
					b.Fatal("unexpected redaction result")
				}
			}
		})
	}
}

// BenchmarkJSON measures JSON on a 64 KB tool result payload with secrets.
func BenchmarkJSON(b *testing.B) {
	raw, _ := json.Marshal(map[string]any{"stdout": benchText(true), "stderr": "", "exit_code": 0, "token": "abc"})
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		JSON(raw)
	}
}
