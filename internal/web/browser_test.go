package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/logbookhq/logbook/internal/logbook"
	"github.com/logbookhq/logbook/internal/service"
)

// The browser tests drive Debian's chromium, headless, through the UI as a
// person would. Without chromium they skip, except in CI (CI=true), where
// they fail. Screenshots of the main pages go to a folder that outlives the
// test (its path is logged); with LOGBOOK_UPDATE_SCREENSHOTS=1 the session
// page's is also written to docs/session-page.png for the README.

// chromiumPath finds the browser, or skips (fails in CI) without one.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, candidate := range []string{os.Getenv("LOGBOOK_CHROMIUM"), "/usr/bin/chromium", "chromium"} {
		if candidate == "" {
			continue
		}
		if path, err := exec.LookPath(candidate); err == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required here (CI) but is not installed: apt-get install -y chromium")
	}
	t.Skip("SKIPPING browser tests: chromium is not installed (apt-get install -y chromium, or set LOGBOOK_CHROMIUM)")
	return ""
}

// newBrowser starts a headless chromium with a fresh profile and returns a
// tab's context; the browser stops when the test ends.
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	profile, err := os.MkdirTemp("", "logbook-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // the tests run as root in a container
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	// The first run starts the browser, so it has no timeout (see chromedp.Run).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// consoleLog keeps what the pages wrote to the console.
type consoleLog struct {
	mu       sync.Mutex
	messages []chromedp.ConsoleMessage
}

func (l *consoleLog) follow(ctx context.Context) {
	for m, err := range chromedp.Console(ctx) {
		if err != nil {
			return
		}
		l.mu.Lock()
		l.messages = append(l.messages, m)
		l.mu.Unlock()
	}
}

// problems are the messages that say a page broke: exceptions, and
// anything the Content-Security-Policy refused.
func (l *consoleLog) problems() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, m := range l.messages {
		if m.IsException() || strings.Contains(m.Text, "Content Security Policy") {
			out = append(out, m.String())
		}
	}
	return out
}

// shots saves screenshots into a folder that outlives the test.
type shots struct {
	t   *testing.T
	dir string
}

func newShots(t *testing.T) *shots {
	dir, err := os.MkdirTemp("", "logbook-screenshots-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots: %s", dir)
	return &shots{t: t, dir: dir}
}

func (s *shots) save(name string, png []byte) {
	if err := os.WriteFile(filepath.Join(s.dir, name), png, 0o644); err != nil {
		s.t.Error(err)
	}
}

// repoRoot is the folder of go.mod above the package.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// within runs steps with a deadline.
func within(t *testing.T, ctx context.Context, d time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// eval returns a JavaScript expression's value.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// screenshot captures the page: the viewport, or the full page.
func screenshot(t *testing.T, ctx context.Context, full bool) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	action := chromedp.CaptureScreenshot()
	if full {
		action = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return png
}

// waitFor evaluates a JavaScript condition every 50 ms until it holds. An
// evaluation that fails (the page is being replaced) is tried again.
func waitFor(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(12 * time.Second)
	for {
		step, cancel := context.WithTimeout(ctx, 2*time.Second)
		ok, err := chromedp.Run(step, chromedp.Evaluate[bool]("Boolean("+expr+")"))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// postAPI sends a JSON request to the API with alice's token.
func (b *bundle) postAPI(t *testing.T, path string, body any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", b.srv.URL+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+b.aliceToken)
	r := b.do(t, http.DefaultClient, req)
	if r.status >= 300 {
		t.Fatalf("POST %s: %d %s", path, r.status, r.body)
	}
}

func TestBrowser(t *testing.T) {
	path := chromiumPath(t)
	b := setup(t, true)
	ctx := newBrowser(t, path)
	console := &consoleLog{}
	go console.follow(ctx)
	pics := newShots(t)
	url := func(p string) string { return b.srv.URL + p }
	main, child := b.sessions["main"], b.sessions["child"]

	t.Run("SignIn", func(t *testing.T) {
		within(t, ctx, 15*time.Second,
			chromedp.Navigate(url("/sessions")),
			chromedp.WaitVisible(chromedp.CSS("#token")),
		)
		pics.save("sign-in.png", screenshot(t, ctx, false))
		within(t, ctx, 15*time.Second,
			chromedp.SendKeys(chromedp.CSS("#token"), b.aliceToken),
			chromedp.Submit(chromedp.CSS("#token")),
		)
		waitFor(t, ctx, "the sessions list", `document.querySelector("form.filters") !== null`)
		if loc := eval[string](t, ctx, "location.pathname"); loc != "/sessions" {
			t.Errorf("after signing in the browser is at %q, want /sessions", loc)
		}
		if cookie := eval[string](t, ctx, "document.cookie"); strings.Contains(cookie, "logbook_token") {
			t.Error("the token cookie is readable by scripts")
		}
	})

	t.Run("Dashboard", func(t *testing.T) {
		within(t, ctx, 15*time.Second, chromedp.Navigate(url("/")), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
		if n := eval[int](t, ctx, `document.querySelectorAll("svg.chart .bar").length`); n < 14 {
			t.Errorf("the outcomes chart has %d bars, want 14 days and the blockers", n)
		}
		pics.save("dashboard.png", screenshot(t, ctx, true))
	})

	t.Run("FilterTheList", func(t *testing.T) {
		within(t, ctx, 15*time.Second,
			chromedp.Navigate(url("/sessions")),
			chromedp.WaitVisible(chromedp.CSS("tr.session-row")),
		)
		if n := eval[int](t, ctx, `document.querySelectorAll("tr.session-row").length`); n != 5 {
			t.Errorf("%d sessions listed, want 5", n)
		}
		within(t, ctx, 15*time.Second,
			chromedp.SetValue(chromedp.CSS(`select[name="outcome"]`), "failed"),
			chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
		)
		waitFor(t, ctx, "the filtered list", `location.search.includes("outcome=failed") && document.querySelectorAll("tr.session-row").length === 1`)
		if text := eval[string](t, ctx, `document.querySelector("tr.session-row").innerText`); !strings.Contains(text, "Upgrade the database driver") || !strings.Contains(text, "failed") {
			t.Errorf("the failed session's row reads %q", text)
		}
		within(t, ctx, 15*time.Second, chromedp.Navigate(url("/sessions?since=30d")), chromedp.WaitVisible(chromedp.CSS("tr.session-row")))
		pics.save("sessions.png", screenshot(t, ctx, true))
	})

	t.Run("LiveList", func(t *testing.T) {
		waitFor(t, ctx, "the live stream", `document.body.dataset.live === "on"`)
		b.postAPI(t, "/v1/sessions", map[string]any{"project": "demo", "harness": "claude-code", "harness_session_id": "live-1",
			"goal": "A session started while the list is open"})
		waitFor(t, ctx, "the new session in the list", `document.querySelector("#session-table").innerText.includes("A session started while the list is open")`)
	})

	t.Run("OpenASession", func(t *testing.T) {
		within(t, ctx, 15*time.Second,
			chromedp.Navigate(url("/sessions")),
			chromedp.Click(chromedp.CSS(`tr[data-id="`+main.ID+`"] a.title`)),
		)
		waitFor(t, ctx, "the session page", `location.pathname === "/sessions/`+main.ID+`" && document.querySelector("#timeline") !== null`)
		if h1 := eval[string](t, ctx, `document.querySelector("h1").innerText`); h1 != "Fix the flaky login test" {
			t.Errorf("the session page's heading is %q", h1)
		}
	})

	t.Run("SubagentInTheTree", func(t *testing.T) {
		link := `.tree a[href="/sessions/` + child.ID + `"]`
		if text := eval[string](t, ctx, `document.querySelector('`+link+`').innerText`); !strings.Contains(text, "Explore how sessions use the clock") || !strings.Contains(text, "active") {
			t.Errorf("the subagent in the tree reads %q", text)
		}
		within(t, ctx, 15*time.Second, chromedp.Click(chromedp.CSS(link)))
		waitFor(t, ctx, "the subagent's page", `location.pathname === "/sessions/`+child.ID+`" && document.querySelector(".crumb") !== null`)
		if h1 := eval[string](t, ctx, `document.querySelector("h1").innerText`); h1 != "Explore how sessions use the clock" {
			t.Errorf("the subagent's page heading is %q", h1)
		}
	})

	t.Run("MaliciousEntryIsText", func(t *testing.T) {
		within(t, ctx, 15*time.Second, chromedp.Navigate(url("/sessions/"+main.ID)), chromedp.WaitVisible(chromedp.CSS("#timeline")))
		if !eval[bool](t, ctx, `document.querySelector("#timeline").innerText.includes(`+jsString(malicious)+`)`) {
			t.Error("the malicious entry is not shown as text")
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("#timeline script, #timeline img").length`); n != 0 {
			t.Errorf("the transcript made %d elements", n)
		}
		if eval[bool](t, ctx, `window.__pwned !== undefined`) {
			t.Error("the transcript ran script")
		}
	})

	t.Run("LiveEntries", func(t *testing.T) {
		waitFor(t, ctx, "the live stream", `document.body.dataset.live === "on"`)
		b.postAPI(t, "/v1/sessions/"+main.ID+"/entries", map[string]any{"entries": []map[string]any{
			{"kind": "tool_call", "tool": "Bash", "tool_call_id": "t9", "payload": map[string]string{"command": "go test ./auth -count=100"}},
			{"kind": "message", "role": "assistant", "text": "Running the test 100 times now."}}})
		waitFor(t, ctx, "the new entries", `document.querySelector("#timeline").innerText.includes("Running the test 100 times now.")`)
		b.postAPI(t, "/v1/sessions/"+main.ID+"/entries", map[string]any{"entries": []map[string]any{
			{"kind": "tool_result", "tool_call_id": "t9", "text": "ok  \tauth\t2.1s"}}})
		waitFor(t, ctx, "the result under its call",
			`(document.querySelector('li[data-call-id="t9"] .result-slot') || {innerText: ""}).innerText.includes("ok")`)
		if n := eval[int](t, ctx, `document.querySelectorAll('li[data-result-for="t9"]').length`); n != 0 {
			t.Errorf("the live result also shows as a row of its own (%d)", n)
		}
		if seq := eval[string](t, ctx, `document.querySelector("#timeline").dataset.lastSeq`); seq != "11" {
			t.Errorf("the timeline's last seq is %s, want 11", seq)
		}
	})

	t.Run("LiveStateChange", func(t *testing.T) {
		b.postAPI(t, "/v1/sessions/"+child.ID+"/end", map[string]any{"outcome": "success", "result": "found 3 uses"})
		waitFor(t, ctx, "the subagent's new state in the tree",
			`document.querySelector('.tree a[href="/sessions/`+child.ID+`"]').innerText.includes("ended")`)
		within(t, ctx, 5*time.Second, chromedp.ScrollIntoView(chromedp.CSS("h1")))
		png := screenshot(t, ctx, false)
		pics.save("session.png", png)
		pics.save("session-full.png", screenshot(t, ctx, true))
		if os.Getenv("LOGBOOK_UPDATE_SCREENSHOTS") == "1" {
			docs := filepath.Join(repoRoot(t), "docs")
			if err := os.MkdirAll(docs, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(docs, "session-page.png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", filepath.Join(docs, "session-page.png"))
		}
	})

	t.Run("Messages", func(t *testing.T) {
		// The session page is open and live: bob's message to it shows in
		// its Messages panel as it is sent, and once the session takes it,
		// as read, with the note in the transcript.
		within(t, ctx, 15*time.Second, chromedp.Navigate(url("/sessions/"+main.ID)), chromedp.WaitVisible(chromedp.CSS("#messages")))
		waitFor(t, ctx, "the live stream", `document.body.dataset.live === "on"`)
		bob := b.token(t, "demo", "bob")
		raw, _ := json.Marshal(map[string]string{"to_session": main.ID, "text": "Hold off internal/store: I am migrating it"})
		req, _ := http.NewRequest("POST", b.srv.URL+"/v1/messages", bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+bob)
		if r := b.do(t, http.DefaultClient, req); r.status != 201 {
			t.Fatalf("sending: %d %s", r.status, r.body)
		}
		waitFor(t, ctx, "the message in the panel", `document.querySelector("#messages").innerText.includes("Hold off internal/store")`)
		if text := eval[string](t, ctx, `document.querySelector("#messages li.message").innerText`); !strings.Contains(text, "bob → this session") || !strings.Contains(text, "waiting") {
			t.Errorf("the message reads %q", text)
		}
		b.postAPI(t, "/v1/sessions/"+main.ID+"/inbox", nil)
		waitFor(t, ctx, "the message read", `document.querySelector("#messages .badge").innerText === "read"`)
		waitFor(t, ctx, "the message in the transcript", `document.querySelector("#timeline").innerText.includes("Hold off internal/store")`)
		pics.save("session-messages.png", screenshot(t, ctx, true))
	})

	t.Run("Search", func(t *testing.T) {
		b.postAPI(t, "/v1/sessions/"+main.ID+"/entries", map[string]any{"entries": []map[string]any{
			{"kind": "message", "role": "assistant", "text": "本地数据库连接超时，换一个端口再试。"}}})
		// The search box of the top bar, from any page.
		within(t, ctx, 15*time.Second,
			chromedp.Navigate(url("/sessions")),
			chromedp.SendKeys(chromedp.CSS("#search-box"), "shares clock"),
			chromedp.Submit(chromedp.CSS("#search-box")),
		)
		waitFor(t, ctx, "the results", `location.pathname === "/search" && document.querySelectorAll(".search-result").length === 1`)
		if marks := eval[string](t, ctx, `[...document.querySelectorAll(".search-result mark")].map(m => m.innerText).join(" ")`); marks != "shares clock" {
			t.Errorf("the marked words are %q, want shares clock", marks)
		}
		if eval[string](t, ctx, `document.querySelector(".search-result .title").innerText`) != "Fix the flaky login test" {
			t.Error("the result does not name its session")
		}
		// A result leads to the entry in its session.
		within(t, ctx, 15*time.Second, chromedp.Click(chromedp.CSS(".search-result a.title")))
		waitFor(t, ctx, "the entry in its session", `location.pathname === "/sessions/`+main.ID+`" && location.hash === "#e8" && document.querySelector("#e8") !== null`)
		if !eval[bool](t, ctx, `document.querySelector("#e8").innerText.includes("The test shares a clock between sessions")`) {
			t.Error("the entry the result leads to is not the one found")
		}
		// Chinese text, found by two of its characters; the search page's
		// own form.
		within(t, ctx, 15*time.Second,
			chromedp.Navigate(url("/search")),
			chromedp.SendKeys(chromedp.CSS(`form.filters input[name="q"]`), "超时"),
			chromedp.Click(chromedp.CSS(`form.filters button[type="submit"]`)),
		)
		waitFor(t, ctx, "the Chinese result", `document.querySelectorAll(".search-result mark").length === 1`)
		if mark := eval[string](t, ctx, `document.querySelector(".search-result mark").innerText`); mark != "超时" {
			t.Errorf("the marked text is %q, want 超时", mark)
		}
		pics.save("search.png", screenshot(t, ctx, true))
	})

	t.Run("Alerts", func(t *testing.T) {
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		defer hook.Close()
		if _, err := b.svc.AddAlertRule(b.ctx, b.admin, "demo", service.AlertRuleBody{Name: "failures", Kind: logbook.AlertSessionFailed,
			WebhookURL: hook.URL + "/services/T000/B000/SECRET", Format: logbook.AlertSlack}); err != nil {
			t.Fatal(err)
		}
		failing := b.start(t, "alerting", service.StartParams{Harness: "codex", Fields: logbook.SessionFields{Goal: ptr("Rotate the signing keys")}})
		b.end(t, failing.ID, service.EndParams{Outcome: logbook.OutcomeFailed, Result: "the vault was sealed"})
		if _, err := b.svc.DeliverDue(b.ctx); err != nil {
			t.Fatal(err)
		}
		// From the top bar's tab.
		within(t, ctx, 15*time.Second, chromedp.Navigate(url("/sessions")), chromedp.Click(chromedp.CSS(`nav.nav a[href^="/alerts"]`)))
		waitFor(t, ctx, "the alerts page", `location.pathname === "/alerts" && document.querySelectorAll("#alert-log li.alert").length === 1`)
		alert := eval[string](t, ctx, `document.querySelector("#alert-log li.alert").innerText`)
		for _, want := range []string{"delivered", "session failed", "Rotate the signing keys", "the vault was sealed", "attempt 1", "HTTP 204"} {
			if !strings.Contains(alert, want) {
				t.Errorf("the alert lacks %q: %s", want, alert)
			}
		}
		if rules := eval[string](t, ctx, `document.querySelector("table.alert-rules").innerText`); !strings.Contains(rules, "failures") || strings.Contains(rules, "SECRET") {
			t.Errorf("the rules as shown: %s", rules)
		}
		pics.save("alerts.png", screenshot(t, ctx, true))
	})

	t.Run("PhoneWidth", func(t *testing.T) {
		within(t, ctx, 15*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		for _, p := range []struct{ name, path, ready string }{
			{"sessions-phone.png", "/sessions", "tr.session-row"},
			{"session-phone.png", "/sessions/" + main.ID, "#timeline"},
			{"dashboard-phone.png", "/", "svg.chart"},
			{"search-phone.png", "/search?q=clock", ".search-result"},
			{"alerts-phone.png", "/alerts", "#alert-log"},
		} {
			within(t, ctx, 15*time.Second, chromedp.Navigate(url(p.path)), chromedp.WaitVisible(chromedp.CSS(p.ready)))
			if w := eval[int](t, ctx, "document.documentElement.scrollWidth"); w > 390 {
				t.Errorf("%s is %d px wide on a 390 px screen", p.path, w)
			}
			pics.save(p.name, screenshot(t, ctx, true))
		}
		within(t, ctx, 15*time.Second, chromedp.EmulateViewport(1280, 900))
	})

	t.Run("SignOut", func(t *testing.T) {
		within(t, ctx, 15*time.Second, chromedp.Navigate(url("/")), chromedp.Click(chromedp.CSS("form.sign-out button")))
		waitFor(t, ctx, "the sign-in page", `location.pathname === "/sign-in" && document.querySelector("#token") !== null`)
		within(t, ctx, 15*time.Second, chromedp.Navigate(url("/sessions")), chromedp.WaitVisible(chromedp.CSS("#token")))
	})

	if problems := console.problems(); len(problems) > 0 {
		t.Errorf("the pages logged problems:\n%s", strings.Join(problems, "\n"))
	}
}

// jsString quotes s as a JavaScript string.
func jsString(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}

// TestBrowserDashboardCounts: on a known project, 15 sessions started of
// which 3 still run (7 succeeded, 3 partial, 2 failed) and 2 subagents (one
// running, one succeeded), the dashboard reads "15 started", "3 active",
// outcomes that add up to 12, and the cost of them all, subagents
// included; with subagents counted, 17 started and 4 active.
func TestBrowserDashboardCounts(t *testing.T) {
	path := chromiumPath(t)
	b := setup(t, false)
	token := b.token(t, "counts", "carol")
	carol, err := b.svc.Authenticate(b.ctx, token)
	if err != nil {
		t.Fatal(err)
	}
	start := func(name, parent string) logbook.Session { return b.startAs(t, carol, name, parent) }
	spend := func(s logbook.Session, dollars float64) {
		t.Helper()
		if _, err := b.svc.AppendEntries(b.ctx, carol, s.ID, service.Batch{Entries: []logbook.Entry{
			{Kind: logbook.KindNote, Text: "model call", Usage: &logbook.Usage{InputTokens: 1000, CostUSD: &dollars}}}}); err != nil {
			t.Fatal(err)
		}
	}
	var sessions []logbook.Session
	outcomes := map[int]logbook.Outcome{} // by index; the first 3 run on
	for i := range 15 {
		sessions = append(sessions, start(fmt.Sprint("s", i), ""))
		switch {
		case i < 3:
		case i < 10:
			outcomes[i] = logbook.OutcomeSuccess
		case i < 13:
			outcomes[i] = logbook.OutcomePartial
		default:
			outcomes[i] = logbook.OutcomeFailed
		}
	}
	spend(sessions[0], 1.25)
	spend(sessions[9], 0.5)
	helper := start("helper", sessions[0].ID)
	spend(helper, 0.25)
	start("explorer", sessions[1].ID)
	for i, o := range outcomes {
		if _, err := b.svc.EndSession(b.ctx, carol, sessions[i].ID, service.EndParams{Outcome: o}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.svc.EndSession(b.ctx, carol, helper.ID, service.EndParams{Outcome: logbook.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}

	ctx := newBrowser(t, path)
	within(t, ctx, 15*time.Second,
		chromedp.Navigate(b.srv.URL+"/sign-in"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Submit(chromedp.CSS("#token")),
	)
	waitFor(t, ctx, "the dashboard", `document.querySelector("#tile-started") !== null`)
	tiles := func() map[string]string {
		t.Helper()
		return eval[map[string]string](t, ctx, `Object.fromEntries([...document.querySelectorAll(".stats .stat")].map(e => [e.id, e.querySelector(".stat-n").innerText]))`)
	}
	got := tiles()
	want := map[string]string{"tile-started": "15", "tile-active": "3", "tile-success": "7", "tile-partial": "3", "tile-failed": "2", "tile-cost": "$2.00"}
	if !maps.Equal(got, want) {
		t.Errorf("the dashboard's tiles read %v, want %v", got, want)
	}
	if label := eval[string](t, ctx, `document.querySelector("#tile-started").innerText`); !strings.Contains(label, "15\nstarted") && !strings.Contains(label, "15 started") {
		t.Errorf("the started tile reads %q", label)
	}
	// The chart's bar of today says the same in words.
	if title := eval[string](t, ctx, `[...document.querySelectorAll("svg.chart .bar title")].map(e => e.textContent).join("|")`); !strings.Contains(title, "7 success, 3 partial, 2 failed, 3 not ended") {
		t.Errorf("the outcome chart's bars: %q", title)
	}

	within(t, ctx, 15*time.Second, chromedp.Click(chromedp.CSS("#subagents-toggle")))
	waitFor(t, ctx, "the dashboard with subagents", `location.search.includes("subagents=on") && document.querySelector("#tile-started") !== null`)
	got = tiles()
	want = map[string]string{"tile-started": "17", "tile-active": "4", "tile-success": "8", "tile-partial": "3", "tile-failed": "2", "tile-cost": "$2.00"}
	if !maps.Equal(got, want) {
		t.Errorf("with subagents the tiles read %v, want %v", got, want)
	}
}
