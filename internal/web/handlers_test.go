package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logbookhq/logbook/internal/ledger"
	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/web"
)

// expectHeaders checks the security headers every UI response carries.
func expectHeaders(t *testing.T, r result) {
	t.Helper()
	csp := r.header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin", "X-Frame-Options": "DENY"} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
}

// expectHas fails unless body holds every want.
func expectHas(t *testing.T, body string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// expectLacks fails if body holds any of the unwanted strings.
func expectLacks(t *testing.T, body string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(body, u) {
			t.Errorf("page has %q", u)
		}
	}
}

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	c := b.browserClient(t)

	r := b.get(t, c, "/sessions?state=active", http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/sign-in?next="+url.QueryEscape("/sessions?state=active") {
		t.Errorf("signed out, a page redirects to %q", loc)
	}
	expectHeaders(t, r)
	if r := b.get(t, c, "/sessions/x/entries", http.StatusUnauthorized); r.header.Get("Location") != "" {
		t.Error("a fragment redirects instead of answering 401")
	}
	b.get(t, c, "/ui/events?project=demo", http.StatusUnauthorized)

	page := b.get(t, c, "/sign-in?next=/sessions", 200)
	expectHeaders(t, page)
	nonce := page.cookie("logbook_signin")
	if nonce == nil || !nonce.HttpOnly || nonce.SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in cookie: %+v", nonce)
	}
	csrf := csrfOf(t, page.body)

	t.Run("ForgedForm", func(t *testing.T) {
		r := b.post(t, c, "/sign-in", url.Values{"csrf": {"forged"}, "token": {b.aliceToken}})
		if r.status != http.StatusForbidden || r.cookie("logbook_token") != nil {
			t.Errorf("a form without the CSRF token signed in: %d", r.status)
		}
		stranger := b.browserClient(t) // has no logbook_signin cookie to key the token
		if r := b.post(t, stranger, "/sign-in", url.Values{"csrf": {csrf}, "token": {b.aliceToken}}); r.status != http.StatusForbidden {
			t.Errorf("another browser's CSRF token was taken: %d", r.status)
		}
		req, _ := http.NewRequest("POST", b.srv.URL+"/sign-in", strings.NewReader(url.Values{"csrf": {csrf}, "token": {b.aliceToken}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		if r := b.do(t, c, req); r.status != http.StatusForbidden {
			t.Errorf("a cross-site POST was taken: %d", r.status)
		}
	})

	t.Run("WrongToken", func(t *testing.T) {
		page := b.get(t, c, "/sign-in", 200)
		r := b.post(t, c, "/sign-in", url.Values{"csrf": {csrfOf(t, page.body)}, "token": {"lbk_wrong"}})
		if r.status != http.StatusUnauthorized || r.cookie("logbook_token") != nil {
			t.Errorf("a wrong token: %d", r.status)
		}
		expectHas(t, r.body, "not known or was revoked")
	})

	t.Run("OversizedForm", func(t *testing.T) {
		// The server reads 64 KiB of a form at most (net/http would read
		// 10 MB): a valid token past them is not seen.
		page := b.get(t, c, "/sign-in", 200)
		r := b.post(t, c, "/sign-in", url.Values{"csrf": {csrfOf(t, page.body)}, "padding": {strings.Repeat("x", 100<<10)}, "token": {b.aliceToken}})
		if r.status == http.StatusSeeOther || r.cookie("logbook_token") != nil {
			t.Errorf("a 100 KiB form signed in: %d", r.status)
		}
	})

	t.Run("SignIn", func(t *testing.T) {
		page := b.get(t, c, "/sign-in", 200)
		r := b.post(t, c, "/sign-in", url.Values{"csrf": {csrfOf(t, page.body)}, "token": {" " + b.aliceToken + "\n"}, "next": {"/sessions?state=active"}})
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/sessions?state=active" {
			t.Fatalf("signing in: %d to %q", r.status, r.header.Get("Location"))
		}
		cookie := r.cookie("logbook_token")
		if cookie == nil || cookie.Value != b.aliceToken || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" || cookie.Secure {
			t.Errorf("token cookie: %+v", cookie)
		}
		dash := b.get(t, c, "/", 200)
		expectHas(t, dash.body, "alice", "demo", "Sign out")
		if r := b.get(t, c, "/sign-in", http.StatusSeeOther); r.header.Get("Location") != "/" {
			t.Errorf("signed in, the sign-in page sends to %q", r.header.Get("Location"))
		}
	})

	t.Run("SignOut", func(t *testing.T) {
		if r := b.post(t, c, "/sign-out", url.Values{"csrf": {"forged"}}); r.status != http.StatusForbidden {
			t.Errorf("signing out without the CSRF token: %d", r.status)
		}
		b.get(t, c, "/", 200) // still signed in
		dash := b.get(t, c, "/", 200)
		r := b.post(t, c, "/sign-out", url.Values{"csrf": {csrfOf(t, dash.body)}})
		if r.status != http.StatusSeeOther || r.cookie("logbook_token") == nil || r.cookie("logbook_token").MaxAge >= 0 {
			t.Errorf("signing out: %d, cookie %+v", r.status, r.cookie("logbook_token"))
		}
		b.get(t, c, "/", http.StatusSeeOther)
	})

	t.Run("NoOpenRedirect", func(t *testing.T) {
		for _, next := range []string{"//evil.example/x", "https://evil.example/", `/\evil.example`, "javascript:alert(1)"} {
			c := b.browserClient(t)
			page := b.get(t, c, "/sign-in", 200)
			r := b.post(t, c, "/sign-in", url.Values{"csrf": {csrfOf(t, page.body)}, "token": {b.aliceToken}, "next": {next}})
			if loc := r.header.Get("Location"); loc != "/" {
				t.Errorf("next=%q sends to %q", next, loc)
			}
		}
	})
}

// TestCookiesBehindProxy: behind a TLS-terminating proxy, the server sees
// plain HTTP; with --public-url https://… its cookies are Secure all the
// same, and the setup help names the public address. Without it, a
// request's own X-Forwarded-Proto does not make them Secure: any client
// can send one.
func TestCookiesBehindProxy(t *testing.T) {
	t.Parallel()
	public, _ := url.Parse("https://logbook.example.com")
	b := setupWith(t, false, web.Options{PublicURL: public})
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }} // no jar: it would keep Secure cookies off plain HTTP

	page := b.get(t, c, "/sign-in", 200)
	nonce := page.cookie("logbook_signin")
	if nonce == nil || !nonce.Secure {
		t.Fatalf("sign-in cookie behind an https public URL: %+v, want Secure", nonce)
	}
	req, _ := http.NewRequest("POST", b.srv.URL+"/sign-in", strings.NewReader(url.Values{"csrf": {csrfOf(t, page.body)}, "token": {b.aliceToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(nonce) // as a browser on https sends it
	r := b.do(t, c, req)
	token := r.cookie("logbook_token")
	if r.status != http.StatusSeeOther || token == nil || token.Value != b.aliceToken || !token.Secure || !token.HttpOnly {
		t.Fatalf("signing in behind an https public URL: %d, token cookie %+v, want Secure", r.status, token)
	}
	req, _ = http.NewRequest("GET", b.srv.URL+"/", nil)
	req.AddCookie(token)
	dash := b.do(t, c, req)
	expectHas(t, dash.body, "https://logbook.example.com/mcp")

	plain := setup(t, false)
	req, _ = http.NewRequest("GET", plain.srv.URL+"/sign-in", nil)
	req.Header.Set("X-Forwarded-Proto", "https")
	if nonce := plain.do(t, c, req).cookie("logbook_signin"); nonce == nil || nonce.Secure {
		t.Errorf("without a public URL, X-Forwarded-Proto made the cookie %+v", nonce)
	}
}

func TestSessionsList(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	c := b.signIn(t, b.aliceToken)
	rows := regexp.MustCompile(`class="session-row"`)

	tests := []struct {
		name, query string
		want        []string // titles listed
	}{
		{"TopLevelByDefault", "", []string{"Fix the flaky login test", "Nightly ops agent", "Add a healthz route", "Document the claims API", "Upgrade the database driver"}},
		{"Subagents", "?subagents=on", []string{"Explore how sessions use the clock", "Fix the flaky login test", "Nightly ops agent",
			"Add a healthz route", "Document the claims API", "Upgrade the database driver"}},
		{"Outcome", "?outcome=failed", []string{"Upgrade the database driver"}},
		{"Blocker", "?blocker=context_exhausted", []string{"Document the claims API"}},
		{"State", "?state=active", []string{"Fix the flaky login test", "Nightly ops agent"}},
		{"Harness", "?harness=codex", []string{"Upgrade the database driver"}},
		{"Agent", "?agent=engineer-1", []string{"Add a healthz route"}},
		{"Since", "?since=36h", []string{"Fix the flaky login test", "Nightly ops agent", "Add a healthz route"}},
		{"Path", "?path=internal/auth/", []string{"Fix the flaky login test"}},
		{"Issue", "?issue=%2312", []string{"Fix the flaky login test"}},
		{"Text", "?q=flaky+login", []string{"Fix the flaky login test"}},
		{"Combined", "?state=ended&harness=claude-code", []string{"Add a healthz route", "Document the claims API"}},
		{"Nothing", "?outcome=success&harness=codex", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := b.get(t, c, "/sessions"+tc.query, 200)
			expectHeaders(t, r)
			if n := len(rows.FindAllString(r.body, -1)); n != len(tc.want) {
				t.Errorf("%d rows, want %d", n, len(tc.want))
			}
			expectHas(t, r.body, tc.want...)
			if tc.want == nil {
				expectHas(t, r.body, "No sessions match these filters")
			}
		})
	}

	t.Run("FiltersStayInTheForm", func(t *testing.T) {
		t.Parallel()
		r := b.get(t, c, "/sessions?outcome=failed&harness=codex&since=7d", 200)
		expectHas(t, r.body, `<option value="failed" selected>`, `name="harness" value="codex"`, `<option value="7d" selected>`,
			`data-live-src="/sessions?harness=codex&amp;outcome=failed&amp;part=rows&amp;since=7d"`)
	})

	t.Run("BadFilter", func(t *testing.T) {
		t.Parallel()
		r := b.get(t, c, "/sessions?state=sleeping", 400)
		expectHas(t, r.body, `role="alert"`, "is not a state", `<form class="filters"`)
		r = b.get(t, c, "/sessions?since=yesterday", 400)
		expectHas(t, r.body, "is not a time")
		b.get(t, c, "/sessions?state=sleeping&part=rows", 400)
		// A search over its bounds says the bound (SQLite could not run it).
		r = b.get(t, c, "/sessions?q="+strings.Repeat("word+", 500), 400)
		expectHas(t, r.body, `role="alert"`, fmt.Sprintf("search for at most %d words", logbook.MaxQueryWords))
		r = b.get(t, c, "/sessions?q="+strings.Repeat("x", 50000), 400)
		expectHas(t, r.body, `role="alert"`, fmt.Sprintf("search for at most %d characters", logbook.MaxQueryLen))
	})

	t.Run("RowsFragment", func(t *testing.T) {
		t.Parallel()
		r := b.get(t, c, "/sessions?outcome=failed&part=rows", 200)
		expectLacks(t, r.body, "<html", `<form class="filters"`)
		expectHas(t, r.body, "Upgrade the database driver", ">failed<", "rate limited")
	})

	t.Run("Aggregates", func(t *testing.T) {
		t.Parallel()
		r := b.get(t, c, "/sessions?q=flaky", 200)
		// 2 messages counted: the prompt and 3 messages; 2 tool calls; 28,620 + 310... tokens.
		expectHas(t, r.body, `data-label="Messages">4<`, `data-label="Tool calls">2<`, `data-label="Tokens" title="28200 in, 730 out">28.9k<`,
			`class="badge state state-active">active<`, "1 subagent")
	})
}

func TestSessionsPaging(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	for i := range 53 {
		b.start(t, strconv.Itoa(i), service.StartParams{Harness: "h", HarnessSessionID: strconv.Itoa(i),
			Fields: logbook.SessionFields{Title: ptr("Session number " + strconv.Itoa(i))}})
	}
	c := b.signIn(t, b.aliceToken)
	first := b.get(t, c, "/sessions", 200)
	if n := strings.Count(first.body, `class="session-row"`); n != 50 {
		t.Fatalf("first page: %d rows, want 50", n)
	}
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`).FindStringSubmatch(first.body)
	if next == nil {
		t.Fatal("no next page link")
	}
	second := b.get(t, c, strings.ReplaceAll(next[1], "&amp;", "&"), 200)
	if n := strings.Count(second.body, `class="session-row"`); n != 3 {
		t.Errorf("second page: %d rows, want 3", n)
	}
	expectHas(t, second.body, "Session number 0", "First page")
	expectLacks(t, second.body, "Session number 52", `rel="next"`)
}

func TestSessionPage(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	c := b.signIn(t, b.aliceToken)
	main, child := b.sessions["main"], b.sessions["child"]
	r := b.get(t, c, "/sessions/"+main.ID, 200)
	expectHeaders(t, r)

	t.Run("Header", func(t *testing.T) {
		expectHas(t, r.body, "<h1>Fix the flaky login test</h1>", "claude-opus-4", "fix-login", "9f2c1e7a", "#12", "claude-code",
			"28.2k in · 730 out", ">active<")
	})
	t.Run("EscapesTheTranscript", func(t *testing.T) {
		expectHas(t, r.body, "&lt;script&gt;window.__pwned = 1&lt;/script&gt;&lt;img src=x onerror=&#34;window.__pwned = 2&#34;&gt;")
		expectLacks(t, r.body, "<script>window", "<img src=x")
	})
	t.Run("PairsToolCalls", func(t *testing.T) {
		call := r.body[strings.Index(r.body, `data-call-id="t1"`):]
		call = call[:strings.Index(call, "</li>")]
		expectHas(t, call, "$ go test ./auth -count=20 -run TestLogin", "call-ok", "session clock went backwards", `<details class="fold">`)
		expectLacks(t, r.body, `data-result-for="t1"`) // not a row of its own
	})
	t.Run("Aside", func(t *testing.T) {
		expectHas(t, r.body, `href="/sessions/`+child.ID+`"`, "Explore how sessions use the clock", "Inject a clock per session",
			"step-running", "internal/auth/clock.go", "<code>internal/auth/</code>", "issue #12")
	})
	t.Run("Parts", func(t *testing.T) {
		header := b.get(t, c, "/sessions/"+main.ID+"?part=header", 200)
		expectHas(t, header.body, "Fix the flaky login test")
		expectLacks(t, header.body, "<html", "Transcript")
		aside := b.get(t, c, "/sessions/"+main.ID+"?part=aside", 200)
		expectHas(t, aside.body, "Explore how sessions use the clock")
		expectLacks(t, aside.body, "<html", "window.__pwned")
	})
	t.Run("Subagent", func(t *testing.T) {
		r := b.get(t, c, "/sessions/"+child.ID, 200)
		expectHas(t, r.body, "Subagent of", `href="/sessions/`+main.ID+`"`, "Find every use of time.Now")
	})
	t.Run("Superseded", func(t *testing.T) {
		r := b.get(t, c, "/sessions/"+b.sessions["compacted"].ID, 200)
		if n := strings.Count(r.body, "entry-meta"); n != 3 {
			t.Errorf("%d entries shown, want 3 (two superseded and the summary)", n)
		}
		if n := strings.Count(r.body, ">superseded<"); n != 2 {
			t.Errorf("%d entries marked superseded, want 2", n)
		}
		expectHas(t, r.body, "Checked the backups: all fresh.")
	})
	t.Run("NotFound", func(t *testing.T) {
		r := b.get(t, c, "/sessions/nope", 404)
		expectHas(t, r.body, "Not found")
		expectHeaders(t, r)
	})
}

func TestEntriesFragment(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	c := b.signIn(t, b.aliceToken)
	main := b.sessions["main"]
	b.append(t, main.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindToolCall, Tool: "Bash", ToolCallID: "t3", Payload: []byte(`{"command":"go test ./..."}`)},
		{Kind: logbook.KindToolResult, ToolCallID: "t1", Text: "a late result of an earlier call"},
		{Kind: logbook.KindNote, Text: "<b>bold?</b>"}}})
	r := b.get(t, c, "/sessions/"+main.ID+"/entries?after_seq=8", 200)
	if r.header.Get("X-Last-Seq") != "11" {
		t.Errorf("X-Last-Seq %q, want 11", r.header.Get("X-Last-Seq"))
	}
	if n := strings.Count(r.body, `class="entry-meta"`); n != 3 {
		t.Errorf("%d entries after seq 8, want 3", n)
	}
	expectHas(t, r.body, `id="e9"`, `data-call-id="t3"`, "call-pending", `data-result-for="t1"`, "&lt;b&gt;bold?&lt;/b&gt;")
	expectLacks(t, r.body, `id="e8"`, "<html")
	b.get(t, c, "/sessions/"+main.ID+"/entries?after_seq=-1", 400)
}

func TestProjects(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	main := b.sessions["main"]

	t.Run("AnotherProjectsToken", func(t *testing.T) {
		t.Parallel()
		c := b.signIn(t, b.token(t, "other", "bob"))
		b.get(t, c, "/sessions/"+main.ID, 404)
		b.get(t, c, "/sessions/"+main.ID+"/entries", 404)
		r := b.get(t, c, "/sessions?project=demo", 403)
		expectHas(t, r.body, "Your token is for project other")
		list := b.get(t, c, "/sessions?subagents=on", 200)
		expectLacks(t, list.body, "Fix the flaky login test", main.ID)
		b.get(t, c, "/ui/events?project=demo", 403)
	})

	t.Run("AdminChooses", func(t *testing.T) {
		t.Parallel()
		c := b.signIn(t, adminToken)
		r := b.get(t, c, "/", 200)
		expectHas(t, r.body, "Choose a project", `name="project"`)
		r = b.get(t, c, "/sessions?project=demo", 200)
		expectHas(t, r.body, "Fix the flaky login test", `href="/sessions/`+main.ID+`?project=demo"`)
		r = b.get(t, c, "/sessions/"+main.ID, 200)
		expectHas(t, r.body, `href="/sessions?project=demo"`) // the session's project, for the navigation
	})
}

func TestDashboard(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	c := b.signIn(t, b.aliceToken)
	r := b.get(t, c, "/", 200)
	expectHeaders(t, r)
	threeDaysAgo := time.Now().UTC().AddDate(0, 0, -3).Format("Mon Jan 2")
	expectHas(t, r.body,
		`<svg class="chart"`, "<title>"+threeDaysAgo+": 1 failed</title>", // outcomes per day, from the clock-moved fixture
		"rate limited", "context exhausted", // blockers
		"<code>internal/auth/clock.go</code>",          // busiest files
		"<code>internal/auth/</code>", "held by alice", // claims now
		"Fix the flaky login test", // active now
	)
	now := b.get(t, c, "/?part=now", 200)
	expectHas(t, now.body, "Active sessions", "Claims")
	expectLacks(t, now.body, "<html", "<svg")

	// A claim the gate took for a write says so, here and on its session.
	if _, err := b.svc.SetPolicy(b.ctx, b.admin, "demo", json.RawMessage(`{"claims": {"auto": true}}`)); err != nil {
		t.Fatal(err)
	}
	main := b.sessions["main"]
	if ans, err := b.svc.Gate(b.ctx, b.alice, ledger.GateParams{SessionID: main.ID, Paths: []string{"docs/clock.md"}}); err != nil || len(ans.Claimed) != 1 {
		t.Fatalf("a write under auto claims: %+v %v", ans, err)
	}
	expectHas(t, b.get(t, c, "/?part=now", 200).body, "<code>docs/clock.md</code>", "claimed by a write")
	expectHas(t, b.get(t, c, "/sessions/"+main.ID, 200).body, "<code>docs/clock.md</code>", "claimed by a write")

	t.Run("Empty", func(t *testing.T) {
		c := b.signIn(t, b.token(t, "fresh", "carol"))
		for _, path := range []string{"/", "/sessions"} {
			r := b.get(t, c, path, 200)
			expectHas(t, r.body, "No sessions in fresh yet", "logbook hook install claude", "--project fresh",
				`&#34;url&#34;: &#34;`+b.srv.URL+`/mcp&#34;`)
		}
	})
}

// TestDashboardCounts: the tiles count the sessions of the chart's window,
// every one of them, top-level unless asked for subagents too: started is
// the sum of active (not ended) and each outcome
// (sessions still running were left out, so 15 sessions of which 3 ran
// showed "12 sessions started" and the chart's "not ended" stayed empty),
// and each tile's link lists the same window.
func TestDashboardCounts(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	token := b.token(t, "counts", "bob")
	bob, err := b.svc.Authenticate(b.ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	start := func(name, parent string) logbook.Session { return b.startAs(t, bob, name, parent) }
	end := func(s logbook.Session, o logbook.Outcome) {
		if _, err := b.svc.EndSession(b.ctx, bob, s.ID, service.EndParams{Outcome: o}); err != nil {
			t.Fatal(err)
		}
	}
	running := start("running", "")
	start("also running", "")
	end(start("done", ""), logbook.OutcomeSuccess)
	end(start("broke", ""), logbook.OutcomeFailed)
	end(start("helper", running.ID), logbook.OutcomePartial)

	cost := 0.25
	if _, err := b.svc.AppendEntries(b.ctx, bob, running.ID, service.Batch{Entries: []logbook.Entry{
		{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{InputTokens: 10, CostUSD: &cost}}}}); err != nil {
		t.Fatal(err)
	}

	client := b.signIn(t, token)
	since := time.Now().UTC().AddDate(0, 0, 1-14).Format(time.DateOnly)
	tile := func(n int, label string) string {
		return fmt.Sprintf(`<span class="stat-n">%d</span><span class="stat-label">%s</span>`, n, label)
	}
	// By default the sessions people and agents started, not their subagents.
	r := b.get(t, client, "/", 200)
	expectHas(t, r.body,
		tile(4, "started"),
		tile(2, `<i class="dot fill-open"></i>active`),
		tile(1, `<i class="dot fill-success"></i>success`),
		tile(0, `<i class="dot fill-partial"></i>partial`),
		tile(1, `<i class="dot fill-failed"></i>failed`),
		`<span class="stat-n">$0.25</span><span class="stat-label"><i class="dot fill-cost"></i>cost</span>`,
		"2 not ended</title>", // the chart's bar of today
		`href="/sessions?outcome=failed&amp;since=`+since+`"`,
		`href="/?subagents=on"`,
	)
	// With subagents, the helper counts too.
	r = b.get(t, client, "/?subagents=on", 200)
	expectHas(t, r.body,
		tile(5, "started"),
		tile(2, `<i class="dot fill-open"></i>active`),
		tile(1, `<i class="dot fill-partial"></i>partial`),
		`<span class="stat-n">$0.25</span>`,
		`href="/sessions?outcome=failed&amp;since=`+since+`&amp;subagents=on"`,
	)
}

func TestStatic(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	c := b.browserClient(t)
	page := b.get(t, c, "/sign-in", 200)
	css := regexp.MustCompile(`href="(/static/app\.css\?v=[0-9a-f]+)"`).FindStringSubmatch(page.body)
	if css == nil {
		t.Fatal("the page links no versioned stylesheet")
	}
	r := b.get(t, c, css[1], 200)
	expectHeaders(t, r)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/css") || !strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Errorf("stylesheet: %q, %q", r.header.Get("Content-Type"), r.header.Get("Cache-Control"))
	}
	if r := b.get(t, c, "/static/app.js", 200); strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Error("an unversioned request is cached for good")
	}
	b.get(t, c, "/static/", 404)
	b.get(t, c, "/static/nope.js", 404)
	// Paths the file system refuses (invalid UTF-8, an overlong "."
	// encoding) are not found either, never a server error.
	for _, path := range []string{"/static/%ff", "/static/%80", "/static/%c0%ae", "/static/%c0%ae/app.js", "/static/..%2fweb.go", "/static/app.js%00"} {
		b.get(t, c, path, 404)
	}
	if r := b.get(t, c, "/healthz", 200); r.header.Get("Content-Security-Policy") != "" {
		t.Error("the UI's headers leak onto the API")
	}
}

func TestEventStream(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	c := b.signIn(t, b.aliceToken)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.srv.URL+"/ui/events?project=demo", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("event stream: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(res.Body)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), ": logbook events for demo") {
		t.Fatalf("first line %q", lines.Text())
	}
	// Only what happens from now on: the fixture's events are not replayed
	// (though its last appends may be announced now, see
	// logbook.AppendedEvery).
	main := b.sessions["main"].ID
	appended, err := b.svc.AppendEntries(b.ctx, b.alice, main, service.Batch{Entries: []logbook.Entry{{Kind: logbook.KindNote, Text: "now"}}})
	if err != nil {
		t.Fatal(err)
	}
	lastSeq := fmt.Sprintf(`"last_seq":%d`, appended.LastSeq)
	var typ string
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "event: ") {
			typ = line
		}
		if !strings.HasPrefix(line, "data: ") || !strings.Contains(line, `"session_id":"`+main+`"`) {
			continue
		}
		if typ != "event: session.appended" {
			t.Fatalf("before the append, the stream gave %q: %s", typ, line)
		}
		if strings.Contains(line, lastSeq) {
			return // the append, announced
		}
	}
	t.Errorf("the stream ended without announcing the append (%s): %v", lastSeq, lines.Err())
}

func TestSearchPage(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	c := b.signIn(t, b.aliceToken)
	main := b.sessions["main"]
	results := regexp.MustCompile(`class="search-result"`)

	r := b.get(t, c, "/search", 200)
	expectHeaders(t, r)
	expectHas(t, r.body, `<form class="filters" method="get" action="/search" role="search"`, `aria-current="page">Search<`)
	expectLacks(t, r.body, `class="search-result"`, "Nothing found")

	// A word in a long tool result: the snippet is cut around it, the
	// words marked, linking to the entry in its session.
	r = b.get(t, c, "/search?q=clock+went+backwards", 200)
	if n := len(results.FindAllString(r.body, -1)); n != 1 {
		t.Errorf("clock went backwards: %d results, want 1", n)
	}
	expectHas(t, r.body, `href="/sessions/`+main.ID+`#e4"`, "#4 tool_result", "Fix the flaky login test",
		"session <mark>clock</mark> <mark>went</mark> <mark>backwards</mark>", "…")
	expectLacks(t, r.body, strings.Repeat("=== RUN   TestLogin ", 10))

	// Filters narrow it, and stay in the form.
	r = b.get(t, c, "/search?q=clock&kind=tool_call", 200)
	expectHas(t, r.body, `#e5"`, "#5 tool_call Edit", `<option value="tool_call" selected>`, "internal/auth/<mark>clock</mark>.go")
	if n := len(results.FindAllString(r.body, -1)); n != 1 {
		t.Errorf("clock in tool calls: %d results, want 1", n)
	}
	r = b.get(t, c, "/search?q=database+driver&kind=session&outcome=failed", 200)
	expectHas(t, r.body, "the session's goal", "Upgrade the <mark>database</mark> <mark>driver</mark>", `href="/sessions/`+b.sessions["failed"].ID+`"`)
	r = b.get(t, c, "/search?q=nowhere+to+be+found", 200)
	expectHas(t, r.body, "Nothing found")

	// What a transcript says is text, also in a snippet.
	r = b.get(t, c, "/search?q=pwned", 200)
	expectHas(t, r.body, "&lt;script&gt;window.__<mark>pwned</mark>")
	expectLacks(t, r.body, "<script>window")

	// A search that cannot be read says what to fix, with the form.
	r = b.get(t, c, "/search?q=%25%25", 400)
	expectHas(t, r.body, `role="alert"`, "say what to search for", `<form class="filters"`)
	r = b.get(t, c, "/search?q=clock&kind=memo", 400)
	expectHas(t, r.body, `role="alert"`, "memo", "is not an entry kind")

	// The admin picks a project first; then searches it.
	admin := b.signIn(t, adminToken)
	r = b.get(t, admin, "/search?q=clock", 200)
	expectHas(t, r.body, "Choose a project")
	r = b.get(t, admin, "/search?q=backwards&project=demo", 200)
	expectHas(t, r.body, `href="/sessions/`+main.ID+`?project=demo#e4"`)

	// Every page's top bar has the search box, sending to this page.
	r = b.get(t, c, "/sessions", 200)
	expectHas(t, r.body, `<form class="search-box" method="get" action="/search" role="search">`, `id="search-box" name="q"`)
}
