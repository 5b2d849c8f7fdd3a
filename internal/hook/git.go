package hook

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// gitTimeout bounds each git call; git answers rev-parse in a few
// milliseconds, so this only matters on a hung file system.
const gitTimeout = 200 * time.Millisecond

// GitInfo is what git says of a working directory. Every field is empty
// when the directory is not in a git work tree or git is not installed.
type GitInfo struct {
	TopLevel string // absolute path of the work tree's top folder
	Branch   string // "" on a detached HEAD
	Head     string // the HEAD commit; "" before the first commit
}

// gitLookup learns about dir from the repository's files when it can
// (readGit), else asks git, in one git process when the repository has a
// commit (two otherwise).
func gitLookup(ctx context.Context, dir string) GitInfo {
	if dir == "" {
		return GitInfo{}
	}
	if os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_WORK_TREE") == "" {
		if info, ok := readGit(dir); ok {
			return info
		}
	}
	return execGit(ctx, dir)
}

// execGit asks git about dir, each call bounded by gitTimeout.
func execGit(ctx context.Context, dir string) GitInfo {
	return execGitWithin(ctx, dir, gitTimeout)
}

// execGitWithin asks git about dir, each call bounded by timeout.
func execGitWithin(ctx context.Context, dir string, timeout time.Duration) GitInfo {
	git, err := exec.LookPath("git")
	if err != nil {
		return GitInfo{}
	}
	run := func(args ...string) []string {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		out, err := exec.CommandContext(ctx, git, append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return nil
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	var info GitInfo
	if lines := run("rev-parse", "--show-toplevel", "HEAD", "--abbrev-ref", "HEAD"); len(lines) == 3 {
		info = GitInfo{TopLevel: lines[0], Head: lines[1], Branch: lines[2]}
	} else if lines := run("rev-parse", "--show-toplevel"); len(lines) == 1 && lines[0] != "" {
		// A repository without commits: no HEAD yet, but maybe a branch name.
		info.TopLevel = lines[0]
		if branch := run("symbolic-ref", "--short", "HEAD"); len(branch) == 1 {
			info.Branch = branch[0]
		}
	}
	if info.Branch == "HEAD" { // detached
		info.Branch = ""
	}
	return info
}

// projectName is the project a session belongs to: the configured one,
// else the name of the git top-level folder, else "" (the server then
// uses the token's project).
func projectName(configured string, g GitInfo) string {
	if configured != "" {
		return configured
	}
	if g.TopLevel != "" {
		return filepath.Base(g.TopLevel)
	}
	return ""
}

// repoPath is a path a tool call names, as claims and touches name it:
// relative to the work tree's top folder when it lies inside it, else
// absolute; relative paths are taken from cwd, and ~ is the home folder. Symbolic links are
// resolved in the part of the path that exists (the file, else the
// nearest folder above it), and in the top folder, so that a path spelled
// through a link is compared as the path it names.
func repoPath(path, cwd string, g GitInfo) string {
	if path == "~" || strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[1:])
		}
	}
	if !filepath.IsAbs(path) {
		if cwd == "" {
			return filepath.ToSlash(filepath.Clean(path))
		}
		path = filepath.Join(cwd, path)
	}
	path = resolveLinks(filepath.Clean(path))
	if g.TopLevel != "" {
		top := resolveLinks(g.TopLevel)
		if rel, err := filepath.Rel(top, path); err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// resolveLinks resolves the symbolic links of the longest leading part of
// the absolute path that exists, and keeps the rest as it is.
func resolveLinks(path string) string {
	rest := ""
	for dir := path; ; {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}
