package classify

import "strings"

// Network clients. For HTTP clients (curl, wget, HTTPie, xh, and the
// forge CLIs' api commands) the request decides: a plain GET that prints
// the response only reads; DELETE is destructive, whatever server it goes
// to (a search engine's index, a CI server's job); a request that writes
// (POST, PUT, PATCH, a body, a form, an upload) is network, and
// destructive when its URL or body says it deletes (Jenkins' doDelete,
// Elasticsearch's _delete_by_query, DROP TABLE sent to an SQL endpoint).
// Saving the response writes a file, judged by where it lands. Piping a
// download into a shell is judged by the shell (see runStdinScript).

// networkPrograms registers the network clients.
func networkPrograms(r *registry) {
	r.handle(curlCmd, "curl")
	r.handle(wgetCmd, "wget", "wget2")
	r.handle(httpieCmd, "http", "https", "xh", "xhs")
	r.fixed(ReadOnly, map[string]string{
		"ping": "checks that a host answers", "ping6": "checks that a host answers",
		"traceroute": "traces a network path", "tracepath": "traces a network path",
		"mtr": "traces a network path", "dig": "looks up DNS", "nslookup": "looks up DNS", "host": "looks up DNS",
		"whois": "looks up domain records",
	})
	r.fixed(Network, map[string]string{
		"scp": "copies files over the network", "sftp": "copies files over the network",
		"ftp": "transfers files over the network", "nc": "opens network connections",
		"ncat": "opens network connections", "netcat": "opens network connections",
		"socat": "relays network connections", "telnet": "opens network connections",
		"aria2c":  "downloads files",
		"git-lfs": "transfers large files",
		"nmap":    "scans the network", "tcpdump": "captures network traffic", "ngrok": "exposes a local port",
	})
}

// curlValued are curl's options that take a value.
const curlValued = "-X --request -d --data --data-ascii --data-binary --data-raw --data-urlencode " +
	"-F --form --form-string -T --upload-file --json -o --output -H --header -A --user-agent " +
	"-e --referer -u --user -b --cookie -c --cookie-jar -D --dump-header -K --config -x --proxy " +
	"-w --write-out -m --max-time --connect-timeout -r --range -E --cert --key --cacert --capath " +
	"--retry --retry-delay --retry-max-time --limit-rate -y -Y -z --time-cond --resolve " +
	"--connect-to --output-dir --trace --trace-ascii --stderr --libcurl --url -U --proxy-user " +
	"--max-redirs --interface --dns-servers --unix-socket --abstract-unix-socket -Q --quote " +
	"--mail-from --mail-rcpt --oauth2-bearer --aws-sigv4 --hsts --alt-svc --etag-save --etag-compare"

// curlCmd judges curl.
func curlCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: curlValued})
	if helpOnly(c.args) || o.has("-M", "--manual") {
		return is(ReadOnly, "curl only prints its help or version")
	}
	if o.has("-K", "--config") {
		return is(Unknown, "curl -K reads its options from a file logbook cannot see")
	}
	req := httpRequest{prog: "curl"}
	for _, op := range o.opts {
		switch {
		case op.name == "-X" || op.name == "--request":
			req.method, req.how = strings.ToUpper(op.value), "curl "+op.name+" "+op.value
		case op.name == "--url":
			req.urls = append(req.urls, op.value)
		case (strings.HasPrefix(op.name, "--data") || op.name == "-d" || op.name == "--json") && !o.has("-G", "--get"):
			req.write("POST", "curl "+op.name+" sends data")
			req.bodies = append(req.bodies, op.value)
		case op.name == "-F" || op.name == "--form" || op.name == "--form-string":
			req.write("POST", "curl "+op.name+" uploads a form")
			req.bodies = append(req.bodies, op.value)
		case op.name == "-T" || op.name == "--upload-file":
			req.write("PUT", "curl -T uploads a file")
		case op.name == "--mail-rcpt" || op.name == "-Q" || op.name == "--quote":
			req.write("POST", "curl "+op.name+" sends mail or server commands")
		}
	}
	req.urls = append(req.urls, texts(o.operands)...)
	if j, ok := req.judge(Network); ok {
		return j
	}
	var outputs []arg
	for _, op := range o.opts {
		switch op.name {
		case "-o", "--output", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc":
			if op.value != "-" && !isDiscard(op.value) {
				outputs = append(outputs, lit(op.value))
			}
		case "-D", "--dump-header":
			if op.value != "-" && !isDiscard(op.value) {
				outputs = append(outputs, lit(op.value))
			}
		case "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name":
			outputs = append(outputs, lit("./"))
		case "--output-dir":
			outputs = append(outputs, lit(op.value+"/"))
		}
	}
	if len(outputs) > 0 {
		return writeTargets(st, "curl saves the download to", outputs)
	}
	return is(ReadOnly, "curl fetches a URL with GET and prints it")
}

// wgetCmd judges wget, which saves to a file by default.
func wgetCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-O --output-document -o --output-file -a --append-output -P --directory-prefix -U --user-agent --header -e --execute -i --input-file -t --tries -T --timeout -w --wait -l --level --post-data --post-file --body-data --body-file --method --user --password -Q --quota"})
	if helpOnly(c.args) {
		return is(ReadOnly, "wget only prints its help or version")
	}
	req := httpRequest{prog: c.name, urls: texts(o.operands)}
	for _, op := range o.opts {
		switch op.name {
		case "--post-data", "--post-file", "--body-data", "--body-file":
			req.write("POST", c.name+" "+op.name+" sends data")
			if op.name == "--post-data" || op.name == "--body-data" {
				req.bodies = append(req.bodies, op.value)
			}
		}
	}
	if m, ok := o.value("--method"); ok {
		req.method, req.how = strings.ToUpper(m), c.name+" --method "+m
	}
	if j, ok := req.judge(Network); ok {
		return j
	}
	if o.has("--spider") {
		return is(ReadOnly, "wget --spider only checks that the URL exists")
	}
	if out, ok := o.value("-O", "--output-document"); ok {
		if out == "-" || isDiscard(out) {
			return is(ReadOnly, "wget -O - fetches a URL and prints it")
		}
		return writeTargets(st, "wget saves the download to", []arg{lit(out)})
	}
	if dir, ok := o.value("-P", "--directory-prefix"); ok {
		return writeTargets(st, "wget saves the download into", []arg{lit(dir + "/")})
	}
	return is(WorkspaceWrite, "wget saves the download into the current directory")
}

// httpMethods are the methods HTTPie accepts as its first operand.
var httpMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

// httpieCmd judges HTTPie and xh: http [METHOD] URL [ITEM...]. Data items
// (field=value, field:=json, field@file) make the request a POST.
func httpieCmd(st *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-o --output -a --auth -A --auth-type --session --session-read-only --verify --cert --cert-key --timeout --proxy --pretty -s --style -p --print"})
	if helpOnly(c.args) {
		return is(ReadOnly, c.name+" only prints its help or version")
	}
	operands := o.operands
	method := ""
	if len(operands) > 0 && httpMethods[strings.ToUpper(operands[0].text)] {
		method = strings.ToUpper(operands[0].text)
		operands = operands[1:]
	}
	req := httpRequest{prog: c.name}
	if method != "" {
		req.method, req.how = method, c.name+" "+method
	}
	if len(operands) > 0 {
		req.urls = []string{operands[0].text}
		for _, item := range operands[1:] {
			if isHTTPieData(item.text) {
				req.write("POST", c.name+" "+item.text+" sends data")
				req.bodies = append(req.bodies, item.text)
			}
		}
	}
	if j, ok := req.judge(Network); ok {
		return j
	}
	if out, ok := o.value("-o", "--output"); ok {
		return writeTargets(st, c.name+" saves the download to", []arg{lit(out)})
	}
	if o.has("-d", "--download") {
		return is(WorkspaceWrite, c.name+" --download saves the response into the current directory")
	}
	return is(ReadOnly, c.name+" fetches a URL with GET and prints it")
}

// isHTTPieData reports a request item that is body data: field=value,
// field:=json or field@file, but not a query (==) or a header (:).
func isHTTPieData(item string) bool {
	i := strings.IndexAny(item, "=:@")
	if i <= 0 {
		return false
	}
	rest := item[i:]
	switch {
	case strings.HasPrefix(rest, "=="):
		return false
	case strings.HasPrefix(rest, ":="), strings.HasPrefix(rest, "="), strings.HasPrefix(rest, "@"):
		return true
	}
	return false // Header:value
}

// httpRequest is what an HTTP client is asked to send.
type httpRequest struct {
	prog   string
	method string   // upper case; "" is the client's default (GET)
	how    string   // the words that set the method, for the rule
	urls   []string // the URLs or API paths
	bodies []string // bodies and form fields given inline
}

// write notes an option that makes the request send data, which makes a
// request without an explicit method a POST (or PUT for an upload).
func (r *httpRequest) write(method, how string) {
	if r.method == "" {
		r.method, r.how = method, how
	}
}

// judge returns the judgement on a request that writes (ok false for a
// GET or HEAD, which the client judges by where its output goes). A write
// is destructive when its method is DELETE or its URL or body says it
// deletes; otherwise it has class writes (network for a plain HTTP client,
// config_mutation for a forge's API).
func (r httpRequest) judge(writes Class) (judgement, bool) {
	switch r.method {
	case "", "GET", "HEAD", "OPTIONS":
		return judgement{}, false
	}
	how := r.how
	if how == "" {
		how = r.prog + " " + r.method
	}
	if verbWords[strings.ToLower(r.method)] == Destructive {
		return is(Destructive, how+" sends an HTTP "+r.method+" request, which deletes what "+r.target()+" names"), true
	}
	for _, u := range r.urls {
		if w, ok := urlDestroys(u); ok {
			return is(Destructive, how+" sends a "+r.method+" to "+clip(u)+", whose "+w+" says it deletes"), true
		}
	}
	for _, b := range r.bodies {
		if why, ok := bodyDestroys(r.prog, b); ok {
			return is(Destructive, how+" sends a request body that "+why), true
		}
	}
	return is(writes, how+" sends a "+r.method+" request"), true
}

// target names the request's URL for a rule.
func (r httpRequest) target() string {
	if len(r.urls) == 0 {
		return "the URL"
	}
	return clip(r.urls[0])
}

// urlVerbs are the destroying verbs that count in a URL's path or query.
// Fewer than verbWords: /_flush, /reset and /disable do not delete data.
var urlVerbs = map[string]bool{
	"delete": true, "deleteall": true, "deletion": true, "destroy": true, "remove": true,
	"removeall": true, "purge": true, "drop": true, "truncate": true, "wipe": true, "erase": true,
	"prune": true, "forget": true, "terminate": true, "uninstall": true, "unregister": true,
	"deregister": true, "revoke": true, "nuke": true, "obliterate": true,
}

// urlDestroys reports a URL whose path or query names a destroying verb
// (…/job/x/doDelete, …/_delete_by_query, …?action=delete), and the word.
func urlDestroys(u string) (string, bool) {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		if j := strings.IndexByte(u, '/'); j >= 0 {
			u = u[j:] // the path: host names say nothing
		} else {
			return "", false
		}
	}
	for _, seg := range strings.FieldsFunc(u, func(r rune) bool { return r == '/' || r == '?' || r == '&' || r == '=' }) {
		for _, part := range splitWords(seg) {
			if urlVerbs[part] {
				return seg, true
			}
		}
	}
	return "", false
}

// bodyDestroys reports a request body that deletes: SQL that drops,
// truncates or deletes every row (sent to ClickHouse, InfluxDB or any SQL
// endpoint, also as q=... or query=...), an Elasticsearch bulk or Solr
// delete, a GraphQL mutation that deletes.
func bodyDestroys(prog, body string) (string, bool) {
	if strings.HasPrefix(body, "@") {
		return "", false // a file: not read
	}
	cands := []string{body}
	if i := strings.IndexByte(body, '='); i > 0 && !strings.ContainsAny(body[:i], " {\"<") {
		cands = append(cands, body[i+1:])
	}
	for _, b := range cands {
		if j := judgeSQL(prog, b); j.class == Destructive {
			return "runs SQL: " + strings.TrimPrefix(j.rule, prog+" "), true
		}
	}
	lower := strings.ToLower(body)
	switch {
	case strings.Contains(lower, "<delete"):
		return "holds a <delete> command", true
	case strings.Contains(strings.ReplaceAll(lower, " ", ""), `"delete":`):
		return `holds a "delete" action`, true
	case strings.Contains(lower, "mutation"):
		for _, w := range strings.FieldsFunc(body, func(r rune) bool {
			return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_')
		}) {
			if parts := splitWords(w); len(parts) > 1 && urlVerbs[parts[0]] {
				return "is a GraphQL mutation " + w, true
			}
		}
	}
	return "", false
}
