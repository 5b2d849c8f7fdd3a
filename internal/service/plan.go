package service

import (
	"context"
	"fmt"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// SetPlan replaces a session's plan with steps numbered from 1 (a step
// without a status is pending). It is a heartbeat.
func (s *Service) SetPlan(ctx context.Context, c Caller, id string, input []StepInput) ([]logbook.PlanStep, error) {
	if len(input) > logbook.MaxPlanSteps {
		return nil, logbook.Invalid("steps", "a plan holds at most %d steps, this one has %d", logbook.MaxPlanSteps, len(input))
	}
	now := s.now()
	steps := make([]logbook.PlanStep, len(input))
	for i, in := range input {
		field := fmt.Sprintf("steps[%d]", i)
		if in.Status == "" {
			in.Status = logbook.StepPending
		}
		if !in.Status.Valid() {
			return nil, logbook.Invalid(field+".status", "%q is not a step status; use pending, running, done, skipped or failed", in.Status)
		}
		text := logbook.Clip(in.Text, logbook.MaxLongText)
		if text == "" {
			return nil, logbook.Invalid(field+".text", "a step needs text saying what it does")
		}
		steps[i] = logbook.PlanStep{N: i + 1, Text: text, Status: in.Status, UpdatedAt: now}
	}
	_, err := s.writeHeartbeat(ctx, c, id, func(tx *work, _ *logbook.Session, _ time.Time) error {
		return tx.PlanReplace(ctx, id, steps)
	})
	if err != nil {
		return nil, err
	}
	return steps, nil
}

// UpdatePlanStep sets the status of step n of a session's plan. It is a heartbeat.
func (s *Service) UpdatePlanStep(ctx context.Context, c Caller, id string, n int, status logbook.StepStatus) ([]logbook.PlanStep, error) {
	if !status.Valid() {
		return nil, logbook.Invalid("status", "%q is not a step status; use pending, running, done, skipped or failed", status)
	}
	var plan []logbook.PlanStep
	_, err := s.writeHeartbeat(ctx, c, id, func(tx *work, _ *logbook.Session, now time.Time) error {
		if err := tx.PlanStepUpdate(ctx, id, n, status, now); err != nil {
			return fmt.Errorf("session %s has no plan step %d: %w", id, n, err)
		}
		var err error
		plan, err = tx.PlanList(ctx, id)
		return err
	})
	return plan, err
}
