package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Output is Claude Code's hook output for the events that can add to the
// model's context (SessionStart, UserPromptSubmit, PostToolUse):
// SystemMessage is shown to the user, AdditionalContext is given to the
// model.
type Output struct {
	SystemMessage      string             `json:"systemMessage,omitempty"`
	HookSpecificOutput *ContextOutputPart `json:"hookSpecificOutput,omitempty"`
}

// ContextOutputPart is the event's part of an Output.
type ContextOutputPart struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// contextEvents are the events whose output Claude Code, and Codex CLI's
// hooks in the same shape, add to the model's context.
var contextEvents = map[string]bool{EventSessionStart: true, EventUserPromptSubmit: true, EventPostToolUse: true}

// hookOutput gathers what one hook call tells the user and the model.
type hookOutput struct {
	user  []string // for systemMessage
	model []string // for additionalContext
}

func (o *hookOutput) empty() bool { return len(o.user) == 0 && len(o.model) == 0 }

// write prints o as the event's output, or nothing when o is empty (the
// hook's stdout stays silent unless there is something to say).
func (o *hookOutput) write(w io.Writer, h *Hook, event string) {
	if o.empty() || !contextEvents[event] {
		return
	}
	out := Output{SystemMessage: strings.Join(o.user, "\n\n")}
	if len(o.model) > 0 {
		out.HookSpecificOutput = &ContextOutputPart{HookEventName: event, AdditionalContext: strings.Join(o.model, "\n\n")}
	}
	raw, err := json.Marshal(out)
	if err == nil {
		_, err = fmt.Fprintf(w, "%s\n", raw)
	}
	if err != nil {
		h.report("cannot write the %s output: %v", event, err)
	}
}

// tellSetAside adds to o what was set aside since the user was last told,
// at a session's start: a line on stderr is hidden by Claude Code, so a
// record refused for a reason the user must fix (a token for another
// project, an empty actor…) would be lost without anyone knowing.
func (h *Hook) tellSetAside(o *hookOutput, spool *Spool, project string) {
	if spool == nil {
		return
	}
	a, err := spool.unreported()
	if err != nil {
		h.report("%v", err)
	}
	if a.Empty() {
		return
	}
	where := fmt.Sprintf("This machine's logbook hook reports to project %q at %s.", project, h.cfg.URL)
	if project == "" {
		where = fmt.Sprintf("This machine's logbook hook reports to %s, to the project of its token (no LOGBOOK_PROJECT, no git folder).", h.cfg.URL)
	}
	summary := a.Summary(spool.Dir())
	o.user = append(o.user, "logbook: "+summary+"\n"+where+" Run `logbook hook status` to see them all.")
	o.model = append(o.model, "The logbook session recorder could not record part of earlier sessions; tell the user before anything else, "+
		"because only they can fix it:\n"+summary+"\n"+where+" `logbook hook status` shows the records and why each was refused.")
}

// InboxEvery is how often at most PostToolUse asks the server for the
// session's messages: an agent at work calls tools several times a second,
// and asking costs a request each time (about a millisecond of the hook's
// CPU). SessionStart and UserPromptSubmit always ask.
const InboxEvery = 3 * time.Second

// giveMessages adds to o the messages waiting for the session: other
// agents' messages reach a live Claude Code session at its next hook call
// that can add to the model's context, without the agent asking. The
// server records each in the session's transcript and delivers it once,
// so a message given here is never given again. It asks only once the
// spool's records reached the server, which then knows the session, and
// on PostToolUse at most every InboxEvery.
func (h *Hook) giveMessages(ctx context.Context, o *hookOutput, spool *Spool, spec SessionSpec, event string) {
	if spool == nil {
		return
	}
	id := spool.knownID(spec)
	if id == "" {
		return
	}
	asked := filepath.Join("inbox", stableKey("inbox", id)[len("inbox:"):])
	now := h.cfg.Now()
	var last time.Time
	if event == EventPostToolUse && spool.readCache(asked, &last) && now.Sub(last) >= 0 && now.Sub(last) < InboxEvery {
		return
	}
	_ = spool.writeCache(asked, now) // lost, it only makes the next call ask too
	msgs, err := h.api.Ledger().ReadInbox(ctx, id)
	if err != nil {
		h.report("cannot read the session's messages: %v", err)
		return
	}
	if len(msgs) == 0 {
		return
	}
	from := map[string]bool{}
	var senders []string
	for _, m := range msgs {
		if !from[m.From.Actor] {
			from[m.From.Actor] = true
			senders = append(senders, m.From.Actor)
		}
	}
	o.user = append(o.user, fmt.Sprintf("logbook: %d %s for this session from %s, given to the agent.",
		len(msgs), plural(len(msgs), "message", "messages"), strings.Join(senders, ", ")))
	o.model = append(o.model, logbook.MessagesContext(msgs))
}
