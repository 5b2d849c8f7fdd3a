package classify

import "strings"

// HTTP clients. A plain GET that prints the response only reads; sending
// data (a method other than GET/HEAD, a body, a form, an upload) is
// network; saving the response writes a file, judged by where it lands.
// Piping a download into a shell is judged by the shell (see
// runStdinScript).

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
		"rclone": "copies files to or from cloud storage", "aria2c": "downloads files",
		"git-lfs": "transfers large files", "gh": "calls the GitHub API", "glab": "calls the GitLab API",
		"nmap": "scans the network", "tcpdump": "captures network traffic", "ngrok": "exposes a local port",
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
	if m, ok := o.value("-X", "--request"); ok && !strings.EqualFold(m, "GET") && !strings.EqualFold(m, "HEAD") {
		return is(Network, "curl -X "+m+" sends a "+strings.ToUpper(m)+" request")
	}
	get := o.has("-G", "--get")
	for _, op := range o.opts {
		switch {
		case (strings.HasPrefix(op.name, "--data") || op.name == "-d") && !get:
			return is(Network, "curl "+op.name+" sends data (a POST request)")
		case op.name == "-F" || op.name == "--form" || op.name == "--form-string":
			return is(Network, "curl "+op.name+" uploads a form")
		case op.name == "-T" || op.name == "--upload-file":
			return is(Network, "curl -T uploads a file")
		case op.name == "--json":
			return is(Network, "curl --json sends JSON (a POST request)")
		case op.name == "--mail-rcpt" || op.name == "-Q" || op.name == "--quote":
			return is(Network, "curl "+op.name+" sends mail or server commands")
		}
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
	if m, ok := o.value("--method"); ok && !strings.EqualFold(m, "GET") && !strings.EqualFold(m, "HEAD") {
		return is(Network, "wget --method "+m+" sends a "+strings.ToUpper(m)+" request")
	}
	if o.has("--post-data", "--post-file", "--body-data", "--body-file") {
		return is(Network, "wget sends data (a POST request)")
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
	if method != "" && method != "GET" && method != "HEAD" {
		return is(Network, c.name+" sends a "+method+" request")
	}
	if len(operands) > 1 {
		for _, item := range operands[1:] {
			if isHTTPieData(item.text) && method == "" {
				return is(Network, c.name+" "+item.text+" sends data (a POST request)")
			}
		}
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
