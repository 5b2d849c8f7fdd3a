package hook

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestReadGitAgreesWithGit: reading the repository's files gives what git
// itself says, in every shape of repository a hook meets, or declines so
// that git is asked.
func TestReadGitAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to compare with: %v", err)
	}
	root := t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	repo := filepath.Join(root, "repo")
	fresh := filepath.Join(root, "fresh")
	sub := filepath.Join(repo, "a", "b")
	for _, d := range []string{repo, fresh, sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git(fresh, "init", "-q", "-b", "trunk")
	git(repo, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(sub, "f.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(repo, "add", ".")
	git(repo, "commit", "-q", "-m", "one")
	wt := filepath.Join(root, "wt")
	git(repo, "worktree", "add", "-q", "-b", "feature", wt)
	link := filepath.Join(root, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	check := func(name, dir string) {
		t.Helper()
		// git itself, given all the time it needs: on a busy machine a
		// call can outlast the hook's bound, and the answer lose its head.
		want := execGitWithin(context.Background(), dir, time.Minute)
		got, ok := readGit(dir)
		if ok && got != want {
			t.Errorf("%s: read %+v, git says %+v", name, got, want)
		}
		if !ok && name != "declines" {
			t.Errorf("%s: readGit declined; git says %+v", name, want)
		}
	}
	check("repository", repo)
	check("subfolder", sub)
	check("through a link", link)
	check("worktree", wt)
	check("no commit yet", fresh)
	check("not a repository", root)
	git(repo, "pack-refs", "--all")
	check("packed refs", repo)
	git(repo, "checkout", "-q", "--detach")
	check("detached", repo)
}
