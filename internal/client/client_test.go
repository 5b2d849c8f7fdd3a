package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/logbookhq/logbook/internal/client"
)

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(401)
			w.Write([]byte(`{"title":"Unauthorized","status":401,"detail":"this token is not known"}`))
			return
		}
		w.Write([]byte(`{"id":"s1"}`))
	}))
	defer srv.Close()

	var out struct{ ID string }
	status, err := client.New(srv.URL, "tok").Do(context.Background(), "POST", "/v1/sessions", map[string]string{"project": "p"}, &out)
	if err != nil || status != 200 || out.ID != "s1" {
		t.Fatalf("Do: %d %v %+v", status, err, out)
	}
	_, err = client.New(srv.URL, "bad").Do(context.Background(), "GET", "/v1/sessions", nil, nil)
	if !client.IsStatus(err, 401) || err.Error() != "logbook server: 401 Unauthorized: this token is not known" {
		t.Errorf("a problem answer: %v", err)
	}
	_, err = client.New("http://127.0.0.1:1", "tok").Do(context.Background(), "GET", "/healthz", nil, nil)
	if err == nil {
		t.Error("an unreachable server gave no error")
	}
}
