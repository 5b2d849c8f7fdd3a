package cli

import "testing"

// TestListenAddr: logbook serve listens on loopback unless told otherwise,
// by --addr or LOGBOOK_ADDR.
func TestListenAddr(t *testing.T) {
	for _, tc := range []struct {
		name, flag, env, want string
	}{
		{"default", "", "", "127.0.0.1:7474"},
		{"env", "", "0.0.0.0:80", "0.0.0.0:80"},
		{"flag over env", "127.0.0.1:9000", "0.0.0.0:80", "127.0.0.1:9000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := Env{Getenv: func(k string) string {
				if k == "LOGBOOK_ADDR" {
					return tc.env
				}
				return ""
			}}
			if got := listenAddr(env, tc.flag); got != tc.want {
				t.Errorf("listenAddr(%q) with LOGBOOK_ADDR=%q = %q, want %q", tc.flag, tc.env, got, tc.want)
			}
		})
	}
}
