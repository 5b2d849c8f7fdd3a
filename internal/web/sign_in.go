package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/logbook"
)

// signInPage is the data of the sign-in view.
type signInPage struct {
	Next  string
	CSRF  string
	Error string
}

// showSignIn shows the sign-in form, or sends a person who is signed in on
// to where they were going.
func (h *handler) showSignIn(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.URL.Query().Get("next"))
	if token := cookieValue(r, tokenCookie); token != "" {
		if _, err := h.svc.Authenticate(r.Context(), token); err == nil {
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
	}
	h.renderSignIn(w, r, http.StatusOK, next, "")
}

// renderSignIn draws the form with a fresh CSRF token keyed by a new
// logbook_signin cookie.
func (h *handler) renderSignIn(w http.ResponseWriter, r *http.Request, status int, next, problem string) {
	nonce := randomValue()
	h.setCookie(w, r, signInCookie, nonce, time.Hour)
	h.render(w, r, status, "sign_in", page{Title: "Sign in", Data: signInPage{Next: next, CSRF: csrfToken(nonce), Error: problem}})
}

// signIn checks the pasted token and keeps it in the token cookie.
func (h *handler) signIn(w http.ResponseWriter, r *http.Request) {
	next := localPath(r.PostFormValue("next"))
	if !validCSRF(r, cookieValue(r, signInCookie)) {
		h.renderSignIn(w, r, http.StatusForbidden, next, "This form expired. Paste your token again.")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	if _, err := h.svc.Authenticate(r.Context(), token); err != nil {
		if !errors.Is(err, logbook.ErrUnauthorized) {
			h.log.ErrorContext(r.Context(), "sign-in failed", "err", err)
		}
		h.renderSignIn(w, r, http.StatusUnauthorized, next, "This token is not known or was revoked. Paste a token made by 'logbook token create'.")
		return
	}
	h.setCookie(w, r, signInCookie, "", 0)
	h.setCookie(w, r, tokenCookie, token, tokenCookieAge)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// signOut forgets the token cookie.
func (h *handler) signOut(w http.ResponseWriter, r *http.Request) {
	token := cookieValue(r, tokenCookie)
	if token != "" && !validCSRF(r, token) {
		http.Error(w, "This form expired; reload the page and sign out again.", http.StatusForbidden)
		return
	}
	h.setCookie(w, r, tokenCookie, "", 0)
	http.Redirect(w, r, "/sign-in", http.StatusSeeOther)
}
