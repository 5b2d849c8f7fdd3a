package migrate_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/logbookhq/logbook/internal/store/migrate"
)

// TestLoad: migrations come in version order; a number may be missing (it
// is reserved for work that lands later), but not used twice.
func TestLoad(t *testing.T) {
	file := func(sql string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(sql)} }
	got, err := migrate.Load(fstest.MapFS{
		"m/0003_c.up.sql": file("C"), "m/0001_a.up.sql": file("A"), "m/0002_b.up.sql": file("B"), "m/0005_e.up.sql": file("E"),
		"m/README.md": file("not a migration"),
	}, "m")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range got {
		order = append(order, m.Name+":"+m.SQL)
	}
	if strings.Join(order, " ") != "a:A b:B c:C e:E" {
		t.Errorf("loaded %v, want a b c e in order", order)
	}
	for _, tc := range []struct {
		name string
		fs   fstest.MapFS
		says string
	}{
		{"a number twice", fstest.MapFS{"m/0001_a.up.sql": file("A"), "m/0002_b.up.sql": file("B"), "m/0002_c.up.sql": file("C")}, "the same number 2"},
		{"zero", fstest.MapFS{"m/0000_a.up.sql": file("A")}, "number it from 1"},
		{"no number", fstest.MapFS{"m/first.up.sql": file("A")}, "NNNN_name.up.sql"},
	} {
		if _, err := migrate.Load(tc.fs, "m"); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.says)
		}
	}
}
