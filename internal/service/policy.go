package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/logbookhq/logbook/internal/classify"
	"github.com/logbookhq/logbook/internal/logbook"
)

// Policy returns the project's command policy as it was set: the
// decisions it chose and its rules. Classes it did not name take the
// default decision (classify.DefaultDecision); Effective fills them in.
func (s *Service) Policy(ctx context.Context, c Caller, project string) (classify.Policy, error) {
	project, err := c.projectFor(project)
	if err != nil {
		return classify.Policy{}, err
	}
	raw, err := s.store.ProjectPolicyGet(ctx, project)
	if err != nil && !isNotFound(err) {
		return classify.Policy{}, err
	}
	if raw == "" {
		return classify.Policy{}, nil
	}
	p, err := classify.ParsePolicy([]byte(raw))
	if err != nil {
		return classify.Policy{}, fmt.Errorf("the stored policy of project %s cannot be read: %w", project, err)
	}
	return p, nil
}

// SetPolicy replaces a project's command policy. Only the admin may.
// Classes it does not name take the default decision, now and after a
// later change of the defaults: only what it names is stored.
func (s *Service) SetPolicy(ctx context.Context, c Caller, project string, raw json.RawMessage) (classify.Policy, error) {
	if !c.Admin {
		return classify.Policy{}, fmt.Errorf("only the admin token sets a project's policy: %w", logbook.ErrForbidden)
	}
	project, err := logbook.Name("project", project, logbook.MaxID)
	if err != nil {
		return classify.Policy{}, err
	}
	if project == "" {
		return classify.Policy{}, logbook.Invalid("project", "name the project")
	}
	p, err := classify.ParsePolicy(raw)
	if err != nil {
		return classify.Policy{}, logbook.Invalid("policy", "%v", err)
	}
	stored, _ := json.Marshal(p)
	err = s.inTx(ctx, func(tx *work) error {
		if err := tx.ProjectEnsure(ctx, project, s.now()); err != nil {
			return err
		}
		return tx.ProjectPolicySet(ctx, project, string(stored))
	})
	return p, err
}

// Classify says how risky a shell command is and what the project's policy
// decides for it: the same verdict the CLI, the MCP tool and the Claude Code
// hook give.
func (s *Service) Classify(ctx context.Context, c Caller, project, command string) (classify.Verdict, error) {
	p, err := s.Policy(ctx, c, project)
	if err != nil {
		return classify.Verdict{}, err
	}
	return classify.Classify(command, p), nil
}
