package classify

import (
	"path"
	"strings"
)

// Where credentials live. One set of tables answers both "does this shell
// command read a secret" (any program whose arguments name such a path, see
// secretArgs) and SecretPath, which other packages call for tools that read
// files directly (Claude Code's Read, Grep, Glob and Edit).

// secretNames are file names that hold credentials wherever they are,
// matched without regard to case.
var secretNames = map[string]string{
	"id_rsa": "an SSH private key", "id_dsa": "an SSH private key", "id_ecdsa": "an SSH private key",
	"id_ed25519": "an SSH private key", "id_ecdsa_sk": "an SSH private key", "id_ed25519_sk": "an SSH private key",
	".netrc": "a .netrc file of logins and passwords", "_netrc": "a .netrc file of logins and passwords",
	".npmrc": "npm registry tokens", ".pypirc": "PyPI credentials", ".git-credentials": "stored git credentials",
	".pgpass": "PostgreSQL passwords", ".my.cnf": "MySQL client credentials", ".mylogin.cnf": "MySQL client credentials",
	".dockercfg": "Docker registry credentials", ".s3cfg": "S3 credentials", ".boto": "cloud storage credentials",
	".htpasswd": "password hashes", ".vault-token": "a Vault token", ".envrc": "a direnv file of environment secrets",
	"credentials.tfrc.json": "Terraform Cloud tokens", ".terraformrc": "Terraform Cloud tokens",
	"application_default_credentials.json": "Google Cloud credentials", "credentials.json": "a credentials file",
	"client_secret.json": "an OAuth client secret", "client_secrets.json": "an OAuth client secret",
	"secring.gpg": "GPG private keys", ".bash_history": "shell history", ".zsh_history": "shell history",
	".zhistory": "shell history", ".sh_history": "shell history", ".history": "shell history",
	"fish_history": "shell history", ".python_history": "Python history", ".psql_history": "psql history",
	".mysql_history": "MySQL history", ".sqlite_history": "SQLite history", ".node_repl_history": "Node history",
	".rediscli_history": "redis-cli history", ".irb_history": "Ruby history",
	"secrets.json": "a secrets file", "secrets.yaml": "a secrets file", "secrets.yml": "a secrets file",
	"secrets.toml": "a secrets file", "secrets.env": "a secrets file", ".secrets": "a secrets file",
	"master.key": "an encryption key", "keyfile": "a key file",
}

// secretSuffixes are file-name endings that mark credentials, matched
// without regard to case. A .pem or .key file whose name says it is a
// certificate or a public key is not a secret (see certificateName).
var secretSuffixes = []struct{ suffix, what string }{
	{".pem", "a private key"}, {".key", "a private key"}, {".p12", "a key store"}, {".pfx", "a key store"},
	{".jks", "a key store"}, {".keystore", "a key store"}, {".ppk", "a PuTTY private key"},
	{".kdbx", "a KeePass password database"}, {".tfstate", "Terraform state, which keeps secrets in plain text"},
	{".tfstate.backup", "Terraform state, which keeps secrets in plain text"}, {".kubeconfig", "a Kubernetes config with cluster credentials"},
	{".keychain", "a macOS keychain"}, {".keychain-db", "a macOS keychain"},
}

// secretDirs are directories of credentials, as path segments found
// anywhere in a path. A directory itself counts (reading it recursively
// reads what is inside); a file under it counts unless it is one of
// except, and, when files is set, only if its path under the directory
// starts with one of files.
var secretDirs = []struct {
	dir    string
	what   string
	files  []string
	except []string
}{
	{dir: ".ssh", what: "an SSH private key", except: []string{"config", "known_hosts", "known_hosts.old", "authorized_keys", "authorized_keys2", "*.pub", "rc", "config.d"}},
	{dir: ".aws", what: "AWS credentials", files: []string{"credentials", "sso/cache", "cli/cache"}},
	{dir: ".config/gcloud", what: "Google Cloud credentials"},
	{dir: ".azure", what: "Azure credentials"},
	{dir: ".kube", what: "a Kubernetes config with cluster credentials", files: []string{"config"}},
	{dir: ".docker", what: "Docker registry credentials", files: []string{"config.json"}},
	{dir: ".gnupg", what: "GPG private keys", except: []string{"gpg.conf", "gpg-agent.conf", "dirmngr.conf", "pubring.kbx", "pubring.gpg", "trustdb.gpg"}},
	{dir: ".password-store", what: "a pass password store"},
	{dir: ".oci", what: "Oracle Cloud keys"},
	{dir: ".config/gh", what: "a GitHub CLI token", files: []string{"hosts.yml"}},
	{dir: ".config/glab-cli", what: "a GitLab CLI token", files: []string{"config.yml"}},
	{dir: ".config/hub", what: "a GitHub token"},
	{dir: ".config/op", what: "1Password CLI sessions"},
	{dir: ".config/rclone", what: "rclone remote credentials", files: []string{"rclone.conf"}},
	{dir: ".config/hcloud", what: "a Hetzner Cloud token", files: []string{"cli.toml"}},
	{dir: ".config/doctl", what: "a DigitalOcean token", files: []string{"config.yaml"}},
	{dir: ".terraform.d", what: "Terraform Cloud tokens", files: []string{"credentials.tfrc.json"}},
	{dir: ".m2", what: "Maven repository passwords", files: []string{"settings.xml", "settings-security.xml"}},
	{dir: ".gradle", what: "Gradle repository credentials", files: []string{"gradle.properties"}},
	{dir: ".cargo", what: "a crates.io token", files: []string{"credentials", "credentials.toml"}},
	{dir: ".gem", what: "a RubyGems API key", files: []string{"credentials"}},
	{dir: ".composer", what: "Composer repository credentials", files: []string{"auth.json"}},
	{dir: ".config/composer", what: "Composer repository credentials", files: []string{"auth.json"}},
	{dir: "Library/Keychains", what: "a macOS keychain"},
	{dir: "run/secrets", what: "container secrets"},
	{dir: "etc/ssl/private", what: "TLS private keys"},
	{dir: "etc/pki/tls/private", what: "TLS private keys"},
}

// secretSystemFiles are absolute paths (path.Match patterns) that hold
// credentials.
var secretSystemFiles = []struct{ pattern, what string }{
	{"/etc/shadow", "the system's password hashes"}, {"/etc/gshadow", "the system's password hashes"},
	{"/etc/shadow-", "the system's password hashes"}, {"/etc/master.passwd", "the system's password hashes"},
	{"/etc/security/opasswd", "old password hashes"}, {"/etc/ssh/ssh_host_*_key", "an SSH host private key"},
	{"/etc/kubernetes/admin.conf", "Kubernetes cluster-admin credentials"},
	{"/etc/rancher/k3s/k3s.yaml", "Kubernetes cluster-admin credentials"},
	{"/proc/*/environ", "a process's environment, secrets included"},
}

// SecretPath reports whether path names a file or directory that holds
// credentials — private keys, cloud, Kubernetes and registry credentials,
// .env files, password stores, shell history, the system's password
// hashes — and what kind, in words for a person ("an SSH private key",
// "a .env file of secrets"). Paths may be absolute, relative or start with
// ~ or $HOME. Example and template files (.env.example, .env.sample,
// .env.template) and public keys are not secrets.
func SecretPath(p string) (what string, ok bool) {
	p = strings.TrimSpace(p)
	if p == "" {
		return "", false
	}
	for _, home := range []string{"$HOME/", "${HOME}/"} {
		if rest, ok := strings.CutPrefix(p, home); ok {
			p = "~/" + rest
		}
	}
	p = path.Clean(p)
	base := path.Base(p)
	if hasUpper(base) {
		base = strings.ToLower(base)
	}
	if what, ok := secretNames[base]; ok {
		return what, true
	}
	if what, ok := envFile(base); ok {
		return what, true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(base, s.suffix) && len(base) > len(s.suffix) && !certificateName(base, s.suffix) {
			return s.what, true
		}
	}
	if strings.HasPrefix(base, "client_secret") && strings.HasSuffix(base, ".json") ||
		strings.Contains(base, "service-account") && strings.HasSuffix(base, ".json") ||
		strings.Contains(base, "service_account") && strings.HasSuffix(base, ".json") {
		return "a cloud service account key", true
	}
	if strings.HasPrefix(p, "/") {
		for _, f := range secretSystemFiles {
			if ok, _ := path.Match(f.pattern, p); ok {
				return f.what, true
			}
		}
	}
	if !strings.Contains(p, "/") && !strings.HasPrefix(p, ".") {
		return "", false // no directory in it, and not one of the dot-directories
	}
	for _, d := range secretDirs {
		rest, found := underDir(p, d.dir)
		if !found {
			continue
		}
		if rest == "" {
			return "the " + d.dir + " directory, which holds " + d.what, true
		}
		if matchesAny(rest, d.except) {
			continue
		}
		if d.files != nil && !matchesAny(rest, d.files) {
			continue
		}
		return d.what, true
	}
	return "", false
}

// envFile reports a dotenv file: .env, .env.local, .env.production,
// prod.env, but not .env.example, .env.sample or .env.template.
func envFile(base string) (string, bool) {
	switch {
	case base == ".env", strings.HasSuffix(base, ".env") && isAlnum(base[0]):
	case strings.HasPrefix(base, ".env."):
	default:
		return "", false
	}
	for rest := base; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ".")
		switch part {
		case "example", "examples", "sample", "template", "tmpl", "dist", "schema", "defaults":
			return "", false
		}
	}
	return "a .env file of secrets", true
}

// certificateName reports a .pem or .key file whose name says it holds a
// certificate or a public key (cert.pem, fullchain.pem, ca-bundle.pem,
// public.key), which are not secrets.
func certificateName(base, suffix string) bool {
	if suffix != ".pem" && suffix != ".key" {
		return false
	}
	for _, part := range splitWords(strings.TrimSuffix(base, suffix)) {
		switch part {
		case "pub", "public", "pubkey":
			return true
		case "cert", "certs", "certificate", "chain", "fullchain", "ca", "cacert", "cacerts", "bundle", "crt", "root", "intermediate", "trust", "truststore":
			if suffix == ".pem" {
				return true
			}
		}
	}
	return false
}

// underDir looks for dir, as whole path segments, in the path p and
// returns what follows it ("" for the directory itself).
func underDir(p, dir string) (string, bool) {
	for from := 0; from < len(p); {
		i := strings.Index(p[from:], dir)
		if i < 0 {
			return "", false
		}
		i += from
		end := i + len(dir)
		if (i == 0 || p[i-1] == '/') && (end == len(p) || p[end] == '/') {
			if end == len(p) {
				return "", true
			}
			return p[end+1:], true
		}
		from = i + 1
	}
	return "", false
}

// matchesAny reports whether rest (a path under a directory) is or starts
// with one of prefixes, or its last segment matches one of them that is a
// pattern (*.pub).
func matchesAny(rest string, prefixes []string) bool {
	last := rest[strings.LastIndexByte(rest, '/')+1:]
	for _, p := range prefixes {
		if rest == p || strings.HasPrefix(rest, p+"/") {
			return true
		}
		if strings.Contains(p, "*") {
			if ok, _ := path.Match(p, last); ok {
				return true
			}
		}
	}
	return false
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
