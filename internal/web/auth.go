package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// Cookies and form fields. See the package documentation for why the
// token itself is the cookie and how CSRF tokens are made.
const (
	tokenCookie  = "logbook_token"  // the bearer token of the signed-in person
	signInCookie = "logbook_signin" // a random value that keys the sign-in form's CSRF token
	csrfField    = "csrf"
	// tokenCookieAge is how long a browser keeps the token: the token
	// itself stays valid until it is revoked.
	tokenCookieAge = 30 * 24 * time.Hour
)

// csrfToken is the CSRF token of forms protected by secret, a cookie's
// value: an HMAC keyed by the secret, which a page of another site cannot
// compute because it cannot read the cookie.
func csrfToken(secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("logbook web form"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// validCSRF reports whether the form of r carries the CSRF token for secret.
func validCSRF(r *http.Request, secret string) bool {
	if secret == "" {
		return false
	}
	return hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(csrfToken(secret)))
}

// setCookie sets an HttpOnly, SameSite=Strict cookie for the whole UI,
// Secure when browsers reach the server over TLS (see secure). A zero age
// deletes it.
func (h *handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, age time.Duration) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: h.secure(r)}
	if age > 0 {
		c.MaxAge = int(age / time.Second)
	} else {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// secure reports whether browsers reach the server over TLS: the request
// came over TLS, or Options.PublicURL is https (a TLS-terminating proxy in
// front). A request's own X-Forwarded-Proto is not believed: any client
// can send one.
func (h *handler) secure(r *http.Request) bool {
	return r.TLS != nil || (h.publicURL != nil && h.publicURL.Scheme == "https")
}

// cookieValue returns the named cookie's value, or "".
func cookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// randomValue returns 32 random bytes, base64url-encoded.
func randomValue() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// signedIn runs fn for a request whose token cookie stands for a caller.
// Without one, a page is redirected to the sign-in page (which comes back
// here afterwards); a fragment or the event stream gets a plain 401. A
// token over its rate limit gets 429 (service.Admit).
func (h *handler) signedIn(fn func(http.ResponseWriter, *http.Request, viewer)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token := cookieValue(r, tokenCookie)
		c, err := h.svc.Admit(r.Context(), token) // the rate limit the API shares
		if errors.Is(err, logbook.ErrUnauthorized) {
			if token != "" {
				h.setCookie(w, r, tokenCookie, "", 0) // revoked or unknown: forget it
			}
			if isFragment(r) {
				http.Error(w, "sign in first", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, "/sign-in?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		v := viewer{Caller: c, Project: c.Project, CSRF: csrfToken(token), token: token}
		if err != nil {
			h.renderError(w, r, v, err)
			return
		}
		if named := strings.TrimSpace(r.URL.Query().Get("project")); named != "" {
			v.Project = named // another project than the token's is refused by the service
		}
		fn(w, r, v)
	}
}

// isFragment reports whether r asks for part of a page or the event
// stream, which the script fetches, rather than a page a person opened.
func isFragment(r *http.Request) bool {
	return r.URL.Query().Get("part") != "" || strings.HasSuffix(r.URL.Path, "/entries") || r.URL.Path == "/ui/events"
}

// localPath returns next when it is a path on this site, else "/": the
// sign-in page never sends a person to another site.
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}
