package classify

import "strings"

// Building: build systems, compilers, test runners, linters and
// formatters run the project's own code and write into the workspace;
// editors and converters write the files they are pointed at.

// buildPrograms registers the build tools, editors and converters.
func buildPrograms(r *registry) {
	r.handle(taskRunner("builds the project with its Makefile", "-C --directory -f --file --makefile -j --jobs -l --load-average -o --old-file -W --what-if --new-file --assume-new -I --include-dir"), "make", "gmake")
	r.handle(taskRunner("runs project recipes", "-f --justfile -d --working-directory --set --shell --dotenv-filename --dotenv-path --color --chooser"), "just")
	r.handle(taskRunner("runs project tasks", "-d --dir -t --taskfile -o --output --concurrency -c --color"), "task")
	r.handle(taskRunner("runs project tasks", "-f --rakefile -C --directory -I --libdir -r --require"), "rake", "mage", "invoke")
	r.fixed(WorkspaceWrite, map[string]string{

		"cmake": "builds the project", "ninja": "builds the project", "meson": "builds the project",
		"bazel": "builds the project", "gradle": "builds the project", "gradlew": "builds the project",
		"mvn": "builds the project", "ant": "builds the project", "sbt": "builds the project",
		"tox": "runs the project's tests",
		"nox": "runs the project's tests", "pytest": "runs the project's tests",
		"jest": "runs the project's tests", "vitest": "runs the project's tests",
		"mocha": "runs the project's tests", "rspec": "runs the project's tests",
		"phpunit": "runs the project's tests", "ctest": "runs the project's tests", "gcc": "compiles code",
		"g++": "compiles code", "cc": "compiles code", "c++": "compiles code", "clang": "compiles code",
		"clang++": "compiles code", "rustc": "compiles code", "javac": "compiles code",
		"tsc": "compiles TypeScript", "esbuild": "bundles code", "webpack": "bundles code",
		"vite": "builds the project", "rustfmt": "formats code", "prettier": "formats code",
		"black": "formats code", "ruff": "lints code", "eslint": "lints code", "mypy": "checks types",
		"flake8": "lints code", "pylint": "lints code", "golangci-lint": "lints code", "staticcheck": "lints code",
		"goimports": "formats code", "convert": "converts images", "ffmpeg": "converts media",
		"pandoc": "converts documents", "tmux": "manages terminal sessions", "screen": "manages terminal sessions",
		"nano": "opens an editor", "emacs": "opens an editor", "code": "opens an editor", "open": "opens a file",
		"xdg-open": "opens a file",
	})
}

// taskRunner returns the handler of make and its kin: they run the
// project's own recipes (workspace_write), and a target whose name says
// more raises that: make deploy changes configuration, make install
// installs software, make destroy and make db-drop destroy.
func taskRunner(what, valued string) handler {
	return func(_ *state, c command) judgement {
		o := scanOptions(c.args, scanSpec{valued: valued})
		var targets []arg
		for _, op := range o.operands {
			if !strings.Contains(op.text, "=") {
				targets = append(targets, op)
			}
		}
		return targetVerbs(c.name, targets, is(WorkspaceWrite, c.name+" "+what))
	}
}

// targetVerbs raises j when the name of a target or script (make deploy,
// npm run db:drop) has a verb riskier than running the project's code;
// verbs that only run something (run, exec) leave it.
func targetVerbs(prog string, targets []arg, j judgement) judgement {
	for _, t := range targets {
		if !t.literal || !isCommandWord(t.text) {
			continue
		}
		c, read, ok := wordVerb(t.text)
		if !ok || read || c == Unknown || c.Rank() <= j.class.Rank() {
			continue
		}
		if c == Destructive {
			j = is(Destructive, prog+" "+t.text+": the target's name says it deletes or destroys")
			continue
		}
		j = is(c, prog+" "+t.text+" "+verbRule(c)+" (by the target's name)")
	}
	return j
}
