package web

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
)

// assets serves the embedded static files. Pages link them with a version
// taken from their content (/static/app.css?v=1a2b3c4d), so a browser may
// keep them for a long time and still gets a new file after an upgrade.
type assets struct {
	files    fs.FS
	versions map[string]string
	server   http.Handler
}

func newAssets(files fs.FS) *assets {
	a := &assets{files: files, versions: map[string]string{}, server: http.FileServerFS(files)}
	_ = fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(files, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		a.versions[path] = hex.EncodeToString(sum[:4])
		return nil
	})
	return a
}

// URL is the versioned address of a static file. It panics on a name that
// is not embedded, so a typo in a template fails the tests, not a browser.
func (a *assets) URL(name string) string {
	v, ok := a.versions[name]
	if !ok {
		panic("web: no static file " + name)
	}
	return "/static/" + name + "?v=" + v
}

// ServeHTTP serves the embedded files, and 404 for any other path: a
// folder (no listings), a name that is not embedded, or one the file system
// would refuse as invalid (/static/%ff), which http.FileServerFS answers
// with a 500.
func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	version, ok := a.versions[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Query().Get("v") == version {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	a.server.ServeHTTP(w, r)
}
