package hook

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"time"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Claude handles one Claude Code hook invocation: the event's JSON on
// stdin; on stdout nothing, or for PreToolUse the permission answer. It
// never fails: the caller exits 0 whatever happens (see the package doc).
//
// Every event but PreToolUse is written to the spool, then the spool is
// delivered within the configured deadline. PreToolUse answers first,
// from in-process classification, and only appends its record, so its
// answer never waits on delivery. The PostToolUse of an allowed call
// delivers it; for a call denied (no PostToolUse follows) or asked about
// (one follows once a person answers), a process of its own delivers it
// at once (see Config.FlushCommand).
//
// SessionStart also tells the user (and the model, which can say it) what
// the server refused since the last time they were told (see
// Hook.tellSetAside).
func (h *Hook) Claude(ctx context.Context, stdin io.Reader, stdout io.Writer) {
	h.event(ctx, HarnessClaude, stdin, stdout)
}

// event handles one hook event of a harness whose hooks speak Claude
// Code's protocol (Claude Code itself, and Codex CLI's hooks).
func (h *Hook) event(ctx context.Context, harness string, stdin io.Reader, stdout io.Writer) {
	defer func() {
		if r := recover(); r != nil {
			h.report("internal error, the event was not recorded: %v", r)
		}
	}()
	at := h.cfg.Now().UTC()
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Deadline)
	defer cancel()

	data, err := io.ReadAll(io.LimitReader(stdin, maxPayloadBytes))
	if err != nil {
		h.report("cannot read the hook payload on stdin: %v", err)
		return
	}
	p, err := ParsePayload(data)
	if err != nil {
		h.report("%v", err)
		return
	}
	g := gitLookup(ctx, p.Cwd)
	m := claudeMapper{at: at, harness: harness, project: projectName(h.cfg.Project, g), git: g}
	recs := m.records(p)
	spool := h.spool()

	if p.Event == EventPreToolUse {
		d := h.decide(ctx, spool, p, m)
		if d != nil {
			writeAnswer(stdout, h, harness, d)
			if len(recs) > 0 {
				recs[0].Entries = append(recs[0].Entries, d.note(p, at))
			}
		}
		h.save(ctx, spool, recs)
		if d != nil && (d.Decision == classify.Deny || d.Decision == classify.Ask) {
			h.flushLater(spool) // no PostToolUse follows (deny), or not soon (ask)
		}
		return
	}
	if spool != nil && p.AgentID == "" {
		h.trackTurn(spool, p, recs)
	}
	h.save(ctx, spool, recs)
	rep := h.deliver(ctx, spool)
	if p.AgentID != "" {
		return // a subagent's events speak for its parent's session
	}
	var out hookOutput
	if p.Event == EventSessionStart {
		h.tellSetAside(&out, spool, m.project)
		if err := exportSession(h.cfg.EnvFile, harness, p.SessionID); err != nil {
			h.report("%v", err)
		}
	}
	if rep.Err == nil && contextEvents[p.Event] {
		h.giveMessages(ctx, &out, spool, m.mainSpec(p), p.Event)
	}
	out.write(stdout, h, p.Event)
}

// turnFailure is what the last StopFailure of a session said, kept in the
// spool folder until the next turn starts or the session ends.
type turnFailure struct {
	Blocker logbook.Blocker `json:"blocker"`
	Error   string          `json:"error"`
}

func turnCacheName(sessionID string) string {
	return filepath.Join("turns", stableKey("turn", sessionID)[len("turn:"):])
}

// trackTurn remembers whether the session's last turn failed, so that
// SessionEnd ends a session whose last turn failed as failed, with the
// failure's blocker, and any other as a success. A turn that failed and
// was followed by another turn does not make the session a failure.
func (h *Hook) trackTurn(spool *Spool, p Payload, recs []Record) {
	name := turnCacheName(p.SessionID)
	switch p.Event {
	case EventStopFailure:
		msg := firstNonEmpty(p.ErrorMessage, p.Error, p.LastAssistantMessage)
		if err := spool.writeCache(name, turnFailure{Blocker: blockerFor(p.ErrorType, p.Error), Error: msg}); err != nil {
			h.report("cannot note the failed turn: %v", err)
		}
	case EventUserPromptSubmit, EventStop:
		spool.removeCache(name)
	case EventSessionEnd:
		var f turnFailure
		if spool.readCache(name, &f) && len(recs) > 0 && recs[0].End != nil {
			recs[0].End.Outcome = logbook.OutcomeFailed
			recs[0].End.Blocker = f.Blocker
			recs[0].End.Result = logbook.Clip("last turn failed: "+f.Error, logbook.MaxLongText)
		}
		spool.removeCache(name)
	}
}

// claudeMapper turns Claude Code events into records.
type claudeMapper struct {
	at      time.Time
	harness string // HarnessClaude, or HarnessCodex for Codex's hooks
	project string
	git     GitInfo
}

// mainSpec is the harness's session itself.
func (m claudeMapper) mainSpec(p Payload) SessionSpec {
	return SessionSpec{
		Project: m.project, Harness: m.harness, HarnessSessionID: p.SessionID,
		Branch: m.git.Branch, HeadCommit: m.git.Head,
	}
}

// spec is the session an event belongs to: a subagent's own session under
// the main one when the event carries an agent_id, else the main session.
func (m claudeMapper) spec(p Payload) SessionSpec {
	main := m.mainSpec(p)
	if p.AgentID == "" {
		if p.Event == EventSessionStart {
			main.Model = p.Model
		}
		return main
	}
	return SessionSpec{
		Project: m.project, Harness: m.harness,
		HarnessSessionID: p.SessionID + "/agent-" + p.AgentID, // as the importer names it
		AgentType:        p.AgentType, Parent: &main,
	}
}

// records maps one event to what the server should store. Unknown events
// map to nothing.
func (m claudeMapper) records(p Payload) []Record {
	rec := Record{ID: newRecordID(), Event: p.Event, At: m.at, Session: m.spec(p)}
	// keyed derives the key of an event's entry from what identifies it:
	// the session, the subagent, the text and where in the transcript it
	// happened.
	keyed := func(prefix, text string) string {
		return stableKey(prefix, p.SessionID, p.AgentID, text, transcriptMarker(p.TranscriptPath))
	}
	entry := func(kind logbook.Kind, text, key string) logbook.Entry {
		return logbook.Entry{Kind: kind, Text: text, Key: key, At: m.at}
	}
	switch p.Event {
	case EventSessionStart, EventSubagentStart:
		// The record starts (or refreshes) the session; nothing to append.
	case EventUserPromptSubmit:
		if p.Prompt != "" {
			rec.Entries = append(rec.Entries, entry(logbook.KindPrompt, p.Prompt, keyed("prompt", p.Prompt)))
		}
	case EventPreToolUse:
		rec.Entries = append(rec.Entries, m.toolCall(p))
	case EventPostToolUse:
		result := m.toolResult(p, responseText(p.ToolResponse), p.ToolResponse)
		result.Commit = m.commitMade(p, result.Text)
		rec.Entries = append(rec.Entries, m.toolCall(p), result)
		if path := p.EditedPath(); path != "" {
			rec.Touched = append(rec.Touched, Touch{Kind: "file", Value: repoPath(path, p.Cwd, m.git)})
		}
	case EventPostToolUseFailure:
		payload, _ := json.Marshal(map[string]any{"error": p.Error, "is_interrupt": p.IsInterrupt})
		rec.Entries = append(rec.Entries, m.toolCall(p), m.toolResult(p, p.Error, payload))
	case EventSubagentStop:
		if p.LastAssistantMessage != "" {
			e := entry(logbook.KindMessage, p.LastAssistantMessage, keyed("assistant", p.LastAssistantMessage))
			e.Role = logbook.RoleAssistant
			rec.Entries = append(rec.Entries, e)
		}
		if p.AgentID != "" {
			rec.End = &End{Outcome: logbook.OutcomeSuccess, Reason: "subagent stopped"}
		}
	case EventStop:
		if p.LastAssistantMessage != "" {
			e := entry(logbook.KindMessage, p.LastAssistantMessage, keyed("assistant", p.LastAssistantMessage))
			e.Role = logbook.RoleAssistant
			rec.Entries = append(rec.Entries, e)
		}
	case EventPreCompact:
		e := entry(logbook.KindCompaction, p.CustomInstructions, keyed("precompact", p.Trigger+"\x00"+p.CustomInstructions))
		e.Payload, _ = json.Marshal(map[string]string{"trigger": p.Trigger})
		rec.Entries = append(rec.Entries, e)
	case EventPostCompact:
		if p.CompactSummary != "" {
			rec.Entries = append(rec.Entries, entry(logbook.KindSummary, p.CompactSummary, keyed("summary", p.CompactSummary)))
		}
	case EventNotification:
		if p.Message != "" {
			e := entry(logbook.KindNote, p.Message, keyed("notification", p.Message))
			if p.NotificationType != "" {
				e.Payload, _ = json.Marshal(map[string]string{"notification_type": p.NotificationType})
			}
			rec.Entries = append(rec.Entries, e)
		}
	case EventStopFailure:
		text := "turn failed: " + firstNonEmpty(p.ErrorType, p.Error, "unknown error")
		if msg := firstNonEmpty(p.ErrorMessage, p.LastAssistantMessage); msg != "" {
			text += ": " + msg
		}
		e := entry(logbook.KindNote, text, keyed("stopfailure", text))
		e.Payload, _ = json.Marshal(map[string]string{
			"error_type": p.ErrorType, "error": p.Error, "error_message": p.ErrorMessage,
			"blocker": string(blockerFor(p.ErrorType, p.Error)),
		})
		rec.Entries = append(rec.Entries, e)
	case EventSessionEnd:
		rec.End = &End{Outcome: logbook.OutcomeSuccess, Reason: p.Reason}
	default:
		return nil
	}
	return []Record{rec}
}

// toolCallID is the tool_use_id, or for Claude Code versions that send
// none, an id derived from the tool and its input, which PreToolUse and
// PostToolUse of one call share.
func toolCallID(p Payload) string {
	if p.ToolUseID != "" {
		return p.ToolUseID
	}
	return stableKey("tool", p.SessionID, p.AgentID, p.ToolName, compactJSON(p.ToolInput))
}

func (m claudeMapper) toolCall(p Payload) logbook.Entry {
	id := toolCallID(p)
	return logbook.Entry{Kind: logbook.KindToolCall, Tool: p.ToolName, ToolCallID: id,
		Payload: p.ToolInput, Key: id + ":call", At: m.at}
}

func (m claudeMapper) toolResult(p Payload, text string, payload json.RawMessage) logbook.Entry {
	id := toolCallID(p)
	return logbook.Entry{Kind: logbook.KindToolResult, Tool: p.ToolName, ToolCallID: id,
		Text: text, Payload: payload, Key: id + ":result", At: m.at}
}

// commitMade is the commit a tool call made when it ran git commit
// (read from the summary line git printed, as the importers read it), so
// that `logbook why` finds a commit made in the middle of a session, not
// only the session's last head commit. The short sha git printed becomes
// the full one when it abbreviates the work tree's HEAD, which it does
// right after the commit.
func (m claudeMapper) commitMade(p Payload, output string) string {
	if !logbook.RunsGitCommit(p.ToolInput) {
		return ""
	}
	return logbook.FullCommit(logbook.CommitInOutput(output), m.git.Head)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
