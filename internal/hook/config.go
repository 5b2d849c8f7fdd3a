package hook

import (
	"path/filepath"
	"strings"
	"time"
)

// Defaults for Config.
const (
	DefaultURL = "http://127.0.0.1:7474"
	// DefaultDeadline bounds all server calls of one hook invocation.
	DefaultDeadline = time.Second
	// DefaultPolicyDeadline bounds the policy and claims look-ups of a
	// PreToolUse answer.
	DefaultPolicyDeadline = 300 * time.Millisecond
	// DefaultPolicyTTL is how long a fetched policy is used before it is
	// fetched again.
	DefaultPolicyTTL = 5 * time.Minute
	// policyRetry is how long a failed policy fetch is not retried, so a
	// server that is down costs one failed fetch, not one per command.
	policyRetry = 30 * time.Second
)

// Config is what a hook invocation needs to know of its surroundings.
// ConfigFromEnv fills it from the environment; zero durations take the
// defaults.
type Config struct {
	// URL is the logbook server (LOGBOOK_URL).
	URL string
	// Token is the bearer token (LOGBOOK_TOKEN): a token for an actor in
	// the project.
	Token string
	// Project, when set (LOGBOOK_PROJECT), is the project of every
	// session; else it is the name of the git top-level folder of the
	// event's working directory, else the token's project.
	Project string
	// SpoolDir holds the spool, the set-aside records and the caches
	// (LOGBOOK_SPOOL_DIR, else $XDG_DATA_HOME/logbook/spool, else
	// ~/.local/share/logbook/spool).
	SpoolDir string
	// IgnoreClaims turns the claims gate off for this hook (`logbook hook
	// claude --guard-claims=false`): a write to a file another live
	// session claimed is then not put to the server. The gate is on by
	// default; the project's policy says whether it denies or asks.
	IgnoreClaims bool
	// FlushCommand, when set, is the command line of a process that
	// delivers the spool (`logbook hook flush --background`): PreToolUse
	// starts it without waiting, so its record is sent at once rather than
	// with the next hook call. See BackgroundFlushCommand.
	FlushCommand []string
	// EnvFile is Claude Code's CLAUDE_ENV_FILE, given to SessionStart
	// hooks: the hook exports the session's name there for the git guard.
	EnvFile string

	Deadline       time.Duration
	PolicyDeadline time.Duration
	PolicyTTL      time.Duration
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

// ConfigFromEnv reads the configuration from environment variables through
// getenv (os.Getenv in the binary).
func ConfigFromEnv(getenv func(string) string) Config {
	cfg := Config{
		URL:      strings.TrimRight(getenv("LOGBOOK_URL"), "/"),
		Token:    getenv("LOGBOOK_TOKEN"),
		Project:  getenv("LOGBOOK_PROJECT"),
		SpoolDir: getenv("LOGBOOK_SPOOL_DIR"),
		EnvFile:  getenv("CLAUDE_ENV_FILE"),
	}
	if cfg.URL == "" {
		cfg.URL = DefaultURL
	}
	if cfg.SpoolDir == "" {
		data := getenv("XDG_DATA_HOME")
		if data == "" {
			home := getenv("HOME")
			if home == "" {
				home = "."
			}
			data = filepath.Join(home, ".local", "share")
		}
		cfg.SpoolDir = filepath.Join(data, "logbook", "spool")
	}
	return cfg
}

// withDefaults returns cfg with zero values replaced by the defaults.
func (cfg Config) withDefaults() Config {
	if cfg.URL == "" {
		cfg.URL = DefaultURL
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.PolicyDeadline <= 0 {
		cfg.PolicyDeadline = DefaultPolicyDeadline
	}
	if cfg.PolicyTTL <= 0 {
		cfg.PolicyTTL = DefaultPolicyTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}
