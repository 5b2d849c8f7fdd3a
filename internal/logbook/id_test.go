package logbook

import (
	"testing"
	"time"
)

// The search's windows of session ids on PostgreSQL rely on IDFloor
// sorting between the ids of one millisecond and the next.
func TestIDFloorSortsBetweenMilliseconds(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 30, 0, 123_000_000, time.UTC)
	floor := IDFloor(at)
	for range 100 {
		if id := NewID(at); id < floor {
			t.Fatalf("NewID(t) = %s sorts before IDFloor(t) = %s", id, floor)
		}
		if id := NewID(at.Add(-time.Millisecond)); id >= floor {
			t.Fatalf("NewID(t - 1ms) = %s sorts at or after IDFloor(t) = %s", id, floor)
		}
	}
	if got := IDFloor(time.Unix(0, 0).Add(-time.Hour)); got != "00000000-0000" {
		t.Fatalf("IDFloor before 1970 = %s, want the lowest id", got)
	}
}
