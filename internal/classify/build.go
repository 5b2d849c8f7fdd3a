package classify

// Building: build systems, compilers, test runners, linters and
// formatters run the project's own code and write into the workspace;
// editors and converters write the files they are pointed at.

// buildPrograms registers the build tools, editors and converters.
func buildPrograms(r *registry) {
	r.fixed(WorkspaceWrite, map[string]string{
		"make": "builds the project with its Makefile", "gmake": "builds the project with its Makefile",
		"cmake": "builds the project", "ninja": "builds the project", "meson": "builds the project",
		"bazel": "builds the project", "gradle": "builds the project", "gradlew": "builds the project",
		"mvn": "builds the project", "ant": "builds the project", "sbt": "builds the project",
		"just": "runs project recipes", "task": "runs project tasks", "tox": "runs the project's tests",
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
		"xdg-open": "opens a file", "ssh-keygen": "makes or inspects keys", "gpg": "signs or encrypts",
		"openssl": "handles certificates and keys",
	})
}
