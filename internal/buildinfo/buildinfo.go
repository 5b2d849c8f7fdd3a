// Package buildinfo says which build of logbook is running: the module
// version and the commit it was built from, as the Go toolchain stamped
// them into the binary (runtime/debug.ReadBuildInfo). `logbook version`
// prints it, and the MCP server names it in its serverInfo.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Info is what a binary knows of its own build.
type Info struct {
	// Version is the module version: a tag (v1.2.0), a pseudo-version
	// for a build from a checkout (v0.0.0-20261202030000-0123456789ab),
	// or "(devel)" where the toolchain stamped none (go test, go run).
	Version string
	// Commit is the VCS revision built from, Modified whether the work
	// tree had uncommitted changes, Time the commit's time (RFC 3339);
	// empty where the build was not made in a checkout (-buildvcs=false).
	Commit   string
	Modified bool
	Time     string
	// Go is the toolchain that built it, e.g. go1.26.8.
	Go string
}

// Read returns the running binary's build information.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "(devel)"}
	}
	return parse(bi)
}

func parse(bi *debug.BuildInfo) Info {
	info := Info{Version: bi.Main.Version, Go: bi.GoVersion}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		case "vcs.time":
			info.Time = s.Value
		}
	}
	return info
}

// String is the version and commit on one line, as `logbook version`
// prints it: "v1.2.0 (commit 0123456789ab, 2026-12-02T03:00:00Z, modified, go1.26.8)".
func (i Info) String() string {
	var parts []string
	if i.Commit != "" {
		parts = append(parts, "commit "+i.Commit)
	}
	if i.Time != "" {
		parts = append(parts, i.Time)
	}
	if i.Modified {
		parts = append(parts, "modified")
	}
	if i.Go != "" {
		parts = append(parts, i.Go)
	}
	if len(parts) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(parts, ", ") + ")"
}
