package sse

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSlowReaderIsCutOff: a follower that stops reading is dropped once a
// write waits past the deadline, instead of holding the server's memory
// and goroutine. The deadline is shortened here; the server's is 10 s.
func TestSlowReaderIsCutOff(t *testing.T) {
	ended := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := Open(w)
		s.deadline = 200 * time.Millisecond
		chunk := strings.Repeat("x", 64<<10)
		for {
			if err := s.Send("data: %s\n\n", chunk); err != nil {
				ended <- err
				return
			}
		}
	}))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: logbook\r\n\r\n") // then never read
	select {
	case err := <-ended:
		if err == nil {
			t.Error("the stream ended without an error")
		}
	case <-time.After(time.Minute): // a watchdog, not a measure: the cut comes within a second or so
		t.Fatal("a follower that never reads was still being written to after a minute")
	}
}
