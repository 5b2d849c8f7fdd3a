package hook

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// readGit learns what gitLookup does by reading the repository's files
// instead of running git: a hook runs before every tool call, and starting
// a git process costs it a few milliseconds each time. It walks up from
// dir to the folder holding .git (a folder, or a file naming the git
// folder, as in a worktree or a submodule), reads HEAD, and resolves the
// branch's commit from its loose ref or packed-refs. It reports false for
// anything it does not read with certainty (no .git found, a HEAD it does
// not know, a ref it cannot find), and gitLookup asks git then.
func readGit(dir string) (GitInfo, bool) {
	top, gitDir, found, ok := findGitDir(dir)
	if !ok {
		return GitInfo{}, false
	}
	if !found {
		return GitInfo{}, true // in no repository, as git would say
	}
	common := gitDir
	if raw, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		// A worktree keeps HEAD in its own folder, refs in the common one.
		c := strings.TrimSpace(string(raw))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	raw, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return GitInfo{}, false
	}
	head := strings.TrimSpace(string(raw))
	ref, symbolic := strings.CutPrefix(head, "ref: ")
	if !symbolic {
		if !isSHA(head) {
			return GitInfo{}, false
		}
		return GitInfo{TopLevel: top, Head: head}, true // detached
	}
	branch, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok {
		return GitInfo{}, false
	}
	sha, found := resolveRef(common, ref)
	if !found {
		// No commit yet on this branch: a new repository, or a ref git
		// keeps somewhere this reader does not look (reftable).
		if _, err := os.Stat(filepath.Join(common, "reftable")); err == nil {
			return GitInfo{}, false
		}
		return GitInfo{TopLevel: top, Branch: branch}, true
	}
	return GitInfo{TopLevel: top, Branch: branch, Head: sha}, true
}

// findGitDir walks up from dir to the first folder with a .git entry and
// returns that folder and the git folder .git is or names; found is false
// when no folder up to the root has one. ok is false when it cannot tell.
func findGitDir(dir string) (top, gitDir string, found, ok bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false, false
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // git reports the top folder with links resolved
	}
	for {
		dotGit := filepath.Join(dir, ".git")
		info, err := os.Stat(dotGit)
		switch {
		case err == nil && info.IsDir():
			return dir, dotGit, true, true
		case err == nil:
			raw, err := os.ReadFile(dotGit)
			if err != nil {
				return "", "", false, false
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(string(raw)), "gitdir: ")
			if !ok {
				return "", "", false, false
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(dir, target)
			}
			return dir, filepath.Clean(target), true, true
		case !os.IsNotExist(err):
			return "", "", false, false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", false, true
		}
		dir = parent
	}
}

// resolveRef returns the commit a full ref name points at, from its loose
// file or from packed-refs.
func resolveRef(gitDir, ref string) (string, bool) {
	if raw, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		sha := strings.TrimSpace(string(raw))
		return sha, isSHA(sha)
	}
	f, err := os.Open(filepath.Join(gitDir, "packed-refs"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		sha, name, ok := strings.Cut(lines.Text(), " ")
		if ok && name == ref && isSHA(sha) {
			return sha, true
		}
	}
	return "", false
}

// isSHA reports whether s is a full object name (SHA-1 or SHA-256).
func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
