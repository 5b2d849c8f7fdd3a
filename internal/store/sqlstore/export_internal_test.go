package sqlstore

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// createTable finds the tables a migration makes.
var createTable = regexp.MustCompile(`(?i)CREATE\s+(?:VIRTUAL\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)`)

// TestEveryTableIsExportedOrSaysWhyNot: a table a migration of either
// engine makes is exported (exportTables) or says why it is not
// (notExported), so a table added to logbook is not left out of exports
// unnoticed.
func TestEveryTableIsExportedOrSaysWhyNot(t *testing.T) {
	exported := map[string]bool{}
	for _, table := range exportTables {
		exported[table.name] = true
		if _, ok := notExported[table.name]; ok {
			t.Errorf("%s is both exported and not", table.name)
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "*store", "migrations", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found beside the engines (%v)", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		sql, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range createTable.FindAllStringSubmatch(string(sql), -1) {
			table := m[1]
			seen[table] = true
			if !exported[table] && notExported[table] == "" {
				t.Errorf("%s (made by %s) is neither exported nor said why not: add it to exportTables (one line: its key and how a project's rows are found) or to notExported", table, filepath.Base(f))
			}
		}
	}
	for table := range exported {
		if !seen[table] {
			t.Errorf("exportTables names %s, which no migration makes", table)
		}
	}
}
