package sqlstore

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

const messageColumns = `id, project, to_session, to_agent, to_actor, from_actor, from_token, from_session, text,
	reply_to, thread, created_at, delivered_at, delivered_to, read_at, acked_at`

func scanMessage(row rowScanner) (logbook.Message, error) {
	var m logbook.Message
	var created int64
	var delivered, read, acked sql.NullInt64
	err := row.Scan(&m.ID, &m.Project, &m.ToSession, &m.ToAgent, &m.ToActor, &m.From.Actor, &m.From.TokenID, &m.FromSession, &m.Text,
		&m.ReplyTo, &m.Thread, &created, &delivered, &m.DeliveredTo, &read, &acked)
	m.CreatedAt, m.DeliveredAt, m.ReadAt, m.AckedAt = fromMicros(created), fromNullMicros(delivered), fromNullMicros(read), fromNullMicros(acked)
	return m, err
}

func (e executor) scanMessages(rows *sql.Rows, err error, doing string) ([]logbook.Message, error) {
	if err != nil {
		return nil, e.interpretError(err, doing)
	}
	defer rows.Close()
	out := []logbook.Message{}
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, e.interpretError(err, doing)
		}
		out = append(out, m)
	}
	return out, e.interpretError(rows.Err(), doing)
}

func (e executor) MessageInsert(ctx context.Context, m *logbook.Message) error {
	_, err := e.exec(ctx, `INSERT INTO messages (`+messageColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		m.ID, m.Project, m.ToSession, m.ToAgent, m.ToActor, m.From.Actor, m.From.TokenID, m.FromSession, m.Text,
		m.ReplyTo, m.Thread, micros(m.CreatedAt), nullMicros(m.DeliveredAt), m.DeliveredTo, nullMicros(m.ReadAt), nullMicros(m.AckedAt))
	return e.interpretError(err, "storing message")
}

func (e executor) MessageGet(ctx context.Context, id string) (logbook.Message, error) {
	m, err := scanMessage(e.queryRow(ctx, `SELECT `+messageColumns+` FROM messages WHERE id = $1`, id))
	return m, e.interpretError(err, "reading message")
}

func (e executor) MessageList(ctx context.Context, p store.MessageListParams) ([]logbook.Message, error) {
	q := &query{}
	q.and("project = " + q.arg(p.Project))
	var forWhom []string
	if p.Session != "" {
		s := q.arg(p.Session)
		forWhom = append(forWhom, "to_session = "+s, "delivered_to = "+s)
	}
	if p.Agent != "" {
		forWhom = append(forWhom, "to_agent = "+q.arg(p.Agent))
	}
	if p.Actor != "" {
		forWhom = append(forWhom, "to_actor = "+q.arg(p.Actor))
	}
	if p.FromSession != "" {
		forWhom = append(forWhom, "from_session = "+q.arg(p.FromSession))
	}
	if len(forWhom) > 0 {
		q.and("(" + strings.Join(forWhom, " OR ") + ")")
	}
	if p.Thread != "" {
		q.and("thread = " + q.arg(p.Thread))
	}
	if p.Unread {
		q.and("read_at IS NULL")
	}
	if p.Undelivered {
		q.and("delivered_at IS NULL")
	}
	limit := p.Limit
	if limit <= 0 || limit > logbook.MaxMessagePage {
		limit = logbook.MaxMessagePage
	}
	rows, err := e.query(ctx, `SELECT `+messageColumns+` FROM messages WHERE `+q.whereSQL()+
		` ORDER BY created_at DESC, id DESC LIMIT `+q.arg(limit), q.args...)
	return e.scanMessages(rows, err, "listing messages")
}

func (e executor) MessageMark(ctx context.Context, id string, mark logbook.MessageMark, at time.Time) (logbook.Message, error) {
	set := `read_at = COALESCE(read_at, $2)`
	if mark == logbook.MarkAcked {
		set += `, acked_at = COALESCE(acked_at, $2)`
	}
	res, err := e.exec(ctx, `UPDATE messages SET `+set+` WHERE id = $1`, id, micros(at))
	if err != nil {
		return logbook.Message{}, e.interpretError(err, "marking message")
	}
	if err := e.expectOne(res, "marking message"); err != nil {
		return logbook.Message{}, err
	}
	return e.MessageGet(ctx, id)
}

// MessageDeliver claims the messages with one UPDATE. Where rows are
// locked (PostgreSQL), the messages another transaction is delivering are
// skipped, not waited for (a job queue's SKIP LOCKED): two deliveries never
// wait on each other, nor deadlock; one that rolls back leaves its messages
// for the next. SQLite runs one writer at a time.
func (e executor) MessageDeliver(ctx context.Context, p store.MessageDeliverParams) ([]logbook.Message, error) {
	q := &query{}
	now, session := q.arg(micros(p.Now)), q.arg(p.SessionID)
	q.and("project = " + q.arg(p.Project))
	q.and("delivered_at IS NULL")
	forWhom := []string{"to_session = " + session}
	if p.Agent != "" {
		forWhom = append(forWhom, "to_agent = "+q.arg(p.Agent))
	}
	if p.Actor != "" {
		forWhom = append(forWhom, "to_actor = "+q.arg(p.Actor))
	}
	q.and("(" + strings.Join(forWhom, " OR ") + ")")
	limit := p.Limit
	if limit <= 0 || limit > logbook.MaxMessagePage {
		limit = logbook.MaxMessagePage
	}
	skipLocked := ""
	if e.d.ForUpdate != "" {
		skipLocked = e.d.ForUpdate + " SKIP LOCKED"
	}
	rows, err := e.query(ctx, `UPDATE messages SET delivered_at = `+now+`, delivered_to = `+session+`
		WHERE delivered_at IS NULL AND id IN (SELECT id FROM messages WHERE `+q.whereSQL()+
		` ORDER BY created_at, id LIMIT `+q.arg(limit)+skipLocked+`) RETURNING `+messageColumns, q.args...)
	out, err := e.scanMessages(rows, err, "delivering messages")
	slices.SortFunc(out, func(a, b logbook.Message) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, err
}

func (e executor) MessagePrune(ctx context.Context, project string, before time.Time, limit int) (int64, error) {
	res, err := e.exec(ctx, `DELETE FROM messages WHERE id IN (SELECT id FROM messages
		WHERE project = $1 AND created_at < $2 ORDER BY created_at LIMIT $3)`, project, micros(before), limit)
	if err != nil {
		return 0, e.interpretError(err, "pruning messages")
	}
	n, err := res.RowsAffected()
	return n, e.interpretError(err, "pruning messages")
}
