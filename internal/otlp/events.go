package otlp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Harnesses whose events are read, named as their hooks name them, so the
// events of a session and its hooks write to one logbook session.
const (
	harnessClaude = "claude-code"
	harnessCodex  = "codex"
)

// eventName is the record's event name with its harness prefix
// ("claude_code.tool_result", "codex.tool_result"): the record's
// event_name, else its event.name attribute, else its body. Claude Code
// puts the full name in the body and the short one ("tool_result") in
// event.name.
func (r *logRecord) eventName() string {
	body, _ := r.Body.(string)
	for _, name := range []string{r.EventName, r.Attrs.str("event.name"), body} {
		switch {
		case strings.HasPrefix(name, "claude_code.") || strings.HasPrefix(name, "codex."):
			return name
		case name != "" && strings.HasSuffix(body, "."+name):
			return body
		}
	}
	return ""
}

// at is when the event happened: its event.timestamp attribute (both
// harnesses send one, RFC 3339), else the record's time.
func (r *logRecord) at() time.Time {
	if t, err := time.Parse(time.RFC3339Nano, r.Attrs.str("event.timestamp")); err == nil {
		return t.UTC()
	}
	return r.At
}

// logSession is a session the events of an export write to.
type logSession struct {
	project, harness, hid string
	model                 string
	entries               []logbook.Entry
	records               int // records that map to it, for rejection counts
}

// planLogs groups an export's harness events by session and maps each to
// entries. Records of other programs, and events without a session id,
// are accepted and ignored; known is how many were read.
func planLogs(records []*logRecord) (sessions []*logSession, known int) {
	byKey := make(map[string]*logSession)
	for _, r := range records {
		name := r.eventName()
		var harness, hid string
		switch {
		case strings.HasPrefix(name, "claude_code."):
			harness, hid = harnessClaude, firstNonEmpty(r.Attrs.str("session.id"), r.Resource.str("session.id"))
		case strings.HasPrefix(name, "codex."):
			harness, hid = harnessCodex, firstNonEmpty(r.Attrs.str("conversation.id"), r.Resource.str("conversation.id"))
		}
		if hid == "" {
			continue
		}
		known++
		project := r.Resource.str(resourceProject)
		key := project + "\x00" + harness + "\x00" + hid
		s := byKey[key]
		if s == nil {
			s = &logSession{project: project, harness: harness, hid: hid}
			byKey[key] = s
			sessions = append(sessions, s)
		}
		s.records++
		if model := r.Attrs.str("model"); model != "" {
			s.model = model
		}
		s.entries = append(s.entries, eventEntries(name, r, hid)...)
	}
	return sessions, known
}

// eventEntries maps one harness event to entries. Keys follow the hooks
// and importers where the event names the same thing (a tool call by its
// tool_use_id or call_id: "<id>:call", "<id>:result"), else come from the
// event's own ids, so a retried export adds nothing.
func eventEntries(name string, r *logRecord, hid string) []logbook.Entry {
	a, at := r.Attrs, r.at()
	// own keys what only this event says: by its sequence number in the
	// session when the harness numbers events (Claude Code's
	// event.sequence), else by the event's time and attributes.
	own := func(what string) string {
		if seq := a.str("event.sequence"); seq != "" {
			return "otel:" + what + ":" + hid + ":" + seq
		}
		raw, _ := json.Marshal(a) // map keys are sorted: the same event, the same key
		h := sha256.Sum256(append([]byte(name+"\x00"+hid+"\x00"), raw...))
		return "otel:" + what + ":" + hex.EncodeToString(h[:12])
	}
	note := func(what, text string, payload map[string]any) logbook.Entry {
		e := logbook.Entry{Kind: logbook.KindNote, Role: logbook.RoleSystem, Text: text, At: at, Key: own(what)}
		e.Payload, _ = json.Marshal(payload)
		return e
	}
	switch name {
	case "claude_code.user_prompt", "codex.user_prompt":
		// The text is exported only when asked (OTEL_LOG_USER_PROMPTS=1,
		// Codex's log_user_prompt); without it the event says nothing
		// worth an entry: the hook records the prompt, if installed.
		text := a.str("prompt")
		if text == "" {
			return nil
		}
		key := own("prompt")
		if id := a.str("prompt.id"); id != "" {
			key = "otel:prompt:" + id
		}
		return []logbook.Entry{{Kind: logbook.KindPrompt, Role: logbook.RoleUser, Text: text, At: at, Key: key}}
	case "claude_code.tool_result", "codex.tool_result":
		return toolEventEntries(a, at, own)
	case "claude_code.tool_decision", "codex.tool_decision":
		decision := a.str("decision")
		switch strings.ToLower(decision) {
		case "reject", "denied", "abort":
		default:
			return nil // an allowed call is recorded by its result
		}
		return []logbook.Entry{note("decision", fmt.Sprintf("%s %s (%s)", a.str("tool_name"), decision, a.str("source")),
			map[string]any{"tool": a.str("tool_name"), "decision": decision, "source": a.str("source"),
				"tool_call_id": firstNonEmpty(a.str("tool_use_id"), a.str("call_id"))})}
	case "claude_code.api_request":
		e := note("api_request", "model call: "+a.str("model"), map[string]any{
			"model": a.str("model"), "cost_usd": a["cost_usd"], "duration_ms": a.num("duration_ms"),
			"cache_read_tokens": a.num("cache_read_tokens"), "cache_creation_tokens": a.num("cache_creation_tokens")})
		// Claude Code's input_tokens leaves out the cache's, which logbook
		// counts as input (as the transcript importer does) and prices apart.
		cacheRead, cacheWrite := max(a.num("cache_read_tokens"), 0), max(a.num("cache_creation_tokens"), 0)
		e.Usage = &logbook.Usage{InputTokens: max(a.num("input_tokens"), 0) + cacheRead + cacheWrite, OutputTokens: max(a.num("output_tokens"), 0),
			CacheReadTokens: cacheRead, CacheWriteTokens: cacheWrite, Model: a.str("model")}
		if cost, ok := a.decimal("cost_usd"); ok && cost >= 0 {
			e.Usage.CostUSD = &cost // what the call cost, as Claude Code reckoned it: recorded as it is
		}
		return []logbook.Entry{e}
	case "codex.sse_event":
		if a.str("event.kind") != "response.completed" {
			return nil
		}
		in, out := a.num("input_token_count"), a.num("output_token_count")
		if in <= 0 && out <= 0 {
			return nil
		}
		e := note("api_request", "model call: "+a.str("model"), map[string]any{
			"model": a.str("model"), "duration_ms": a.num("duration_ms"), "cached_token_count": a.num("cached_token_count"),
			"reasoning_token_count": a.num("reasoning_token_count")})
		// input_token_count includes cached_token_count, as OpenAI counts.
		e.Usage = &logbook.Usage{InputTokens: max(in, 0), OutputTokens: max(out, 0),
			CacheReadTokens: min(max(a.num("cached_token_count"), 0), max(in, 0)), Model: a.str("model")}
		return []logbook.Entry{e}
	case "claude_code.api_error":
		return []logbook.Entry{note("api_error", fmt.Sprintf("API error %s: %s", a.str("status_code"), a.str("error")),
			map[string]any{"model": a.str("model"), "status_code": a.str("status_code"), "error": a.str("error"), "attempt": a.num("attempt")})}
	case "codex.api_request":
		if msg := a.str("error.message"); msg != "" {
			return []logbook.Entry{note("api_error", fmt.Sprintf("API error %s: %s", a.str("http.response.status_code"), msg),
				map[string]any{"model": a.str("model"), "status_code": a.str("http.response.status_code"), "error": msg, "attempt": a.num("attempt")})}
		}
	}
	return nil
}

// toolEventEntries maps a tool_result event to the call and its result,
// keyed by the call's id as the hooks and importers key them, so a call a
// hook recorded too is one entry. The call's input is tool_parameters or
// tool_input (Claude Code, sent when OTEL_LOG_TOOL_DETAILS=1) or arguments
// (Codex); the result's text is Codex's output, or the error.
func toolEventEntries(a attrMap, at time.Time, own func(string) string) []logbook.Entry {
	id := firstNonEmpty(a.str("tool_use_id"), a.str("call_id"))
	tool := a.str("tool_name")
	key := func(what string) string {
		if id != "" {
			return id + ":" + what
		}
		return own(what)
	}
	call := logbook.Entry{Kind: logbook.KindToolCall, Tool: tool, ToolCallID: id, At: at, Key: key("call")}
	for _, name := range []string{"tool_input", "tool_parameters", "arguments"} {
		if raw := a.str(name); raw != "" {
			if call.Payload = jsonValue(json.RawMessage(raw)); call.Payload == nil {
				call.Payload, _ = json.Marshal(raw)
			}
			break
		}
	}
	result := logbook.Entry{Kind: logbook.KindToolResult, Tool: tool, ToolCallID: id, At: at, Key: key("result"), Text: a.str("output")}
	payload := map[string]any{"duration_ms": a.num("duration_ms")}
	if ok := strings.ToLower(a.str("success")); ok == "false" || a["success"] == false {
		payload["is_error"], payload["error"] = true, a.str("error")
		if result.Text == "" {
			result.Text = a.str("error")
		}
	}
	result.Payload, _ = json.Marshal(payload)
	return []logbook.Entry{call, result}
}

// ingestLogs writes the harness events of a logs export as the caller
// (through the ledger port): each session is started, or found by its
// harness session id whoever started it (its hook, the importer, OTLP),
// and takes its events' entries in time order. A session that has ended
// stays ended: events that arrive after its end (the exporter batches
// them) are accepted and dropped. Sessions the service refuses are
// counted as rejected; any other error is returned, and the exporter
// should send the export again, which entry keys make safe.
func ingestLogs(ctx context.Context, l ledger.Ledger, records []*logRecord) (result, error) {
	sessions, known := planLogs(records)
	res := result{Items: len(records), Known: known}
	var reasons []string
	for _, s := range sessions {
		p := ledger.StartParams{Project: s.project, Harness: s.harness, HarnessSessionID: s.hid, KeepEnded: true}
		if s.model != "" {
			p.Fields.Model = &s.model
		}
		sess, _, err := l.StartSession(ctx, p)
		if err == nil && sess.State == logbook.StateEnded {
			res.Sessions++
			continue
		}
		if err == nil {
			res.Sessions++
			if err = adoptPromptKeys(ctx, l, sess, s.entries); err == nil {
				var recorded int
				recorded, err = appendAll(ctx, l, sess.ID, s.entries)
				res.Recorded += recorded
			}
		}
		switch {
		case err == nil, errors.Is(err, logbook.ErrEnded):
		case permanent(err):
			res.Rejected += s.records
			reasons = append(reasons, fmt.Sprintf("session %q: %v", s.hid, err))
		default:
			return res, err
		}
	}
	sort.Strings(reasons)
	res.Message = logbook.Clip(strings.Join(reasons, "; "), 2000)
	return res, nil
}

// promptWindow is how far apart a prompt's hook and its event may be
// stamped and still be taken for one prompt.
const promptWindow = 2 * time.Minute

// adoptPromptKeys gives each prompt of entries that the session already
// holds from another source (the hook or the importer, whose keys are
// their own) that entry's key, so the prompt is recorded once: the
// session's last entries are searched for a prompt of the same text,
// the nearest in time within promptWindow, each taken once.
func adoptPromptKeys(ctx context.Context, l ledger.Ledger, sess logbook.Session, entries []logbook.Entry) error {
	var prompts []int
	for i, e := range entries {
		if e.Kind == logbook.KindPrompt {
			prompts = append(prompts, i)
		}
	}

	if len(prompts) == 0 || sess.EntryCount == 0 {
		return nil
	}
	view, err := l.GetSession(ctx, sess.ID, ledger.GetParams{AfterSeq: max(sess.EntryCount-logbook.MaxBatch, 0), Limit: logbook.MaxBatch})
	if err != nil {
		return err
	}
	taken := make(map[string]bool)
	for _, e := range view.Entries {
		if e.Kind == logbook.KindPrompt && fromLogs(e.Key) {
			taken[e.Key] = true // ours already
		}
	}
	for _, i := range prompts {
		e := &entries[i]
		if taken[e.Key] {
			continue
		}
		best, bestGap := "", promptWindow+1
		for _, held := range view.Entries {
			gap := held.At.Sub(e.At).Abs()
			if held.Kind == logbook.KindPrompt && held.Text == e.Text && !taken[held.Key] && !fromLogs(held.Key) && gap < bestGap {
				best, bestGap = held.Key, gap
			}
		}
		if best != "" {
			e.Key, taken[best] = best, true
		}
	}
	return nil
}

// fromLogs reports whether an entry key is one eventEntries gives.
func fromLogs(key string) bool { return strings.HasPrefix(key, "otel:") }
