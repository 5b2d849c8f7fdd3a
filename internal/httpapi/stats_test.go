package httpapi_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/testdb"
)

// TestStatsDaysInAZone: days are UTC unless tz names a zone, and then the
// zone's (a session started at one instant falls on the date the zone
// gives it, fourteen hours ahead of UTC or eleven behind); a zone that is
// not one is a 400 naming tz; actor and model are groupings.
func TestStatsDaysInAZone(t *testing.T) {
	testdb.Each(t, func(t *testing.T, e testdb.Engine) {
		t.Parallel()
		c := newServer(t, e)
		alice := c.token("demo", "alice")
		r := c.do("POST", "/v1/sessions", alice, map[string]any{"project": "demo", "harness": "claude-code", "model": "opus"}).expect(t, 201)
		started, err := time.Parse(time.RFC3339Nano, r.body["started_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		for _, zone := range []string{"", "UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kolkata"} {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			got := c.do("GET", "/v1/stats?project=demo&by=day&tz="+url.QueryEscape(zone), alice, nil).expect(t, 200)
			groups := got.body["groups"].([]any)
			if want := started.In(loc).Format(time.DateOnly); len(groups) != 1 || groups[0].(map[string]any)["key"] != want {
				t.Errorf("tz=%q: groups %v, want one on %s", zone, groups, want)
			}
		}
		for _, bad := range []string{"Mars/Olympus", "Local", "../../etc/passwd", "+02:00"} {
			c.do("GET", "/v1/stats?project=demo&by=day&tz="+url.QueryEscape(bad), alice, nil).problem(t, 400, "tz")
		}
		for by, want := range map[string]string{"actor": "alice", "model": "opus", "harness": "claude-code"} {
			groups := c.do("GET", "/v1/stats?project=demo&by="+by, alice, nil).expect(t, 200).body["groups"].([]any)
			if len(groups) != 1 || groups[0].(map[string]any)["key"] != want {
				t.Errorf("by=%s: groups %v, want one keyed %s", by, groups, want)
			}
		}
		c.do("GET", "/v1/stats?project=demo&by=colour", alice, nil).problem(t, 400, "by")
	})
}
