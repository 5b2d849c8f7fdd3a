package transcript

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// largeClaudeTranscript builds a Claude Code transcript of about size bytes
// shaped like a real one: a prompt, then turns of an assistant message split
// over a text line and a tool_use line (same message.id, usage on both) and
// a tool_result line with a few KB of output.
func largeClaudeTranscript(size int) []byte {
	var b bytes.Buffer
	output := strings.Repeat(`drwxr-xr-x  8 dev staff  256 Sep  7 18:25 src\n`, 60)
	fmt.Fprintf(&b, `{"type":"user","sessionId":"bench","uuid":"p0","parentUuid":null,"isSidechain":false,"cwd":"/repo","gitBranch":"main","timestamp":"2025-09-07T09:52:03.071Z","message":{"role":"user","content":"Refactor the storage layer and keep the tests green."}}`+"\n")
	for i := 0; b.Len() < size; i++ {
		ts := fmt.Sprintf("2025-09-07T10:%02d:%02d.000Z", i/60%60, i%60)
		usage := `"usage":{"input_tokens":6,"cache_creation_input_tokens":304,"cache_read_input_tokens":15550,"output_tokens":%d,"service_tier":"standard"}`
		fmt.Fprintf(&b, `{"type":"assistant","sessionId":"bench","uuid":"t%d","parentUuid":"p%d","isSidechain":false,"cwd":"/repo","gitBranch":"main","timestamp":"%s","requestId":"req_%d","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"Step %d: I will list the directory to see what changed before editing the next file."}],"stop_reason":null,`+usage+`}}`+"\n", i, i, ts, i, i, i, 30)
		fmt.Fprintf(&b, `{"type":"assistant","sessionId":"bench","uuid":"c%d","parentUuid":"t%d","isSidechain":false,"cwd":"/repo","gitBranch":"main","timestamp":"%s","requestId":"req_%d","message":{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{"command":"ls -la src/%d","description":"List files"}}],"stop_reason":"tool_use",`+usage+`}}`+"\n", i, i, ts, i, i, i, i, 285)
		fmt.Fprintf(&b, `{"type":"user","sessionId":"bench","uuid":"p%d","parentUuid":"c%d","isSidechain":false,"cwd":"/repo","gitBranch":"main","timestamp":"%s","toolUseResult":{"stdout":"%s","stderr":"","interrupted":false,"isImage":false},"message":{"role":"user","content":[{"tool_use_id":"toolu_%d","type":"tool_result","content":"%s","is_error":false}]}}`+"\n", i+1, i, ts, output, i, output)
	}
	return b.Bytes()
}

// BenchmarkParseClaude measures parsing throughput (MB/s) on a generated
// 8 MB transcript.
func BenchmarkParseClaude(b *testing.B) {
	data := largeClaudeTranscript(8 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		entries := 0
		stats, err := ParseClaude(bytes.NewReader(data), "bench.jsonl", func(r Record) error {
			if r.Entry != nil {
				entries++
			}
			return nil
		})
		if err != nil || stats.Skipped != 0 || entries == 0 {
			b.Fatalf("stats %+v, err %v, %d entries", stats, err, entries)
		}
	}
}
