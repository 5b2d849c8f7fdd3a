package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// listen holds a connection that LISTENs on NotifyChannel and calls wake
// for every notification, reconnecting after a failure, until ctx ends.
// Notifications only wake followers: they read the outbox for the events
// themselves, so a notification lost while reconnecting loses nothing (the
// follower's periodic read catches up).
func listen(ctx context.Context, cfg *pgx.ConnConfig, wake func()) error {
	for ctx.Err() == nil {
		err := listenOnce(ctx, cfg, wake)
		if ctx.Err() != nil {
			return nil
		}
		slog.WarnContext(ctx, "event listener lost its connection; reconnecting", "err", err)
		wake() // something may have been committed while we were away
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

func listenOnce(ctx context.Context, cfg *pgx.ConnConfig, wake func()) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("error connecting the listener: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return fmt.Errorf("error listening: %w", err)
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		wake()
	}
}
