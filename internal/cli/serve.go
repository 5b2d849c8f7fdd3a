package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/logbookhq/logbook/internal/metrics"
	"github.com/logbookhq/logbook/internal/service"
	"github.com/logbookhq/logbook/internal/store"
)

// serve runs the server until ctx is done (a signal in main).
func serve(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	addr := fs.String("addr", "", "address to listen on (env LOGBOOK_ADDR; default 127.0.0.1:7474)")
	db := fs.String("db", "", "SQLite file or postgres:// URL (env LOGBOOK_DB; default "+defaultDB(env)+")")
	idle := fs.Duration("idle", service.DefaultIdleWindow, "an active session not seen for this long reads idle")
	timeout := fs.Duration("session-timeout", service.DefaultSessionTimeout, "an active session not seen for this long is ended as timed_out")
	window := fs.Duration("window", service.DefaultPriorWindow, "how far back setting a goal looks for earlier partial and failed attempts")
	retention := fs.Duration("event-retention", service.DefaultEventRetention, "events older than this are pruned")
	rate := fs.Float64("rate-limit", service.DefaultRateLimit, "requests a second one token may make on average, on the API, /mcp, OTLP (/v1/traces, /v1/logs, /v1/metrics) and the web UI together (negative: no limit)")
	burst := fs.Int("rate-burst", service.DefaultRateBurst, "requests one token may make at once after a quiet spell")
	streams := fs.Int("max-streams", service.DefaultMaxStreams, "event streams one token may hold open at once (/v1/events and /ui/events together)")
	publicURL := fs.String("public-url", "", "the https:// address browsers reach the server at, behind a TLS-terminating proxy: the web UI's cookies are then Secure (env LOGBOOK_PUBLIC_URL)")
	headerTimeout := fs.Duration("header-timeout", defaultHeaderTimeout, "a request's headers must arrive within this")
	bodyTimeout := fs.Duration("body-timeout", defaultBodyTimeout, "a request's body must arrive within this once the server reads it (a slower one gets 408)")
	idleTimeout := fs.Duration("idle-timeout", defaultIdleTimeout, "a kept-alive connection without a request is closed after this")
	readDB := fs.String("read-db", "", "postgres:// URL of a read replica (a streaming standby) of --db: lists, searches, statistics and transcripts are read from it while it keeps up (env LOGBOOK_READ_DB)")
	readLag := fs.Duration("read-max-lag", defaultReadMaxLag, "reads across sessions (lists, searches, statistics) go to the --read-db replica only while it is at most this far behind; a session's transcript goes there only once it has every entry this server wrote to it")
	authCache := fs.Duration("auth-cache", 2*time.Second, "how long a token's lookup is remembered (a revoked token works at most this long after, and its event streams end within it; 0: look up every request)")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: logbook serve [flags]

Runs the logbook server: the web UI at /, the JSON API under /v1, the MCP
server at /mcp, OTLP at /v1/traces, /v1/logs and /v1/metrics, and
/healthz. The schema is created or migrated on start. On the first start
an admin token is made: LOGBOOK_ADMIN_TOKEN when set, else a new one,
printed once and saved (0600) beside the database.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return parseExit(err)
	}
	*addr = listenAddr(env, *addr)
	dbValue := dbFlagValue(env, *db)
	log := logger(env.Stderr)
	if *publicURL == "" {
		*publicURL = env.Getenv("LOGBOOK_PUBLIC_URL")
	}
	public, err := parsePublicURL(*publicURL)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 2
	}

	if *readDB == "" {
		*readDB = env.Getenv("LOGBOOK_READ_DB")
	}
	if *readDB != "" && (!IsPostgres(dbValue) || !IsPostgres(*readDB) || env.ReadFrom == nil) {
		fmt.Fprintln(env.Stderr, "logbook: --read-db is for PostgreSQL: give --db and --read-db as postgres:// URLs, the second a read replica of the first (SQLite is one file, read where it is written)")
		return 2
	}

	st, err := env.OpenStore(ctx, dbValue)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}
	defer st.Close()
	if *readDB != "" {
		if err := env.ReadFrom(ctx, st, *readDB, *readLag, log); err != nil {
			fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
			return 1
		}
	}
	collectLessOften(env)
	counted := metrics.New()
	svc := service.New(st, service.Options{IdleWindow: *idle, PriorWindow: *window, SessionTimeout: *timeout, Logger: log, AuthCacheTTL: *authCache, Committed: counted.Event, Removed: counted.Removed, AlertAttempted: counted.AlertAttempt, Costed: counted.Cost,
		RateLimit: *rate, RateBurst: *burst, MaxStreams: *streams})

	mux := http.NewServeMux()
	serverRoutes(mux, svc, log, counted, public)
	listener, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(env.Stderr, "logbook: cannot listen on %s: %v (is another logbook running? choose one with --addr)\n", *addr, err)
		return 1
	}
	server := newHTTPServer(counted.Wrap(mux), serverLimits{Header: *headerTimeout, Body: *bodyTimeout, Idle: *idleTimeout})
	fmt.Fprintf(env.Stdout, "logbook listening on http://%s, database %s\n", listener.Addr(), describeDB(dbValue))
	if *readDB != "" {
		fmt.Fprintf(env.Stdout, "reading from the replica %s while it is at most %s behind\n", describeDB(*readDB), *readLag)
	}
	if public != nil {
		fmt.Fprintf(env.Stdout, "browsers reach it at %s\n", public)
	}
	if err := announceAdminToken(ctx, env, svc, dbValue); err != nil {
		listener.Close()
		fmt.Fprintf(env.Stderr, "logbook: %v\n", err)
		return 1
	}

	go svc.Run(ctx)
	go sweep(ctx, svc, *retention, log)
	go svc.DeliverAlerts(ctx) // posts the alerts rules raise to their webhooks
	go func() {
		if err := svc.Listen(ctx); err != nil {
			log.Warn("not following other replicas' events", "err", err)
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- server.Serve(listener) }()
	select {
	case err := <-errc:
		fmt.Fprintf(env.Stderr, "logbook: server stopped: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("shutdown did not finish cleanly", "err", err)
	}
	fmt.Fprintln(env.Stdout, "logbook stopped")
	return 0
}

// defaultReadMaxLag is how far behind a read replica may be for reads
// across sessions to go to it.
const defaultReadMaxLag = 5 * time.Second

// listenAddr is where serve listens: the flag, else LOGBOOK_ADDR, else
// loopback port 7474, never another interface unless told: the server
// speaks plain HTTP and belongs behind a TLS-terminating proxy.
func listenAddr(env Env, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := env.Getenv("LOGBOOK_ADDR"); v != "" {
		return v
	}
	return "127.0.0.1:7474"
}

// parsePublicURL reads --public-url: empty, or an absolute http(s) URL
// of a host, with no path (logbook serves from the root), query or
// fragment.
func parsePublicURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("--public-url %q is not an address browsers use: give one like https://logbook.example.com", raw)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("--public-url %q: give the scheme and host only (logbook serves from the root of its address), like https://logbook.example.com", raw)
	}
	u.Path = ""
	return u, nil
}

// announceAdminToken makes the admin token on first start and, when it
// generated one, prints it once and saves it beside the data.
func announceAdminToken(ctx context.Context, env Env, svc *service.Service, db string) error {
	value, err := svc.EnsureAdminToken(ctx, env.Getenv("LOGBOOK_ADMIN_TOKEN"))
	if err != nil || value == "" {
		return err
	}
	path := adminTokenPath(env, db)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("error creating %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
		return fmt.Errorf("error saving the admin token to %s: %w", path, err)
	}
	fmt.Fprintf(env.Stdout, "admin token (shown once, saved to %s):\n  %s\n", path, value)
	return nil
}

// adminTokenPath is where the generated admin token is saved: beside the
// SQLite file, or in the default data folder for PostgreSQL.
func adminTokenPath(env Env, db string) string {
	if IsPostgres(db) {
		db = defaultDB(env)
	}
	return filepath.Join(filepath.Dir(db), "admin-token")
}

// sweep runs the sweeper once a minute until ctx is done: timed-out
// sessions, expired claims, old events, the projects' retention, and the
// idle_with_claims alerts and the cost_over_budget ones of a day no write raised.
func sweep(ctx context.Context, svc *service.Service, retention time.Duration, log *slog.Logger) {
	ticker := time.NewTicker(time.Minute)
	defer ticker.Stop()
	for {
		res, err := svc.Sweep(ctx, retention)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("sweeping failed", "err", err, "retention_sessions", res.Retention.Sessions, "retention_payloads", res.Retention.Payloads)
		case res.TimedOut > 0 || res.ClaimsExpired > 0 || res.EventsPruned > 0 || res.Retention.Batches > 0 || res.AlertsRaised > 0:
			log.Info("swept", "timed_out_sessions", res.TimedOut, "expired_claims", res.ClaimsExpired, "pruned_events", res.EventsPruned,
				"retention_sessions", res.Retention.Sessions, "retention_entries", res.Retention.Entries, "retention_payloads", res.Retention.Payloads,
				"alerts_raised", res.AlertsRaised)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// openService opens the database and a service on it, for subcommands that
// work on the database directly.
func openService(ctx context.Context, env Env, db string) (*service.Service, store.Store, error) {
	st, err := env.OpenStore(ctx, dbFlagValue(env, db))
	if err != nil {
		return nil, nil, err
	}
	return service.New(st, service.Options{Logger: logger(env.Stderr)}), st, nil
}

// collectLessOften sets the garbage collector to run when the heap has
// grown by 400% instead of Go's 100%, unless GOGC says otherwise. A
// server's live heap is small (tens of MB), and under hundreds of agents
// collecting less often gives it about 10% more requests a second for a
// resident size that stays under 100 MB (BENCHMARKS.md).
func collectLessOften(env Env) {
	if env.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
