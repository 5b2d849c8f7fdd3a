// Package web serves logbook's user interface: server-rendered HTML pages
// for people who would rather look than read JSON.
//
// Pages: sign in with a token (GET and POST /sign-in, POST /sign-out), the
// project dashboard (GET /), the sessions list with the audit filters (GET
// /sessions) and a session's page (GET /sessions/{id}). GET /ui/events is a
// Server-Sent Events stream of the project's events, which the pages'
// little script (static/app.js) follows to refresh parts of the page
// without a reload. Templates, CSS and script are embedded in the binary;
// nothing is loaded from elsewhere, so the UI works offline.
//
// Handlers call the service, never the store, and hold no rules: what a
// token may see is decided by the service, as for the JSON API.
//
// # Signing in
//
// The token a person pastes is kept as it is in the logbook_token cookie
// (HttpOnly, so scripts cannot read it; SameSite=Strict; Path=/; Secure when
// the request came over TLS or Options.PublicURL is https, as behind a
// TLS-terminating proxy). There is no server-side session table, so
// replicas need no shared state and revoking the token signs the browser
// out everywhere. Signing out expires the cookie.
//
// # Forms and CSRF
//
// Every form that changes something (sign in, sign out) carries a CSRF
// token in a hidden field, checked on POST: an HMAC-SHA256 keyed by the
// secret cookie it protects (the token cookie, or before signing in a
// random logbook_signin cookie), so another site, which cannot read the
// cookie, cannot forge it, and any replica can check it without a shared
// key. SameSite=Strict cookies and net/http's CrossOriginProtection (which
// refuses cross-origin POSTs by Sec-Fetch-Site and Origin) add two more
// locks.
//
// # Escaping
//
// Everything shown comes through html/template, which escapes by context:
// a transcript entry containing <script> is shown as text. No handler
// marks user data as template.HTML. Every response carries a
// Content-Security-Policy that allows scripts and styles from this origin
// only, no inline script or style at all.
package web
