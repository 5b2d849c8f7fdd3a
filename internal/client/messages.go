package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
)

func (l httpLedger) SendMessage(ctx context.Context, p ledger.SendParams) (logbook.Message, error) {
	var m logbook.Message
	_, err := l.call(ctx, http.MethodPost, "/v1/messages", p, &m)
	return m, err
}

func (l httpLedger) Messages(ctx context.Context, p ledger.MessagesParams) ([]logbook.Message, error) {
	var res ledger.MessagesAnswer
	_, err := l.call(ctx, http.MethodGet, withQuery("/v1/messages", p.Values()), nil, &res)
	return res.Messages, err
}

func (l httpLedger) ReadInbox(ctx context.Context, sessionID string) ([]logbook.Message, error) {
	var res ledger.MessagesAnswer
	_, err := l.call(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(sessionID)+"/inbox", nil, &res)
	return res.Messages, err
}

func (l httpLedger) MarkMessage(ctx context.Context, id string, mark logbook.MessageMark) (logbook.Message, error) {
	action := "read"
	if mark == logbook.MarkAcked {
		action = "ack"
	}
	var m logbook.Message
	_, err := l.call(ctx, http.MethodPost, "/v1/messages/"+url.PathEscape(id)+"/"+action, nil, &m)
	return m, err
}
