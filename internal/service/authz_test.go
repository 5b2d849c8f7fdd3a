package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestWhoWritesWhat holds the rules of who may write what beyond a
// session's own routes, on both engines: an agent's rotation policy is its
// current session owner's while that session goes on; a note records who
// sent it and the admin sends none; a session named with a project must be
// that project's.
func TestWhoWritesWhat(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		ctx := context.Background()
		svc := service.New(e.Open(t), service.Options{})
		if _, err := svc.EnsureAdminToken(ctx, "admin-token"); err != nil {
			t.Fatal(err)
		}
		caller := func(project, actor string) service.Caller {
			t.Helper()
			admin, err := svc.Authenticate(ctx, "admin-token")
			must(t, err)
			if actor == "admin" {
				return admin
			}
			token, err := svc.CreateToken(ctx, admin, project, actor)
			must(t, err)
			c, err := svc.Authenticate(ctx, token)
			must(t, err)
			return c
		}
		alice, bob, carol, admin := caller("p", "alice"), caller("p", "bob"), caller("q", "carol"), caller("", "admin")

		t.Run("RotationPolicy", func(t *testing.T) {
			sess, _, err := svc.EnsureAgentSession(ctx, alice, "p", "eng")
			must(t, err)
			for _, c := range []service.Caller{bob, admin} {
				if _, err := svc.SetRotationPolicy(ctx, c, "p", "eng", time.Second, 0); !errors.Is(err, logbook.ErrForbidden) {
					t.Errorf("%s set the rotation policy of alice's agent session: %v, want ErrForbidden", c.Actor, err)
				}
			}
			view, err := svc.Agent(ctx, alice, "p", "eng")
			must(t, err)
			if view.Agent.Policy != (logbook.RotationPolicy{}) || view.Session.ID != sess.ID || view.Session.State == logbook.StateEnded {
				t.Errorf("after the refused policies: %+v, session %+v", view.Agent.Policy, view.Session)
			}
			if _, err := svc.SetRotationPolicy(ctx, alice, "p", "eng", time.Hour, 0); err != nil {
				t.Errorf("the owner setting the policy: %v", err)
			}
			// Once the session has ended, the agent is the project's again.
			_, err = svc.EndSession(ctx, alice, sess.ID, service.EndParams{Outcome: logbook.OutcomeSuccess})
			must(t, err)
			a, err := svc.SetRotationPolicy(ctx, bob, "p", "eng", 2*time.Hour, 0)
			if err != nil || a.Policy.MaxAgeSeconds != 7200 {
				t.Errorf("bob setting the policy of an agent with no session going on: %+v, %v", a.Policy, err)
			}
		})

		t.Run("Notes", func(t *testing.T) {
			sess, _, err := svc.StartSession(ctx, alice, service.StartParams{Project: "p", Harness: "h", Fields: logbook.SessionFields{Subject: str("vm:101")}})
			must(t, err)
			if _, err := svc.AddNote(ctx, admin, service.NoteParams{Project: "p", Subject: "vm:101", Text: "from the admin"}); !errors.Is(err, logbook.ErrForbidden) {
				t.Errorf("the admin's note: %v, want ErrForbidden", err)
			}
			res, err := svc.AddNote(ctx, bob, service.NoteParams{Project: "p", Subject: "vm:101", Text: "vm:101 reboots at noon"})
			if err != nil || res.Told != 1 {
				t.Fatalf("bob's note: %+v, %v", res, err)
			}
			_, err = svc.AppendEntries(ctx, alice, sess.ID, service.Batch{Entries: []logbook.Entry{
				{Kind: logbook.KindNote, Text: "signed bob", Author: &logbook.Author{Actor: "bob"}}}})
			var invalid *logbook.ValidationError
			if !errors.As(err, &invalid) || invalid.Field != "entries[0].author" {
				t.Errorf("an entry with an author of its sender's choosing: %v, want a validation error on entries[0].author", err)
			}
			v, err := svc.GetSession(ctx, alice, sess.ID, service.GetParams{})
			must(t, err)
			if len(v.Entries) != 1 {
				t.Fatalf("the session holds %d entries, want bob's note only", len(v.Entries))
			}
			if got := v.Entries[0].Author; got == nil || *got != (logbook.Author{Actor: "bob", TokenID: bob.TokenID}) || bob.TokenID == "" {
				t.Errorf("the note's author is %+v, want bob and his token's id %q", got, bob.TokenID)
			}
		})

		t.Run("AdminIsNoProjectActor", func(t *testing.T) {
			// A project actor named admin would own the admin token's
			// sessions (and the admin its): no such token is made.
			_, err := svc.CreateToken(ctx, admin, "p", "admin")
			var invalid *logbook.ValidationError
			if !errors.As(err, &invalid) || invalid.Field != "actor" {
				t.Errorf("a token for actor admin in a project: %v, want a validation error on actor", err)
			}
		})

		t.Run("SessionOfAnotherProject", func(t *testing.T) {
			sess, _, err := svc.StartSession(ctx, alice, service.StartParams{Project: "p", Harness: "h"})
			must(t, err)
			for _, tc := range []struct {
				c       service.Caller
				project string
				want    error
			}{{carol, "q", logbook.ErrNotFound}, {alice, "q", logbook.ErrForbidden}, {admin, "q", logbook.ErrNotFound}} {
				if _, err := svc.ToolCalls(ctx, tc.c, service.ToolCallParams{Project: tc.project, SessionID: sess.ID}); !errors.Is(err, tc.want) {
					t.Errorf("%s's tool calls of project %s, session of p: %v, want %v", tc.c.Actor, tc.project, err, tc.want)
				}
				if _, err := svc.Claims(ctx, tc.c, service.ClaimsParams{Project: tc.project, SessionID: sess.ID}); !errors.Is(err, tc.want) {
					t.Errorf("%s's claims of project %s, session of p: %v, want %v", tc.c.Actor, tc.project, err, tc.want)
				}
			}
			if _, err := svc.ToolCalls(ctx, bob, service.ToolCallParams{Project: "p", SessionID: sess.ID}); err != nil {
				t.Errorf("tool calls of the project's own session: %v", err)
			}
		})
	})
}
