package service_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

func TestSessionModel(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Run("TasksFollowRotation", func(t *testing.T) { t.Parallel(); testTasksFollowRotation(t, setup(t, e)) })
		t.Run("AutomaticRotation", func(t *testing.T) { t.Parallel(); testAutomaticRotation(t, setup(t, e)) })
		t.Run("Notes", func(t *testing.T) { t.Parallel(); testNotes(t, setup(t, e)) })
		t.Run("Skills", func(t *testing.T) { t.Parallel(); testSkills(t, setup(t, e)) })
		t.Run("Delete", func(t *testing.T) { t.Parallel(); testDelete(t, setup(t, e)) })
	})
}

func testTasksFollowRotation(t *testing.T, b *bundle) {
	first, err := b.svc.AddTask(b.ctx, b.alice, "p", "engineer-1", service.TaskInput{TaskID: "T-1", Title: "Fix login", Text: "The login page 500s"})
	must(t, err)
	if !first.Added || first.Task.ActiveSessionID != first.Session.ID {
		t.Fatalf("first task: %+v", first)
	}
	v := b.get(t, first.Session.ID)
	turn := v.Entries[len(v.Entries)-1]
	if turn.Kind != logbook.KindMessage || turn.Role != "user" || turn.Text != "The login page 500s" || string(turn.Payload) != `{"task_id":"T-1","title":"Fix login"}` {
		t.Errorf("the task's turn: %+v", turn)
	}
	again, err := b.svc.AddTask(b.ctx, b.alice, "p", "engineer-1", service.TaskInput{TaskID: "T-1", Title: "Fix login", Text: "The login page 500s"})
	must(t, err)
	if again.Added || len(b.get(t, first.Session.ID).Entries) != len(v.Entries) {
		t.Errorf("the same task again added a turn")
	}
	changed, err := b.svc.AddTask(b.ctx, b.alice, "p", "engineer-1", service.TaskInput{TaskID: "T-1", Text: "Also the logout page"})
	must(t, err)
	if !changed.Added || changed.Session.ID != first.Session.ID {
		t.Errorf("a new text for the task: %+v", changed)
	}
	_, err = b.svc.AddTask(b.ctx, b.alice, "p", "engineer-1", service.TaskInput{TaskID: "T-2", Text: "Write docs"})
	must(t, err)

	b.clock.Add(time.Minute)
	r1, err := b.svc.RotateAgent(b.ctx, b.alice, "p", "engineer-1", "context full")
	must(t, err)
	b.clock.Add(time.Minute)
	r2, err := b.svc.RotateAgent(b.ctx, b.alice, "p", "engineer-1", "nightly")
	must(t, err)
	for _, id := range []string{"T-1", "T-2"} {
		task, err := b.svc.Task(b.ctx, b.alice, "p", id)
		must(t, err)
		want := []string{first.Session.ID, r1.Session.ID, r2.Session.ID}
		if task.ActiveSessionID != r2.Session.ID || !slices.Equal(task.Sessions, want) {
			t.Errorf("task %s after two rotations: active %s, history %v, want %v", id, task.ActiveSessionID, task.Sessions, want)
		}
	}
	agent, err := b.svc.Agent(b.ctx, b.alice, "p", "engineer-1")
	must(t, err)
	if agent.Session == nil || agent.Session.ID != r2.Session.ID || len(agent.Rotations) != 2 ||
		agent.Rotations[0].Reason != "context full" || agent.Rotations[0].FromSessionID != first.Session.ID || agent.Rotations[1].ToSessionID != r2.Session.ID {
		t.Errorf("agent view: %+v", agent)
	}
	tasks, err := b.svc.Tasks(b.ctx, b.alice, "p", "engineer-1")
	must(t, err)
	if len(tasks) != 2 {
		t.Errorf("tasks: %+v", tasks)
	}
	if _, err := b.svc.Task(b.ctx, b.alice, "p", "T-9"); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("an unknown task: %v", err)
	}
	if _, err := b.svc.AddTask(b.ctx, b.alice, "p", "engineer-1", service.TaskInput{Text: "x"}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a task without id: %v", err)
	}
}

func testAutomaticRotation(t *testing.T, b *bundle) {
	_, err := b.svc.SetRotationPolicy(b.ctx, b.alice, "p", "ceo", 24*time.Hour, 1000)
	must(t, err)
	s1, _, err := b.svc.EnsureAgentSession(b.ctx, b.alice, "p", "ceo")
	must(t, err)
	_, err = b.svc.AppendEntries(b.ctx, b.alice, s1.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Usage: &logbook.Usage{InputTokens: 1500}}}})
	must(t, err)
	s2, created, err := b.svc.EnsureAgentSession(b.ctx, b.alice, "p", "ceo")
	must(t, err)
	if !created || s2.ID == s1.ID {
		t.Fatalf("over the token limit, ensure did not rotate")
	}
	b.clock.Add(25 * time.Hour)
	res, err := b.svc.AddTask(b.ctx, b.alice, "p", "ceo", service.TaskInput{TaskID: "plan", Text: "Plan the week"})
	must(t, err)
	if res.Session.ID == s2.ID {
		t.Fatalf("past the age limit, a task did not rotate the session")
	}
	agent, err := b.svc.Agent(b.ctx, b.alice, "p", "ceo")
	must(t, err)
	var reasons []string
	for _, r := range agent.Rotations {
		reasons = append(reasons, r.Reason)
	}
	if !slices.Equal(reasons, []string{"tokens", "age"}) {
		t.Errorf("rotation reasons %v, want [tokens age]", reasons)
	}
	if v := b.get(t, s1.ID); v.Session.EndReason != "rotated: tokens" {
		t.Errorf("the first session ended with %q", v.Session.EndReason)
	}
}

func testNotes(t *testing.T, b *bundle) {
	attached := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Issue: str("12")}})
	named := b.start(t, b.bob, service.StartParams{Fields: logbook.SessionFields{Prompt: str("work on #12")}})
	ended := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Issue: str("12")}})
	_, err := b.svc.EndSession(b.ctx, b.alice, ended.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
	must(t, err)
	other := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Issue: str("13")}})
	onVM := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Subject: str("vm:101")}})

	res, err := b.svc.AddNote(b.ctx, b.bob, service.NoteParams{Issue: "12", Text: "Review: please add a test", Key: "review-1"})
	must(t, err)
	got := slices.Clone(res.Sessions)
	slices.Sort(got)
	want := []string{attached.ID, named.ID}
	slices.Sort(want)
	if res.Told != 2 || !slices.Equal(got, want) {
		t.Errorf("told %d sessions %v, want the two live ones on #12 %v", res.Told, got, want)
	}
	for _, id := range []string{ended.ID, other.ID} {
		if n := len(b.get(t, id).Entries); n != 0 {
			t.Errorf("session %s heard the note", id)
		}
	}
	last := b.get(t, attached.ID).Entries
	if len(last) != 1 || last[0].Kind != logbook.KindNote || last[0].Text != "Review: please add a test" {
		t.Errorf("the note as stored: %+v", last)
	}
	again, err := b.svc.AddNote(b.ctx, b.bob, service.NoteParams{Issue: "12", Text: "Review: please add a test", Key: "review-1"})
	must(t, err)
	if again.Told != 0 || again.Duplicates != 2 {
		t.Errorf("the same note again: %+v", again)
	}
	vm, err := b.svc.AddNote(b.ctx, b.alice, service.NoteParams{Subject: "vm:101", Text: "VM rebooted"})
	must(t, err)
	if vm.Told != 1 || vm.Sessions[0] != onVM.ID {
		t.Errorf("note by subject: %+v", vm)
	}
	if _, err := b.svc.AddNote(b.ctx, b.alice, service.NoteParams{Text: "to nobody"}); !errors.Is(err, logbook.ErrInvalid) {
		t.Errorf("a note without an address: %v", err)
	}
}

func testSkills(t *testing.T, b *bundle) {
	root := b.start(t, b.alice, service.StartParams{})
	child := b.start(t, b.alice, service.StartParams{ParentID: root.ID})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, root.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindSkill, Text: "pdf"}}})
	must(t, err)
	_, err = b.svc.AppendEntries(b.ctx, b.alice, child.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindSkill, Text: "xlsx"}, {Kind: logbook.KindSkill, Text: "pdf"}}})
	must(t, err)
	if skills := b.get(t, root.ID).Skills; !slices.Equal(skills, []string{"pdf", "xlsx"}) {
		t.Errorf("skills of the tree: %v", skills)
	}
}

func testDelete(t *testing.T, b *bundle) {
	keep := b.start(t, b.alice, service.StartParams{})
	_, err := b.svc.AppendEntries(b.ctx, b.alice, keep.ID, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote}}})
	must(t, err)
	before := tableCounts(t, b)

	root := b.start(t, b.alice, service.StartParams{Fields: logbook.SessionFields{Issue: str("5")}})
	child := b.start(t, b.alice, service.StartParams{ParentID: root.ID})
	grandchild := b.start(t, b.alice, service.StartParams{ParentID: child.ID})
	for _, id := range []string{root.ID, child.ID, grandchild.ID} {
		_, err := b.svc.AppendEntries(b.ctx, b.alice, id, service.Batch{
			Entries: []logbook.Entry{{Kind: logbook.KindPrompt, Text: "see #5"}}, Touched: []logbook.Touch{{Value: "a/" + id}}})
		must(t, err)
		_, err = b.svc.SetPlan(b.ctx, b.alice, id, []service.StepInput{{Text: "x"}})
		must(t, err)
		_, err = b.claim(id, "claim/"+id)
		must(t, err)
	}
	if _, err := b.svc.DeleteSession(b.ctx, b.alice, child.ID, false); !errors.Is(err, logbook.ErrConflict) {
		t.Errorf("deleting a subagent alone while its parent lives: %v", err)
	}
	if _, err := b.svc.DeleteSession(b.ctx, b.bob, root.ID, false); !errors.Is(err, logbook.ErrForbidden) {
		t.Errorf("bob deleting alice's session: %v", err)
	}
	res, err := b.svc.DeleteSession(b.ctx, b.alice, root.ID, false)
	must(t, err)
	if res.Deleted["sessions"] != 3 || res.Deleted["entries"] != 3 || res.Deleted["claims"] != 3 {
		t.Errorf("deleted: %+v", res.Deleted)
	}
	after := tableCounts(t, b)
	for table, n := range before {
		if table != "events" && after[table] != n {
			t.Errorf("%s: %d rows before, %d after deleting the tree", table, n, after[table])
		}
	}
	var leftEvents int
	must(t, rawDB(b.st).QueryRow(`SELECT COUNT(*) FROM events WHERE session_id IN ($1, $2, $3)`, root.ID, child.ID, grandchild.ID).Scan(&leftEvents))
	if leftEvents != 0 {
		t.Errorf("%d events still name the deleted sessions", leftEvents)
	}
	page, err := b.svc.ListSessions(b.ctx, b.alice, service.ListParams{Filter: logbook.SessionFilter{Subagents: true}})
	must(t, err)
	if len(page.Sessions) != 1 || page.Sessions[0].ID != keep.ID {
		t.Errorf("the list after deletion: %d sessions", len(page.Sessions))
	}
	if _, err := b.svc.DeleteSession(b.ctx, b.alice, root.ID, false); !errors.Is(err, logbook.ErrNotFound) {
		t.Errorf("deleting again: %v", err)
	}
	lone := b.start(t, b.alice, service.StartParams{ParentID: keep.ID})
	if _, err := b.svc.DeleteSession(b.ctx, service.Caller{Actor: "admin", Admin: true}, lone.ID, true); err != nil {
		t.Errorf("the admin force-deleting a subagent: %v", err)
	}
}

func tableCounts(t *testing.T, b *bundle) map[string]int64 {
	counts := map[string]int64{}
	for _, table := range []string{"sessions", "entries", "plan_steps", "claims", "touches", "links", "events", "task_sessions"} {
		var n int64
		must(t, rawDB(b.st).QueryRow(`SELECT COUNT(*) FROM `+table).Scan(&n))
		counts[table] = n
	}
	return counts
}
