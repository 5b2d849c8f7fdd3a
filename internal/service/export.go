package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/store"
)

// ExportFormat is the version of the export format Export writes and
// Import reads. An export is JSON Lines:
//
//	{"logbook_export":1,"exported_at":"…","project":"p","tables":[{"name":"projects","rows":1},…]}
//	{"type":"projects","row":{"name":"p","policy":"","created_at":1764…,…}}
//	{"type":"sessions","row":{"id":"01J…","project":"p",…}}
//	…
//	{"type":"end","rows":1234}
//
// The first line says what the file is and how many rows of each table
// follow; each next line is one row of a table (its type), its columns as
// stored (times in Unix microseconds); the last line counts the rows, so a
// file cut short is told from a whole one. A table added to logbook is
// one more type. Tokens are not exported: they are secrets that open the
// database they were made for; a restored database gets tokens of its own
// (logbook token). Nor are events (a database's own stream) or what is
// derived from the rows (statistics' rollups, the search index), which a
// restore writes again.
const ExportFormat = 1

// exportHeader is an export's first line.
type exportHeader struct {
	Format     int           `json:"logbook_export"`
	ExportedAt time.Time     `json:"exported_at"`
	Project    string        `json:"project,omitempty"`
	Tables     []exportTable `json:"tables"`
}

type exportTable struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
}

// exportRecord is each next line: a row of a table, or the end.
type exportRecord struct {
	Type string         `json:"type"`
	Row  map[string]any `json:"row,omitempty"`
	Rows int64          `json:"rows,omitempty"` // the end's count of rows
}

// exportEnd is the type of an export's last line.
const exportEnd = "end"

// ExportParams say what to export and where.
type ExportParams struct {
	// Project limits the export to one project; "" exports every one.
	Project string
	Out     io.Writer
	// Progress, when set, hears how far the export is, every few thousand
	// rows and at the end.
	Progress func(TransferProgress)
}

// TransferProgress is how far an export or an import is, in rows.
type TransferProgress struct {
	Table       string // the table being copied
	Done, Total int64
}

// progressEvery is how many rows pass between two progress reports.
const progressEvery = 2000

// Export writes the database's recorded data, or one project's, to p.Out
// as JSON Lines (see ExportFormat), read in one snapshot while writers go
// on. Only the admin may export. It returns how many rows it wrote.
func (s *Service) Export(ctx context.Context, c Caller, p ExportParams) (int64, error) {
	if !c.Admin {
		return 0, fmt.Errorf("only the admin exports: %w", logbook.ErrForbidden)
	}
	if p.Project != "" {
		if _, err := s.store.ProjectPolicyGet(ctx, p.Project); err != nil {
			if errors.Is(err, logbook.ErrNotFound) {
				return 0, fmt.Errorf("no project %q to export: %w", p.Project, logbook.ErrNotFound)
			}
			return 0, err
		}
	}
	w := bufio.NewWriterSize(p.Out, 1<<16)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	progress := TransferProgress{}
	report := func() {
		if p.Progress != nil {
			p.Progress(progress)
		}
	}
	err := s.store.Export(ctx, store.ExportParams{
		Project: p.Project,
		Counted: func(tables []store.ExportTable) error {
			h := exportHeader{Format: ExportFormat, ExportedAt: s.now().UTC(), Project: p.Project}
			for _, t := range tables {
				h.Tables = append(h.Tables, exportTable{Name: t.Name, Rows: t.Rows})
				progress.Total += t.Rows
			}
			report()
			return enc.Encode(h)
		},
		Row: func(table string, row map[string]any) error {
			if err := enc.Encode(exportRecord{Type: table, Row: row}); err != nil {
				return fmt.Errorf("writing the export: %w", err)
			}
			progress.Done++
			if progress.Table != table || progress.Done%progressEvery == 0 {
				progress.Table = table
				report()
			}
			return nil
		},
	})
	if err != nil {
		return progress.Done, err
	}
	if err := enc.Encode(exportRecord{Type: exportEnd, Rows: progress.Done}); err != nil {
		return progress.Done, fmt.Errorf("writing the export: %w", err)
	}
	if err := w.Flush(); err != nil {
		return progress.Done, fmt.Errorf("writing the export: %w", err)
	}
	report()
	return progress.Done, nil
}

// ImportParams say what to restore.
type ImportParams struct {
	In       io.Reader
	Progress func(TransferProgress)
}

// ImportResult is what a restore did.
type ImportResult struct {
	// Rows counts the rows the export holds; Inserted those this restore
	// wrote (the rest were there already), by table.
	Rows, Inserted map[string]int64
}

// importBatch is how many rows of a table one transaction of a restore
// writes, and importBatchBytes about how many bytes of them at most.
const (
	importBatch      = 500
	importBatchBytes = 4 << 20
)

// Import restores an export (see ExportFormat) into this database: rows
// it holds already are left as they are (a project's policy and retention
// are set as exported), so restoring the same export again changes
// nothing, and ids are kept. A batch of rows a transaction, so an import
// cut short keeps what it wrote and a second run finishes it. Rows held
// here as other rows (another database's data under the same ids) are
// ErrConflict; a file that is not an export, or from a newer logbook, is
// ErrInvalid. Only the admin may import.
func (s *Service) Import(ctx context.Context, c Caller, p ImportParams) (ImportResult, error) {
	res := ImportResult{Rows: map[string]int64{}, Inserted: map[string]int64{}}
	if !c.Admin {
		return res, fmt.Errorf("only the admin imports an export: %w", logbook.ErrForbidden)
	}
	dec := json.NewDecoder(bufio.NewReaderSize(p.In, 1<<16))
	dec.UseNumber()
	var h exportHeader
	if err := dec.Decode(&h); err != nil || h.Format == 0 {
		return res, logbook.Invalid("file", "this is not a logbook export (its first line is not {\"logbook_export\": %d, …}); make one with logbook export", ExportFormat)
	}
	if h.Format > ExportFormat {
		return res, logbook.Invalid("file", "this export has format %d, this logbook reads format %d: restore it with a newer logbook", h.Format, ExportFormat)
	}
	progress := TransferProgress{}
	for _, t := range h.Tables {
		progress.Total += t.Rows
	}
	report := func() {
		if p.Progress != nil {
			p.Progress(progress)
		}
	}
	report()

	var table string
	var batch []map[string]any
	var batchStart int64
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		var n int
		err := s.inTx(ctx, func(tx *work) error {
			var err error
			n, err = tx.ImportRows(ctx, table, batch)
			return err
		})
		if err != nil {
			return fmt.Errorf("restoring %d rows of %s: %w", len(batch), table, err)
		}
		res.Inserted[table] += int64(n)
		progress.Done += int64(len(batch))
		progress.Table = table
		report()
		clear(batch)
		batch, batchStart = batch[:0], dec.InputOffset()
		return nil
	}
	for line := 2; ; line++ {
		var rec exportRecord
		if err := dec.Decode(&rec); err != nil {
			if errors.Is(err, io.EOF) {
				return res, logbook.Invalid("file", "the export ends before its last line ({\"type\":\"end\"}): it was cut short; what it held so far is restored, restore the whole file again to finish")
			}
			return res, logbook.Invalid("file", "line %d of the export is not a record: %v", line, err)
		}
		if rec.Type == exportEnd {
			if err := flush(); err != nil {
				return res, err
			}
			var read int64
			for _, n := range res.Rows {
				read += n
			}
			if read != rec.Rows {
				return res, logbook.Invalid("file", "the export says it holds %d rows and %d were read: the file is damaged", rec.Rows, read)
			}
			return res, nil
		}
		if rec.Type == "" || rec.Row == nil {
			return res, logbook.Invalid("file", "line %d of the export has no type and row", line)
		}
		row, err := importRow(rec.Row)
		if err != nil {
			return res, logbook.Invalid("file", "line %d of the export: %v", line, err)
		}
		if rec.Type != table || len(batch) >= importBatch || dec.InputOffset()-batchStart >= importBatchBytes {
			if err := flush(); err != nil {
				return res, err
			}
			table = rec.Type
		}
		batch = append(batch, row)
		res.Rows[table]++
	}
}

// importRow turns a row as JSON read it into the values a store takes:
// whole numbers as int64, others as float64; strings, booleans and null
// as they are.
func importRow(row map[string]any) (map[string]any, error) {
	for c, v := range row {
		switch v := v.(type) {
		case json.Number:
			if n, err := v.Int64(); err == nil {
				row[c] = n
			} else if f, err := v.Float64(); err == nil {
				row[c] = f
			} else {
				return nil, fmt.Errorf("column %s holds %s, not a number a database stores", c, v)
			}
		case string, bool, nil:
		default:
			return nil, fmt.Errorf("column %s holds a list or an object, not one value", c)
		}
	}
	return row, nil
}
