package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/logbookhq/logbook/internal/logbook"
)

// CodexNotification is what Codex CLI passes to its notify program, as one
// JSON argument, when an agent turn completes.
type CodexNotification struct {
	Type                 string
	ThreadID             string
	TurnID               string
	Cwd                  string
	InputMessages        []string
	LastAssistantMessage string
}

// ParseCodexNotification reads Codex's notify argument leniently: unknown
// fields are ignored, and a known field of an unexpected type reads as
// empty.
func ParseCodexNotification(arg string) (CodexNotification, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(arg), &raw); err != nil {
		return CodexNotification{}, fmt.Errorf("the Codex notification is not a JSON object (%v); Codex passes one as the last argument", err)
	}
	f := fields(raw)
	n := CodexNotification{
		Type: f.str("type"), ThreadID: f.str("thread-id"), TurnID: f.str("turn-id"),
		Cwd: f.str("cwd"), LastAssistantMessage: f.str("last-assistant-message"),
	}
	_ = json.Unmarshal(raw["input-messages"], &n.InputMessages)
	return n, nil
}

// CodexHook handles one event of Codex CLI's hooks (PreToolUse,
// PostToolUse, SessionStart, UserPromptSubmit, Stop), which Codex passes
// as JSON on stdin in Claude Code's shape: sessions are recorded the same
// way, under harness codex, and PreToolUse gets the project's decision as
// Codex can take it (see writeAnswer).
func (h *Hook) CodexHook(ctx context.Context, stdin io.Reader, stdout io.Writer) {
	h.event(ctx, HarnessCodex, stdin, stdout)
}

// Codex records one Codex notify call: an agent-turn-complete becomes the
// turn's input messages as prompts and its last assistant message, keyed
// by turn, in a session per Codex thread. Other notification types are
// ignored. Like Claude, it spools first and delivers within the deadline.
func (h *Hook) Codex(ctx context.Context, arg string) error {
	at := h.cfg.Now().UTC()
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Deadline)
	defer cancel()
	n, err := ParseCodexNotification(arg)
	if err != nil {
		return err
	}
	if n.Type != "agent-turn-complete" {
		return nil
	}
	if n.ThreadID == "" {
		return fmt.Errorf("the Codex notification has no thread-id; this Codex version cannot be recorded per thread")
	}
	g := gitLookup(ctx, n.Cwd)
	rec := Record{ID: newRecordID(), Event: "codex:" + n.Type, At: at, Session: SessionSpec{
		Project: projectName(h.cfg.Project, g), Harness: HarnessCodex, HarnessSessionID: n.ThreadID,
		Branch: g.Branch, HeadCommit: g.Head,
	}}
	// key identifies an entry of the turn; without a turn id, by its text.
	key := func(part, text string) string {
		if n.TurnID != "" {
			return n.TurnID + ":" + part
		}
		return stableKey("codex", n.ThreadID, part, text)
	}
	for i, msg := range n.InputMessages {
		if msg != "" {
			rec.Entries = append(rec.Entries, logbook.Entry{Kind: logbook.KindPrompt, Text: msg,
				Key: key("input:"+strconv.Itoa(i), msg), At: at})
		}
	}
	if n.LastAssistantMessage != "" {
		rec.Entries = append(rec.Entries, logbook.Entry{Kind: logbook.KindMessage, Role: logbook.RoleAssistant,
			Text: n.LastAssistantMessage, Key: key("assistant", n.LastAssistantMessage), At: at})
	}
	spool := h.spool()
	h.save(ctx, spool, []Record{rec})
	h.deliver(ctx, spool)
	return nil
}
