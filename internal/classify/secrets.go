package classify

import "strings"

// Reading secrets. A command that reads or prints credentials is
// secret_read: any program whose arguments name a file of credentials
// (see SecretPath and secretArgs), input redirected from one, a dump of the
// whole environment or of shell history, a secret variable printed, and
// the commands of password stores and secrets managers that reveal a
// secret. Their commands that delete secrets are destructive, those that
// store or change them config_mutation, and those that only list names
// read_only.

// secretsPrograms registers the password stores, secrets managers and
// key tools.
func secretsPrograms(r *registry) {
	r.handle(secretsCLI(Unknown, verbTable{"seal": ServiceControl, "unseal": ServiceControl, "step-down": ServiceControl, "ssh": Unknown}), "vault", "bao")
	r.handle(secretsCLI(Unknown, verbTable{"signin": ConfigMutation, "signout": ConfigMutation}), "op")
	r.handle(secretsCLI(Unknown, verbTable{"secrets": SecretRead, "me": ReadOnly, "projects": ReadOnly, "configs": ReadOnly, "environments": ReadOnly, "activity": ReadOnly}), "doppler")
	r.handle(secretsCLI(Unknown, verbTable{"secrets": SecretRead}), "infisical")
	// pass NAME shows the password called NAME.
	r.handle(secretsCLI(SecretRead, verbTable{"grep": SecretRead, "git": Network}), "pass", "gopass", "passage")
	r.handle(secretsCLI(Unknown, verbTable{"list": SecretRead, "unlock": SecretRead, "sync": Network}), "bw")
	r.handle(secretsCLI(Unknown, nil), "lpass", "keepassxc-cli", "kpcli", "chamber", "teller", "berglas", "conjur", "akeyless", "aws-vault", "keeper", "summon")
	r.handle(secretsCLI(Unknown, verbTable{"search": SecretRead, "clear": Destructive}), "secret-tool")
	r.handle(securityCmd, "security")
	r.handle(decryptCmd("decrypts files"), "sops", "age", "rage")
	r.handle(secretsCLI(WorkspaceWrite, verbTable{"encrypt": WorkspaceWrite, "encrypt_string": WorkspaceWrite, "create": WorkspaceWrite, "edit": WorkspaceWrite, "rekey": WorkspaceWrite}), "ansible-vault")
	r.handle(envchainCmd, "envchain")
	r.handle(gpgCmd, "gpg", "gpg2")
	r.fixed(WorkspaceWrite, map[string]string{
		"ssh-keygen": "makes or inspects keys", "openssl": "handles certificates and keys", "age-keygen": "makes a key",
	})
	r.handle(sshAddCmd, "ssh-add")
}

// secretVerbs are verbs that reveal a secret's value when a secrets
// manager runs them.
var secretVerbs = map[string]bool{
	"get": true, "read": true, "show": true, "view": true, "reveal": true, "cat": true, "print": true,
	"export": true, "decrypt": true, "access": true, "lookup": true, "download": true, "inject": true,
	"substitute": true, "env": true, "dump": true, "otp": true, "totp": true, "clip": true, "unwrap": true,
	"value": true, "fetch": true, "pull": true, "copy": true, "open": true,
}

// listVerbs are verbs that only list names or show status.
var listVerbs = map[string]bool{
	"list": true, "ls": true, "search": true, "find": true, "status": true, "whoami": true,
	"version": true, "help": true, "history": true, "audit": true, "info": true, "describe": true,
	"locate": true, "versions": true, "doctor": true, "check": true, "verify": true,
}

// secretsCLI returns the handler of a password store or secrets manager.
// Verbs that reveal a value are secret_read, verbs that only list are
// read_only, and the destroying and changing verbs follow the general
// rules. run and exec (op run -- CMD, aws-vault exec PROFILE -- CMD) run
// the command after -- with secrets in its environment, and that command
// is judged. otherwise is the class when no verb is found (pass NAME
// prints the password NAME).
func secretsCLI(otherwise Class, overrides verbTable) handler {
	word := func(w string) (Class, bool, bool) {
		lw := strings.ToLower(w)
		if c, ok := overrides[lw]; ok {
			return c, c == ReadOnly, true
		}
		first := lw
		if parts := splitWords(lw); len(parts) > 0 {
			first = parts[0]
		}
		switch {
		case secretVerbs[first]:
			return SecretRead, false, true
		case listVerbs[first]:
			return ReadOnly, true, true
		}
		return wordVerb(w)
	}
	return func(st *state, c command) judgement {
		if helpOnly(c.args) {
			return is(ReadOnly, c.name+" only prints its help or version")
		}
		if len(c.args) == 0 {
			return is(ReadOnly, c.name+" without a command lists or prints its usage")
		}
		verb, rest := subcommand(c.args, "")
		if verb == "run" || verb == "exec" {
			return runWithSecrets(st, c, rest)
		}
		v, ok := leadingVerbWith(c.args, word)
		switch {
		case !ok:
			return is(otherwise, c.name+" "+verbRule(otherwise)+" (no verb logbook knows)")
		case v.class == SecretRead:
			return is(SecretRead, c.name+" "+v.word+" reveals a secret")
		}
		return verbJudgement(c.name, v)
	}
}

// runWithSecrets judges `TOOL run [options] -- COMMAND`: the command runs
// with secrets in its environment and is judged as it is.
func runWithSecrets(st *state, c command, rest []arg) judgement {
	for i, a := range rest {
		if a.text == "--" && a.literal {
			return runInner(st, rest[i+1:], c.in, is(ReadOnly, c.name+" run without a command runs nothing"))
		}
	}
	if o := scanOptions(rest, scanSpec{valued: "--command"}); o.has("--command") {
		script, _ := o.value("--command")
		st.script(script, c.in)
		return judgement{wrapper: true}
	}
	return is(Unknown, c.name+" runs a command with secrets in its environment, which logbook cannot find")
}

// envchainCmd: envchain NAMESPACE... COMMAND runs COMMAND with secrets from
// the keychain in its environment; --set stores them.
func envchainCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{stopAtOperand: true})
	if o.has("--set", "-s") {
		return is(ConfigMutation, "envchain --set stores secrets in the keychain")
	}
	if o.has("--list", "-l") || helpOnly(c.args) {
		return is(ReadOnly, "envchain lists its namespaces")
	}
	rest := c.args[o.rest:]
	if len(rest) < 2 {
		return is(ReadOnly, "envchain without a command runs nothing")
	}
	st.call(rest[1:], c.in)
	return judgement{wrapper: true}
}

// securityCmd is macOS's keychain tool: find-*-password prints the
// password only with -w or -g; dump-keychain -d and export print secrets.
func securityCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "")
	o := scanOptions(rest, scanSpec{valued: "-a -s -l -c -C -D -j -r -k -t -f -P -T -o"})
	switch {
	case verb == "":
		return is(ReadOnly, "security without a command prints its usage")
	case strings.HasPrefix(verb, "find-") && strings.Contains(verb, "password") && o.has("-w", "-g"):
		return is(SecretRead, "security "+verb+" -w prints a password from the keychain")
	case verb == "dump-keychain" && o.has("-d"):
		return is(SecretRead, "security dump-keychain -d prints the keychain's secrets")
	case verb == "export" || verb == "dump-keychain" || verb == "dump-trust-settings":
		if verb == "export" {
			return is(SecretRead, "security export writes out keys from the keychain")
		}
		return is(ReadOnly, "security "+verb+" lists the keychain's items")
	case strings.HasPrefix(verb, "find-") || strings.HasPrefix(verb, "list-") || strings.HasPrefix(verb, "show-") || strings.HasPrefix(verb, "verify-") || verb == "default-keychain" && len(rest) == 0 || verb == "login-keychain" && len(rest) == 0:
		return is(ReadOnly, "security "+verb+" only reads")
	case strings.HasPrefix(verb, "delete-"):
		return is(Destructive, "security "+verb+" deletes keychain items")
	}
	return is(ConfigMutation, "security "+verb+" changes the keychain")
}

// decryptCmd: sops, age: -d or --decrypt (or sops decrypt) prints the
// plain text of a secret; anything else encrypts or edits.
func decryptCmd(what string) handler {
	return func(_ *state, c command) judgement {
		o := scanOptions(c.args, scanSpec{valued: "-o --output -i --identity -r --recipient -R --recipients-file --input-type --output-type --extract --config"})
		verb := ""
		if len(o.operands) > 0 {
			verb = strings.ToLower(o.operands[0].text)
		}
		switch {
		case helpOnly(c.args):
			return is(ReadOnly, c.name+" only prints its help or version")
		case o.has("-d", "--decrypt") || verb == "decrypt" || verb == "exec-env" || verb == "exec-file":
			return is(SecretRead, c.name+" decrypts a secret")
		case o.has("-e", "--encrypt") || verb == "encrypt" || c.name != "sops":
			return is(WorkspaceWrite, c.name+" encrypts files")
		case verb == "filestatus":
			return is(ReadOnly, "sops filestatus only reads")
		}
		return is(SecretRead, c.name+" opens the decrypted file in an editor")
	}
}

// gpgCmd: exporting secret keys and decrypting reveal secrets; deleting
// keys destroys them; listing reads; the rest signs, encrypts or imports.
func gpgCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-o --output -r --recipient -u --local-user --homedir --keyserver --default-key --trust-model --passphrase --passphrase-file --pinentry-mode --digest-algo --cipher-algo"})
	switch {
	case o.has("--export-secret-keys", "--export-secret-subkeys", "--export-ssh-key"):
		return is(SecretRead, c.name+" exports secret keys")
	case o.has("-d", "--decrypt"):
		return is(SecretRead, c.name+" --decrypt prints what was encrypted")
	case o.hasPrefix("--delete"):
		return is(Destructive, c.name+" deletes keys from the keyring")
	case o.has("--send-keys", "--recv-keys", "--receive-keys", "--refresh-keys", "--search-keys"):
		return is(Network, c.name+" talks to a key server")
	case o.has("-k", "--list-keys", "-K", "--list-secret-keys", "--fingerprint", "--list-sigs", "--check-sigs", "--verify", "--version", "--help", "--list-packets", "--show-keys", "--export", "--armor", "-a") && !o.has("-e", "--encrypt", "-s", "--sign", "--clearsign", "-b", "--detach-sign", "-c", "--symmetric", "--import", "--gen-key", "--full-generate-key", "--quick-generate-key", "--edit-key", "--sign-key", "--quick-add-key"):
		return is(ReadOnly, c.name+" lists or verifies keys")
	case o.has("--import", "--gen-key", "--full-generate-key", "--full-gen-key", "--quick-generate-key", "--quick-gen-key", "--edit-key", "--sign-key", "--lsign-key", "--quick-add-key", "--quick-set-expire", "--import-ownertrust"):
		return is(ConfigMutation, c.name+" changes the keyring")
	}
	return is(WorkspaceWrite, c.name+" signs or encrypts")
}

// nonReadingPrograms are programs that take paths without printing or
// sending what is in the files: listing, testing, changing permissions,
// moving, removing, hashing. A secret path in their arguments is not a
// read.
var nonReadingPrograms = map[string]bool{
	"ls": true, "ll": true, "dir": true, "tree": true, "exa": true, "eza": true, "lsd": true,
	"stat": true, "file": true, "du": true, "touch": true, "mkdir": true, "rmdir": true,
	"rm": true, "unlink": true, "shred": true, "chmod": true, "chown": true, "chgrp": true,
	"chattr": true, "lsattr": true, "setfacl": true, "getfacl": true, "setfattr": true,
	"test": true, "[": true, "[[": true, "realpath": true, "readlink": true, "basename": true,
	"dirname": true, "namei": true, "cd": true, "pushd": true, "popd": true, "echo": true,
	"printf": true, "which": true, "type": true, "command": true, "hash": true, "ssh-keygen": true,
	"ssh-add": true, "ssh-copy-id": true, "find": true, "fd": true, "fdfind": true, "locate": true,
	"mlocate": true, "md5sum": true, "sha1sum": true, "sha256sum": true, "sha512sum": true,
	"shasum": true, "cksum": true, "b2sum": true, "md5": true, "wc": true, "mv": true, "ln": true,
	"tee": true, "truncate": true, "wipefs": true, "mktemp": true, "export": true, "unset": true,
	"source": true, ".": true, "ssh": true, "mosh": true, "autossh": true, "trap": true,
}

// gitReading are the git subcommands that print or send file contents.
var gitReading = map[string]bool{
	"diff": true, "show": true, "log": true, "blame": true, "grep": true, "cat-file": true,
	"archive": true, "bundle": true, "format-patch": true, "send-email": true, "annotate": true,
	"whatchanged": true, "hash-object": false,
}

// useOptions are options whose value is a credential the program uses to
// authenticate or to fill an environment, without printing it: ssh -i KEY,
// curl --key KEY, docker --env-file .env.
const useOptions = "-i --identity-file --identity -key -inkey --key --cert -cert -E --kubeconfig " +
	"--private-key --private-key-file --key-file --keyfile --tlskey --tls-key --tlscert --tls-cert " +
	"--ssh-key --ssh-key-file --env-file --password-file --secret-file --credentials-file " +
	"--client-key --ssl-key --sslkey --cacert --ca-file --cred-file --vault-password-file " +
	"--service-account-key-file --keyring --auth-file --authfile --secret-keyring --netrc-file"

// copyPrograms write their last operand: it is a destination, not a read.
var copyPrograms = map[string]bool{"cp": true, "install": true, "rsync": true, "scp": true, "sftp": true, "rclone": true}

// secretArgs finds the first argument of c that names a secret the
// program would read, and returns the argument and what it holds. Any
// program counts unless it is one that does not read the files it is given
// (nonReadingPrograms); destinations of copies and the values of options
// that only use a credential (useOptions) do not count.
func (st *state) secretArgs(c command) (string, string, bool) {
	if nonReadingPrograms[c.name] {
		return "", "", false
	}
	args := c.args
	if c.name == "git" {
		verb, rest := subcommand(args, gitGlobalValued)
		if !gitReading[verb] {
			return "", "", false
		}
		args = rest
	}
	last := -1
	if copyPrograms[c.name] {
		operands := 0
		for i, a := range args {
			if !strings.HasPrefix(a.text, "-") {
				operands++
				last = i
			}
		}
		if operands < 2 {
			last = -1
		}
	}
	for i, a := range args {
		if i == last {
			continue
		}
		t := a.text
		if i > 0 && hasWord(useOptions, args[i-1].text) {
			continue
		}
		if strings.HasPrefix(t, "-") {
			name, value, ok := strings.Cut(t, "=")
			if !ok || hasWord(useOptions, name) {
				continue
			}
			t = value
		}
		if c.name == "dd" {
			in, ok := strings.CutPrefix(t, "if=")
			if !ok {
				continue
			}
			t = in
		}
		if a.param == "HISTFILE" {
			return a.text, "shell history", true
		}
		if p, what, ok := st.secretIn(t); ok {
			return p, what, true
		}
	}
	return "", "", false
}

// secretIn reports whether an argument names a file of credentials,
// and returns the path as seen from the working directory.
func (st *state) secretIn(t string) (string, string, bool) {
	cands, n := pathCandidates(t)
	for i := n - 1; i >= 0; i-- { // the most specific first
		p := st.inDir(cands[i])
		if what, ok := SecretPath(p); ok {
			return p, what, true
		}
	}
	return "", "", false
}

// pathCandidates returns the paths an argument may name: itself, what
// follows @ (curl -d @FILE), = (key=FILE, if=FILE) or =@ (-F f=@FILE),
// the path of host:PATH (scp) and of file:// URLs, without curl's ;type=
// suffix. They come in an array, as this runs for every argument of every
// command.
func pathCandidates(t string) (out [5]string, n int) {
	if t == "" || len(t) > 4096 {
		return out, 0
	}
	add := func(p string) {
		if j := strings.IndexByte(p, ';'); j > 0 {
			p = p[:j]
		}
		out[n] = p
		n++
	}
	add(t)
	if rest, ok := strings.CutPrefix(t, "file://"); ok {
		add(rest)
	}
	if i := strings.LastIndexByte(t, '@'); i >= 0 && i+1 < len(t) {
		add(t[i+1:])
	}
	if i := strings.IndexByte(t, '='); i > 0 && i+1 < len(t) {
		add(strings.TrimPrefix(t[i+1:], "@"))
	}
	if i := strings.IndexByte(t, ':'); i > 0 && i+1 < len(t) && !strings.ContainsAny(t[:i], "/=@") && !strings.Contains(t, "://") {
		add(t[i+1:])
	}
	return out, n
}

// secretVarName reports whether a variable's name says it holds a secret:
// GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, OPENAI_API_KEY.
func secretVarName(name string) bool {
	for rest := strings.ToUpper(name); rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "_")
		switch part {
		case "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS", "PASSPHRASE", "PWD",
			"KEY", "APIKEY", "CREDENTIAL", "CREDENTIALS", "PAT", "PRIVATE", "COOKIE":
			return name != "PWD" && name != "OLDPWD"
		}
	}
	return false
}

// secretVarIn returns the first $NAME or ${NAME} in s whose name says it
// holds a secret.
func secretVarIn(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '{' {
			j++
		}
		k := j
		for k < len(s) && (s[k] == '_' || 'a' <= s[k] && s[k] <= 'z' || 'A' <= s[k] && s[k] <= 'Z' || '0' <= s[k] && s[k] <= '9') {
			k++
		}
		if k > j && secretVarName(s[j:k]) {
			return s[j:k], true
		}
	}
	return "", false
}

// sshAddCmd: ssh-add -l and -L list the agent's keys; anything else loads
// keys into the agent or takes them out.
func sshAddCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-t -E -S -H -h"})
	if o.has("-l", "-L", "-T") {
		return is(ReadOnly, "ssh-add lists the agent's keys")
	}
	return is(ConfigMutation, "ssh-add loads keys into the SSH agent or removes them")
}
