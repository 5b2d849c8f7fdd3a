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

func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "" || r.URL.Path[len(r.URL.Path)-1] == '/' {
		http.NotFound(w, r) // no directory listings
		return
	}
	if r.URL.Query().Get("v") == a.versions[r.URL.Path] {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	a.server.ServeHTTP(w, r)
}
