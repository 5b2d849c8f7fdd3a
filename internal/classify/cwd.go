package classify

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The working directory. `cd DIR &&` and `pushd DIR` change what later
// relative paths name: `cd /tmp && rm -rf build` removes /tmp/build, a
// scratch directory, while `cd / && rm -rf *` removes everything. The
// walker follows the shell: a subshell, a pipeline's parts, a command
// substitution, a background job and a nested shell (bash -c) keep their
// changes to themselves, and what a conditional body does may or may not
// have happened.
//
// A cd can fail, and the shell then goes on in the old directory: after
// `cd /tmp; rm -rf build` the rm may run anywhere. So a directory is only
// sure where the command runs only if the cd worked (`cd DIR && ...`,
// `cd DIR || exit; ...`); where it is not sure, it never makes a path look
// safer than it would be without the cd (a temporary directory is not
// trusted), though it can make one look worse (`cd /etc; rm hosts`).

// workDir is the working directory as far as the walker knows it.
type workDir struct {
	// path is the directory: "" is where the line started (relative paths
	// stay as written), otherwise an absolute path, a path under ~, or one
	// relative to where the line started ("..", "build").
	path string
	// unknown reports a directory only known at run time (cd "$DIR",
	// cd -): relative paths under it are only known at run time too.
	unknown bool
	// unsure reports that the command may run in the previous directory,
	// because the cd that set path may have failed.
	unsure bool
	// stack is pushd's directory stack.
	stack []workDir
}

// same reports whether two working directories are the same place.
func (w workDir) same(v workDir) bool { return w.path == v.path && w.unknown == v.unknown }

// chdir moves to the directory a names, as cd and pushd do, relative to
// the current one. The change is not sure until the walker sees that what
// follows runs only if it worked.
func (st *state) chdir(a arg) {
	p, dynamic := resolvePath(a, !st.tmpdirSet)
	switch {
	case dynamic || a.text == "-" || p == "":
		st.dir = workDir{unknown: true, unsure: true, stack: st.dir.stack}
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		st.dir = workDir{path: p, unsure: true, stack: st.dir.stack}
	case st.dir.unknown:
		st.dir.unsure = true
	default:
		st.dir = workDir{path: path.Join(st.dir.path, p), unsure: true, stack: st.dir.stack}
	}
}

// cdCmd: cd [-L|-P] [DIR] changes the directory; without DIR it goes home.
func cdCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	switch {
	case c.name == "popd":
		if n := len(st.dir.stack); n > 0 && len(o.operands) == 0 {
			top := st.dir.stack[n-1]
			st.dir = workDir{path: top.path, unknown: top.unknown, unsure: true, stack: st.dir.stack[:n-1]}
		} else {
			st.dir = workDir{unknown: true, unsure: true}
		}
	case c.name == "pushd" && len(o.operands) == 0,
		c.name == "pushd" && strings.HasPrefix(o.operands[0].text, "+"):
		st.dir = workDir{unknown: true, unsure: true, stack: st.dir.stack}
	case c.name == "pushd":
		prev := st.dir
		prev.stack = nil
		st.dir.stack = append(append([]workDir(nil), st.dir.stack...), prev)
		st.chdir(o.operands[0])
	case len(o.operands) == 0:
		st.chdir(lit("~"))
	default:
		st.chdir(o.operands[0])
	}
	return is(ReadOnly, c.name+" changes the shell's directory")
}

// inDir returns p as seen from the working directory: unchanged when it
// is absolute, under ~ or only known at run time, or when the directory
// is where the line started or is not known.
func (st *state) inDir(p string) string {
	if p == "" || st.dir.path == "" || st.dir.unknown || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") {
		return p
	}
	return path.Join(st.dir.path, p)
}

// resolve is resolvePath from the working directory: a relative path is
// joined to it. Where the directory is only known at run time the path is
// too; where it is not sure, a temporary directory is not trusted.
func (st *state) resolve(a arg) (string, bool) {
	p, dynamic := resolvePath(a, !st.tmpdirSet)
	if p == "" || dynamic || st.dir.path == "" && !st.dir.unknown || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return p, dynamic
	}
	if st.dir.unknown {
		return p, true
	}
	joined := path.Join(st.dir.path, p)
	if st.dir.unsure && isTempPath(joined, false) && !isTempPath(p, false) {
		return p, dynamic
	}
	return joined, dynamic
}

// terminates reports a statement that ends the script or function when
// it runs (exit, return), so that what follows `cd DIR || exit` runs in
// DIR.
func (st *state) terminates(s *syntax.Stmt, src string) bool {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return false
	}
	name := renderWord(call.Args[0], src)
	return name.literal && (name.text == "exit" || name.text == "return")
}
