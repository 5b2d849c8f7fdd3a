package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// views lists every page template; each is parsed with layout.html and
// partials.html into a set of its own when the handler is made.
var views = []string{"sign_in", "dashboard", "session_list", "session_show", "search_list", "alert_list", "choose_project", "error"}

// securityHeaders go on every UI response. The policy allows scripts and
// styles from this origin only: no inline script, no inline style.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "same-origin",
	"X-Frame-Options":        "DENY",
}

// handler serves the UI.
type handler struct {
	svc       *service.Service
	log       *slog.Logger
	views     map[string]*template.Template
	assets    *assets
	publicURL *url.URL // Options.PublicURL
}

// Options tune the UI. Zero values take the defaults.
type Options struct {
	// PublicURL is the address browsers reach the server at, when it is
	// not the one they send requests to: behind a TLS-terminating reverse
	// proxy, https://logbook.example.com while the server speaks plain HTTP
	// on loopback. When its scheme is https the UI's cookies are Secure
	// (browsers send them over TLS only) on every response, as they are on
	// a request that itself came over TLS; the setup help names it as the
	// server's address. Nil: what each request says.
	PublicURL *url.URL
}

// Mux is where New registers routes: an *http.ServeMux, or anything that
// registers on one (a test that lists the routes a server serves).
type Mux interface {
	Handle(pattern string, handler http.Handler)
}

// New registers the UI's routes on mux: the pages, /ui/events and /static/.
// It parses every template once and panics if one is wrong, which the
// package's tests catch.
func New(mux Mux, svc *service.Service, log *slog.Logger, opts Options) {
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err)
	}
	h := &handler{svc: svc, log: log, assets: newAssets(static), publicURL: opts.PublicURL}
	h.views = mustParseViews(h.funcs())

	page := func(pattern string, fn http.HandlerFunc) { mux.Handle(pattern, secured(fn)) }
	post := func(pattern string, fn http.HandlerFunc) {
		mux.Handle(pattern, secured(http.NewCrossOriginProtection().Handler(limitForm(fn))))
	}
	page("GET /{$}", h.signedIn(h.showDashboard))
	page("GET /sign-in", h.showSignIn)
	post("POST /sign-in", h.signIn)
	post("POST /sign-out", h.signOut)
	page("GET /sessions", h.signedIn(h.listSessions))
	page("GET /sessions/{id}", h.signedIn(h.showSession))
	page("GET /sessions/{id}/entries", h.signedIn(h.sessionEntries))
	page("GET /search", h.signedIn(h.search))
	page("GET /alerts", h.signedIn(h.listAlerts))
	page("GET /ui/events", h.signedIn(h.events))
	mux.Handle("GET /static/", secured(http.StripPrefix("/static/", h.assets)))
}

// maxForm is how many bytes a form may send: the sign-in form's token and
// CSRF fields take a few hundred. (net/http would read 10 MB.)
const maxForm = 64 << 10

// limitForm refuses a form body over maxForm: its fields read as empty.
func limitForm(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		next(w, r)
	}
}

// mustParseViews parses each view with the layout and the shared partials.
func mustParseViews(funcs template.FuncMap) map[string]*template.Template {
	out := make(map[string]*template.Template, len(views))
	for _, name := range views {
		t := template.New(name).Funcs(funcs)
		out[name] = template.Must(t.ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/"+name+".html"))
	}
	return out
}

// secured sets the security headers on every response of next.
func secured(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		next.ServeHTTP(w, r)
	})
}

// page is what every full page gets: who is looking, at which project, and
// the view's own data.
type page struct {
	Title   string
	Nav     string // the navigation tab to mark: "dashboard", "sessions", "search" or "alerts"
	Caller  service.Caller
	Project string
	CSRF    string // for the sign-out form
	Data    any
}

// viewer is a signed-in request: the caller, the project it looks at (empty
// for the admin before choosing one) and the CSRF token of its forms.
type viewer struct {
	service.Caller
	Project string
	CSRF    string
	token   string // the bearer token, whose event streams are counted
}

// page starts a page for the viewer.
func (v viewer) page(title, nav string, data any) page {
	return page{Title: title, Nav: nav, Caller: v.Caller, Project: v.Project, CSRF: v.CSRF, Data: data}
}

// render writes a full page: the view's "layout" template. It renders into
// a buffer first, so a template error is a clean 500, not half a page.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, view string, p page) {
	h.execute(w, r, status, view, "layout", p)
}

// renderPart writes one named template of a view, without the layout: the
// fragments the script fetches to refresh part of a page.
func (h *handler) renderPart(w http.ResponseWriter, r *http.Request, view, name string, data any) {
	h.execute(w, r, http.StatusOK, view, name, data)
}

func (h *handler) execute(w http.ResponseWriter, r *http.Request, status int, view, name string, data any) {
	var buf bytes.Buffer
	if err := h.views[view].ExecuteTemplate(&buf, name, data); err != nil {
		h.log.ErrorContext(r.Context(), "rendering failed", "view", view, "template", name, "path", r.URL.Path, "err", err)
		http.Error(w, "the page could not be drawn; the error was logged", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// errorPage is the data of the error view.
type errorPage struct {
	Status  int
	Heading string
	Detail  string
}

// renderError answers with the page err stands for. Unexpected errors are
// logged and shown as a 500 that reveals nothing.
func (h *handler) renderError(w http.ResponseWriter, r *http.Request, v viewer, err error) {
	status, heading, detail := http.StatusInternalServerError, "Something went wrong", "The server could not show this page; the error was logged."
	var limited *logbook.LimitError
	switch {
	case errors.As(err, &limited):
		w.Header().Set("Retry-After", strconv.Itoa(logbook.Seconds(limited.RetryAfter)))
		status, heading, detail = http.StatusTooManyRequests, "Too many requests", limited.Error()
	case errors.Is(err, logbook.ErrInvalid):
		status, heading, detail = http.StatusBadRequest, "That request cannot be read", err.Error()
	case errors.Is(err, logbook.ErrNotFound):
		status, heading, detail = http.StatusNotFound, "Not found", "Nothing here, or not in your projects."
	case errors.Is(err, logbook.ErrForbidden):
		status, heading, detail = http.StatusForbidden, "Not yours to see", "Your token is for project "+v.Caller.Project+"."
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The browser left before the page was ready: nothing failed here.
		h.log.InfoContext(r.Context(), "client went away", "method", r.Method, "path", r.URL.Path)
		return
	default:
		h.log.ErrorContext(r.Context(), "page failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if isFragment(r) {
		http.Error(w, heading, status) // the script keeps the page as it is
		return
	}
	h.render(w, r, status, "error", v.page(heading, "", errorPage{Status: status, Heading: heading, Detail: detail}))
}

// projectURL returns path with the query values q, plus the viewer's
// project when the caller is the admin (whose token names no project).
func (v viewer) projectURL(path string, q url.Values) string {
	if v.Caller.Admin && v.Project != "" {
		if q == nil {
			q = url.Values{}
		}
		q.Set("project", v.Project)
	}
	if enc := q.Encode(); enc != "" {
		return path + "?" + enc
	}
	return path
}
