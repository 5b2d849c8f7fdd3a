package service

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/testdb"
)

// TestCommitterStops: a write queued after the committer stopped is
// answered ErrShuttingDown (it never ran), not left waiting.
func TestCommitterStops(t *testing.T) {
	c := newCommitter(testdb.SQLite(t), func([]*logbook.Event) {})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.run(ctx) // returns at once: ctx is done
	c.drain(10 * time.Millisecond)
	ran := false
	err := c.do(context.Background(), func(*work) error { ran = true; return nil })
	if !errors.Is(err, ErrShuttingDown) || ran {
		t.Errorf("a write after the committer stopped: err %v, ran %v", err, ran)
	}
}
