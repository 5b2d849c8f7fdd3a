package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// An export is the rows of the tables that hold what people and agents
// recorded, as they are stored, column by column (see store.ExportParams).
// What is derived from them (statistics' rollups, the search index) is not
// exported: a restore writes it again as it writes each row, as the writes
// that made the rows did. What belongs to one database is not exported
// either: tokens (secrets that open it), its keys, and its event stream.

// exportTable is a table an export holds.
type exportTable struct {
	name string
	// key are the columns of the table's primary key: a row whose key a
	// database holds already is not restored again. None: a row is there
	// already when a row equal in every column is.
	key []string
	// same are the columns, besides the key, a row held under the key must
	// agree on to be the same row (an entry's id names another entry in
	// another database).
	same []string
	// generated: the key is an identity column the database numbers
	// (PostgreSQL must be told to take the given value, and its sequence
	// moved past it).
	generated bool
	// project is the condition, on the project in $1, of a project's rows.
	project string
	// settings: a row held already takes the restored row's other columns
	// (but created_at), as a project's policy and retention are set anew.
	settings bool
}

// ofProjectSessions is the condition on a table keyed by session of the
// rows of a project's sessions.
const ofProjectSessions = "session_id IN (SELECT id FROM sessions WHERE project = $1)"

// exportTables are the tables an export holds, in the order a restore
// writes them: a row after the rows it refers to. A new table of recorded
// data is one more line here (and one more record type in the export).
var exportTables = []exportTable{
	{name: "projects", key: []string{"name"}, project: "name = $1", settings: true},
	{name: "sessions", key: []string{"id"}, project: "project = $1"},
	{name: "entries", key: []string{"id"}, same: []string{"session_id", "seq"}, generated: true, project: ofProjectSessions},
	{name: "plan_steps", key: []string{"session_id", "n"}, project: ofProjectSessions},
	{name: "touches", key: []string{"session_id", "kind", "value"}, project: "project = $1"},
	{name: "links", key: []string{"session_id", "kind", "ref", "via"}, project: "project = $1"},
	{name: "claims", key: []string{"id"}, project: "project = $1"},
	{name: "agents", key: []string{"project", "name"}, project: "project = $1"},
	{name: "agent_tasks", key: []string{"project", "task_id"}, project: "project = $1"},
	{name: "task_sessions", key: []string{"project", "task_id", "session_id"}, project: "project = $1"},
	{name: "agent_rotations", project: "project = $1"},
	{name: "messages", key: []string{"id"}, project: "project = $1"},
	// Alert rules keep their webhook secret, so receivers verify what the
	// restored database sends as they did; a pending alert is delivered
	// by the server that runs on the restored database.
	{name: "alert_rules", key: []string{"id"}, project: "project = $1"},
	{name: "alerts", key: []string{"id"}, project: "project = $1"},
	{name: "alert_attempts", key: []string{"alert_id", "n"}, project: "alert_id IN (SELECT id FROM alerts WHERE project = $1)"},
}

// notExported are the tables an export leaves out, and why. Every table
// is in exportTables or here (TestEveryTableIsExportedOrSaysWhyNot).
var notExported = map[string]string{
	"tokens":                       "secrets that open the database they were made for",
	"keys":                         "this database's own keys (redaction, sign-in)",
	"events":                       "this database's own event stream",
	"event_counter":                "numbers this database's event stream",
	"schema_migrations":            "made by the migrations of the database restored into",
	"session_stats_days":           "derived: written again as the sessions are restored",
	"session_stats_hours":          "derived: written again as the sessions are restored",
	"session_stats_quarters":       "derived: written again as the sessions are restored",
	"session_stats_dimension_days": "derived: written again as the sessions are restored",
	"session_stats_backfill":       "the state of this database's statistics backfill",
	"touch_stats_days":             "derived: written again as the touches are restored",
	"session_docs":                 "derived: the search index, written again as the sessions are restored",
	"entry_docs":                   "derived: the search index, written again as the entries are restored",
	"entries_default":              "a partition of entries (PostgreSQL), exported with them",
	"search":                       "derived: the search index, written again as the entries are restored",
	"search_backfill":              "the state of this database's search backfill",
	"search_vocab":                 "a view of the search index's words (SQLite's fts5vocab), stores nothing",
}

func exportTableNamed(name string) (exportTable, bool) {
	i := slices.IndexFunc(exportTables, func(t exportTable) bool { return t.name == name })
	if i < 0 {
		return exportTable{}, false
	}
	return exportTables[i], true
}

// order is the ORDER BY of a table's rows in an export: by key, or by
// every column of a table without one.
func (t exportTable) order(columns []string) string {
	if len(t.key) > 0 {
		return strings.Join(t.key, ", ")
	}
	return strings.Join(columns, ", ")
}

// Export reads every exported table in one snapshot, on a connection of
// its own: a read transaction that holds no lock writers wait on.
func (s *Store) Export(ctx context.Context, p store.ExportParams) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.interpretError(err, "opening a connection to export")
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, s.d.SnapshotBeginSQL); err != nil {
		return s.interpretError(err, "starting the export's snapshot")
	}
	// Rolled back on a context of its own: the export's may have ended,
	// and a connection back in the pool must not be left in a transaction.
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") //nolint:errcheck // a read-only transaction has nothing to lose
	where, args := "", []any(nil)
	if p.Project != "" {
		args = []any{p.Project}
	}
	counts := make([]store.ExportTable, 0, len(exportTables))
	for _, t := range exportTables {
		if p.Project != "" {
			where = " WHERE " + t.project
		}
		var n int64
		if err := conn.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+t.name+where, args...).Scan(&n); err != nil {
			return s.interpretError(err, "counting the rows of "+t.name)
		}
		counts = append(counts, store.ExportTable{Name: t.name, Rows: n})
	}
	if err := p.Counted(counts); err != nil {
		return err
	}
	for _, t := range exportTables {
		if p.Project != "" {
			where = " WHERE " + t.project
		}
		if err := s.exportRows(ctx, conn, t, where, args, p.Row); err != nil {
			return err
		}
	}
	return nil
}

// exportRows streams one table's rows to row, each a map of its columns.
func (s *Store) exportRows(ctx context.Context, conn *sql.Conn, t exportTable, where string, args []any, row func(string, map[string]any) error) error {
	columns, err := tableColumns(ctx, conn, t.name)
	if err != nil {
		return s.interpretError(err, "reading the columns of "+t.name)
	}
	rows, err := conn.QueryContext(ctx, `SELECT `+strings.Join(columns, ", ")+` FROM `+t.name+where+` ORDER BY `+t.order(columns), args...)
	if err != nil {
		return s.interpretError(err, "exporting "+t.name)
	}
	defer rows.Close()
	values := make([]any, len(columns))
	dest := make([]any, len(columns))
	for i := range values {
		dest[i] = &values[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return s.interpretError(err, "exporting "+t.name)
		}
		out := make(map[string]any, len(columns))
		for i, c := range columns {
			out[c] = exportValue(values[i])
		}
		if err := row(t.name, out); err != nil {
			return err
		}
	}
	return s.interpretError(rows.Err(), "exporting "+t.name)
}

// exportValue is a column's value as an export writes it: text as a
// string (an engine may hand it over as bytes), numbers, booleans and
// NULL as they are.
func exportValue(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

// columnQuerier is what tableColumns reads through: a connection, the
// database or a transaction.
type columnQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// tableColumns lists a table's columns, in the database's order.
func tableColumns(ctx context.Context, q columnQuerier, table string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT * FROM `+table+` WHERE 1 = 0`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return rows.Columns()
}

// ImportRows restores rows of an exported table (see store.Executor).
func (e executor) ImportRows(ctx context.Context, table string, rows []map[string]any) (inserted int, err error) {
	if e.tx == nil { // the rollups and the index change with the rows, in one transaction
		err = e.root.inTx(ctx, func(e executor) error { inserted, err = e.ImportRows(ctx, table, rows); return err })
		return inserted, err
	}
	t, ok := exportTableNamed(table)
	if !ok {
		return 0, logbook.Invalid("type", "%q is not a kind of record this logbook restores (it restores %s); an export of a newer logbook needs that version or a later one",
			table, strings.Join(exportTableNames(), ", "))
	}
	if len(rows) == 0 {
		return 0, nil
	}
	columns, err := e.importColumns(ctx, t, rows)
	if err != nil {
		return 0, err
	}
	var added []map[string]any
	if len(t.key) == 0 {
		added, err = e.importUnkeyed(ctx, t, columns, rows)
	} else {
		added, err = e.importKeyed(ctx, t, columns, rows)
	}
	if err != nil {
		return 0, err
	}
	return len(added), e.derive(ctx, t, added)
}

func exportTableNames() []string {
	names := make([]string, len(exportTables))
	for i, t := range exportTables {
		names[i] = t.name
	}
	return names
}

// importColumns checks that every row has the same columns, all of them
// columns of the table here, and returns them sorted.
func (e executor) importColumns(ctx context.Context, t exportTable, rows []map[string]any) ([]string, error) {
	columns := make([]string, 0, len(rows[0]))
	for c := range rows[0] {
		columns = append(columns, c)
	}
	slices.Sort(columns)
	for _, row := range rows[1:] {
		if len(row) != len(columns) {
			return nil, logbook.Invalid("row", "rows of %s differ in their columns (%d and %d); each row of a table has the same columns", t.name, len(columns), len(row))
		}
		for _, c := range columns {
			if _, ok := row[c]; !ok {
				return nil, logbook.Invalid("row", "a row of %s has no column %s, which others have; each row of a table has the same columns", t.name, c)
			}
		}
	}
	here, err := tableColumns(ctx, e.tx, t.name)
	if err != nil {
		return nil, e.interpretError(err, "reading the columns of "+t.name)
	}
	for _, c := range columns {
		if !slices.Contains(here, c) {
			return nil, logbook.Invalid("row", "%s.%s is not a column of this database: the export comes from a newer logbook; restore it with that version or a later one", t.name, c)
		}
	}
	for _, k := range append(slices.Clone(t.key), t.same...) {
		if !slices.Contains(columns, k) {
			return nil, logbook.Invalid("row", "the rows of %s have no %s, which identifies them", t.name, k)
		}
	}
	return columns, nil
}

// importKeyed inserts the rows whose key the table does not hold, a chunk
// per statement, and returns them. A row whose key the table holds must be
// the same row (its same columns equal), else it is ErrConflict: another
// database's rows under the same keys.
func (e executor) importKeyed(ctx context.Context, t exportTable, columns []string, rows []map[string]any) ([]map[string]any, error) {
	overriding := ""
	if t.generated {
		overriding = e.d.OverridingIdentity
	}
	var added []map[string]any
	chunk := max(1, min(e.d.InsertRows, 30000/len(columns)))
	for start := 0; start < len(rows); start += chunk {
		part := rows[start:min(start+chunk, len(rows))]
		if t.generated && e.d.MonthPartitions {
			var err error
			if part, err = e.withoutHeldIDs(ctx, t, part); err != nil {
				return nil, err
			}
			if len(part) == 0 {
				continue
			}
		}
		args := make([]any, 0, len(part)*len(columns))
		for _, row := range part {
			for _, c := range columns {
				args = append(args, row[c])
			}
		}
		res, err := e.query(ctx, `INSERT INTO `+t.name+` (`+strings.Join(columns, ", ")+`)`+overriding+` VALUES `+
			placeholders(len(part), len(columns))+` ON CONFLICT DO NOTHING RETURNING `+strings.Join(t.key, ", "), args...)
		if err != nil {
			return nil, e.interpretError(err, "restoring "+t.name)
		}
		inserted := map[string]bool{}
		key := make([]any, len(t.key))
		dest := make([]any, len(t.key))
		for i := range key {
			dest[i] = &key[i]
		}
		for res.Next() {
			if err := res.Scan(dest...); err != nil {
				res.Close()
				return nil, e.interpretError(err, "restoring "+t.name)
			}
			inserted[tupleOf(key)] = true
		}
		res.Close()
		if err := res.Err(); err != nil {
			return nil, e.interpretError(err, "restoring "+t.name)
		}
		var held []map[string]any
		for _, row := range part {
			if inserted[tupleOf(valuesOf(row, t.key))] {
				added = append(added, row)
			} else {
				held = append(held, row)
			}
		}
		if err := e.checkHeld(ctx, t, held); err != nil {
			return nil, err
		}
		if t.settings {
			if err := e.setHeld(ctx, t, columns, held); err != nil {
				return nil, err
			}
		}
	}
	if t.generated && len(added) > 0 && e.d.IdentityPastSQL != "" {
		if _, err := e.exec(ctx, fmt.Sprintf(e.d.IdentityPastSQL, t.name, t.key[0])); err != nil {
			return nil, e.interpretError(err, "numbering "+t.name+" after the restored rows")
		}
	}
	return added, nil
}

// withoutHeldIDs returns the rows whose generated key the table does not
// hold yet, and checks the others as checkHeld does. Where entries are
// partitioned (Dialect.MonthPartitions), their primary key holds the
// partition key too, so an id held by another session's entry is no
// conflict to ON CONFLICT: it is looked for first.
func (e executor) withoutHeldIDs(ctx context.Context, t exportTable, rows []map[string]any) ([]map[string]any, error) {
	id := t.key[0]
	ids := make([]any, 0, len(rows))
	for _, row := range rows {
		ids = append(ids, row[id])
	}
	q := &query{}
	var in []string
	for _, v := range ids {
		in = append(in, q.arg(v))
	}
	found, err := e.query(ctx, `SELECT `+id+` FROM `+t.name+` WHERE `+id+` IN (`+strings.Join(in, ", ")+`)`, q.args...)
	if err != nil {
		return nil, e.interpretError(err, "checking the rows of "+t.name+" held already")
	}
	defer found.Close()
	held := map[string]bool{}
	for found.Next() {
		var v any
		if err := found.Scan(&v); err != nil {
			return nil, e.interpretError(err, "checking the rows of "+t.name+" held already")
		}
		held[tupleOf([]any{v})] = true
	}
	if err := found.Err(); err != nil {
		return nil, e.interpretError(err, "checking the rows of "+t.name+" held already")
	}
	var fresh, old []map[string]any
	for _, row := range rows {
		if held[tupleOf([]any{row[id]})] {
			old = append(old, row)
		} else {
			fresh = append(fresh, row)
		}
	}
	return fresh, e.checkHeld(ctx, t, old)
}

// checkHeld checks that rows an insert skipped are held as they are: under
// their key, with the same values in t.same. A row skipped for another
// unique key (a session of the same harness session under another id)
// is not held under its key: ErrConflict too.
func (e executor) checkHeld(ctx context.Context, t exportTable, held []map[string]any) error {
	if len(held) == 0 {
		return nil
	}
	identity := append(slices.Clone(t.key), t.same...)
	q := &query{}
	var or []string
	for _, row := range held {
		var and []string
		for _, k := range t.key {
			and = append(and, k+" = "+q.arg(row[k]))
		}
		or = append(or, "("+strings.Join(and, " AND ")+")")
	}
	rows, err := e.query(ctx, `SELECT `+strings.Join(identity, ", ")+` FROM `+t.name+` WHERE `+strings.Join(or, " OR "), q.args...)
	if err != nil {
		return e.interpretError(err, "checking the rows of "+t.name+" held already")
	}
	defer rows.Close()
	found := map[string]bool{}
	values := make([]any, len(identity))
	dest := make([]any, len(identity))
	for i := range values {
		dest[i] = &values[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return e.interpretError(err, "checking the rows of "+t.name+" held already")
		}
		found[tupleOf(values)] = true
	}
	if err := rows.Err(); err != nil {
		return e.interpretError(err, "checking the rows of "+t.name+" held already")
	}
	for _, row := range held {
		if !found[tupleOf(valuesOf(row, identity))] {
			return fmt.Errorf("the %s row %s is held here as another row (or clashes with one): this database holds data the export does not come from; restore into an empty database, or one holding an earlier restore of the same data: %w",
				t.name, describeRow(row, identity), logbook.ErrConflict)
		}
	}
	return nil
}

// setHeld gives rows held already the restored rows' values, but for the
// key and created_at.
func (e executor) setHeld(ctx context.Context, t exportTable, columns []string, held []map[string]any) error {
	for _, row := range held {
		q := &query{}
		var set, where []string
		for _, c := range columns {
			if c != "created_at" && !slices.Contains(t.key, c) {
				set = append(set, c+" = "+q.arg(row[c]))
			}
		}
		for _, k := range t.key {
			where = append(where, k+" = "+q.arg(row[k]))
		}
		if len(set) == 0 {
			continue
		}
		if _, err := e.exec(ctx, `UPDATE `+t.name+` SET `+strings.Join(set, ", ")+` WHERE `+strings.Join(where, " AND "), q.args...); err != nil {
			return e.interpretError(err, "restoring the settings of "+t.name)
		}
	}
	return nil
}

// importUnkeyed inserts each row unless a row equal in every column is
// there, and returns those it inserted.
func (e executor) importUnkeyed(ctx context.Context, t exportTable, columns []string, rows []map[string]any) ([]map[string]any, error) {
	var added []map[string]any
	for _, row := range rows {
		q := &query{}
		conditions := make([]string, len(columns))
		for i, c := range columns {
			conditions[i] = c + " IS NOT DISTINCT FROM " + q.arg(row[c])
		}
		var n int
		if err := e.queryRow(ctx, `SELECT COUNT(*) FROM `+t.name+` WHERE `+strings.Join(conditions, " AND "), q.args...).Scan(&n); err != nil {
			return nil, e.interpretError(err, "restoring "+t.name)
		}
		if n > 0 {
			continue
		}
		if _, err := e.exec(ctx, `INSERT INTO `+t.name+` (`+strings.Join(columns, ", ")+`) VALUES `+placeholders(1, len(columns)),
			valuesOf(row, columns)...); err != nil {
			return nil, e.interpretError(err, "restoring "+t.name)
		}
		added = append(added, row)
	}
	return added, nil
}

// derive writes what the restored rows add to the statistics' rollups and
// the search index, as the writes that made them did.
func (e executor) derive(ctx context.Context, t exportTable, added []map[string]any) error {
	switch t.name {
	case "sessions":
		ids := make([]string, len(added))
		for i, row := range added {
			ids[i] = fmt.Sprint(row["id"])
		}
		sessions, err := e.sessionsByID(ctx, ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			s := sessions[id]
			f := factsOf(&s)
			e.stats.change(nil, &f)
			if err := e.indexSession(ctx, &s); err != nil {
				return err
			}
		}
	case "entries":
		ids := make([]int64, len(added))
		for i, row := range added {
			id, ok := row["id"].(int64)
			if !ok {
				return logbook.Invalid("row", "an entry's id is %v; it is a whole number", row["id"])
			}
			ids[i] = id
		}
		byID, err := e.entriesByID(ctx, ids)
		if err != nil {
			return err
		}
		entries := make([]logbook.Entry, 0, len(ids))
		keys := make(map[entryKey]int64, len(ids))
		for _, id := range ids {
			en := byID[id]
			entries = append(entries, en)
			keys[entryKey{en.SessionID, en.Seq}] = id
		}
		return e.indexEntries(ctx, entries, keys, newDocs)
	case "touches":
		for _, row := range added {
			if row["kind"] != logbook.TouchFile {
				continue
			}
			first, _ := row["first_at"].(int64)
			count, _ := row["count"].(int64)
			e.stats.touched(fmt.Sprint(row["session_id"]), fmt.Sprint(row["project"]), fmt.Sprint(row["value"]), first, count)
		}
	}
	return nil
}

// valuesOf is the row's values of columns, in their order.
func valuesOf(row map[string]any, columns []string) []any {
	out := make([]any, len(columns))
	for i, c := range columns {
		out[i] = row[c]
	}
	return out
}

// tupleOf writes values as one comparable string, the same for a value
// read from the database and the value a restore was given.
func tupleOf(values []any) string {
	var b strings.Builder
	for _, v := range values {
		fmt.Fprintf(&b, "%T:%v\x00", exportValue(v), exportValue(v))
	}
	return b.String()
}

func describeRow(row map[string]any, columns []string) string {
	parts := make([]string, len(columns))
	for i, c := range columns {
		parts[i] = fmt.Sprintf("%s=%v", c, row[c])
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
