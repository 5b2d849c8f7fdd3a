package service

import (
	"context"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// Messages go through the redacting boundary as every value does: a
// message's text is free text, its addresses are identifiers.

func (r redacting) MessageInsert(ctx context.Context, m *logbook.Message) error {
	if err := r.c.clean(ctx, &m); err != nil {
		return err
	}
	return r.ex.MessageInsert(ctx, m)
}

func (r redacting) MessageGet(ctx context.Context, id string) (logbook.Message, error) {
	if err := r.c.clean(ctx, &id); err != nil {
		return logbook.Message{}, err
	}
	return r.ex.MessageGet(ctx, id)
}

func (r redacting) MessageList(ctx context.Context, p store.MessageListParams) ([]logbook.Message, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.MessageList(ctx, p)
}

func (r redacting) MessageMark(ctx context.Context, id string, mark logbook.MessageMark, at time.Time) (logbook.Message, error) {
	if err := r.c.clean(ctx, &id); err != nil {
		return logbook.Message{}, err
	}
	return r.ex.MessageMark(ctx, id, mark, at)
}

func (r redacting) MessageDeliver(ctx context.Context, p store.MessageDeliverParams) ([]logbook.Message, error) {
	if err := r.c.clean(ctx, &p); err != nil {
		return nil, err
	}
	return r.ex.MessageDeliver(ctx, p)
}

func (r redacting) MessagePrune(ctx context.Context, project string, before time.Time, limit int) (int64, error) {
	if err := r.c.clean(ctx, &project); err != nil {
		return 0, err
	}
	return r.ex.MessagePrune(ctx, project, before, limit)
}
