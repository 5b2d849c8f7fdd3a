package classify

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a command as the program would receive it, as far as
// that can be known without running anything.
type arg struct {
	// text is the word with quotes and escapes resolved ('r''m' and
	// $'\x72m' both give rm). Parts only known at run time ($HOME, $(date),
	// an xargs input item) keep their source text.
	text string
	// literal reports that text is exactly what the program gets: no
	// parameter, substitution or input item in it.
	literal bool
	// glob reports an unquoted *, ? or [ that the shell would expand.
	glob bool
	// param names the parameter the word starts with ("HOME" for
	// "$HOME/x" or ${HOME}), or is empty.
	param string
	// subst reports a command or process substitution in the word: its
	// value is some command's output.
	subst bool
	// fromInput reports that the word is supplied at run time from data
	// (xargs and parallel input, find's {}), not written by the agent.
	fromInput bool
}

// lit makes a literal arg, for words the classifier makes up itself (an
// argument vector split from a string).
func lit(s string) arg { return arg{text: s, literal: true} }

// inputArg stands for words that xargs, parallel or find supply at run
// time from their input.
func inputArg() arg { return arg{text: "{input}", fromInput: true} }

// renderWord resolves a parsed word into an arg. src is the text the word
// was parsed from, used to keep the source form of dynamic parts.
func renderWord(w *syntax.Word, src string) arg {
	a := arg{literal: true}
	if w == nil {
		return a
	}
	// Most words are one plain literal: avoid the builder.
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[") {
			a.text = l.Value
			return a
		}
	}
	var b strings.Builder
	for i, part := range w.Parts {
		renderPart(&b, &a, part, src, false, i == 0)
	}
	a.text = b.String()
	return a
}

func renderPart(b *strings.Builder, a *arg, part syntax.WordPart, src string, inDouble, first bool) {
	switch p := part.(type) {
	case *syntax.Lit:
		if !inDouble && (strings.ContainsAny(p.Value, "*?") || strings.Contains(p.Value, "[") && strings.Contains(p.Value, "]")) {
			a.glob = true
		}
		unescape(b, p.Value, inDouble)
	case *syntax.SglQuoted:
		if p.Dollar {
			decodeANSIC(b, p.Value)
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for i, q := range p.Parts {
			renderPart(b, a, q, src, true, first && i == 0)
		}
	case *syntax.ParamExp:
		a.literal = false
		if first && p.Param != nil {
			a.param = p.Param.Value
		}
		b.WriteString(sourceOf(part, src))
	case *syntax.CmdSubst:
		if !inDouble {
			a.literal, a.subst = false, true
			b.WriteString(sourceOf(part, src))
			return
		}
		if out, ok := knownOutput(p, src); ok {
			b.WriteString(out)
			return
		}
		a.literal, a.subst = false, true
		b.WriteString(sourceOf(part, src))
	case *syntax.ProcSubst:
		a.literal, a.subst = false, true
		b.WriteString(sourceOf(part, src))
	default: // arithmetic, extended globs, brace expansions
		a.literal = false
		b.WriteString(sourceOf(part, src))
	}
}

// knownOutput returns what a command substitution prints when that is
// plain from the text: "$(cat <<'EOF' ... EOF)", "$(cat <<< TEXT)" and
// "$(echo WORDS)" of literal words, as the shell puts it in the word
// (trailing newlines removed). The command inside is still judged where
// it runs.
func knownOutput(cs *syntax.CmdSubst, src string) (string, bool) {
	if len(cs.Stmts) != 1 {
		return "", false
	}
	s := cs.Stmts[0]
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(call.Args) > 64 || len(call.Assigns) > 0 || s.Negated || s.Background {
		return "", false
	}
	if name := call.Args[0].Lit(); name != "cat" && name != "echo" {
		return "", false // only these print what the text shows
	}
	for _, word := range call.Args {
		if !plainWord(word) {
			return "", false // a nested substitution: not known, and not worth the work
		}
	}
	args := make([]arg, len(call.Args))
	for i, w := range call.Args {
		args[i] = renderWord(w, src)
		if !args[i].literal || args[i].glob {
			return "", false
		}
	}
	var out string
	switch {
	case args[0].text == "cat" && (len(args) == 1 || len(args) == 2 && args[1].text == "-") && len(s.Redirs) == 1:
		r := s.Redirs[0]
		var body arg
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body = renderWord(r.Hdoc, src)
		case syntax.WordHdoc:
			body = renderWord(r.Word, src)
			body.text += "\n"
		default:
			return "", false
		}
		if !body.literal {
			return "", false
		}
		out = body.text
		if r.Op == syntax.DashHdoc {
			lines := strings.Split(out, "\n")
			for i, l := range lines {
				lines[i] = strings.TrimLeft(l, "\t")
			}
			out = strings.Join(lines, "\n")
		}
	case args[0].text == "echo" && len(s.Redirs) == 0 && (len(args) == 1 || !strings.HasPrefix(args[1].text, "-")):
		out = strings.Join(texts(args[1:]), " ")
	default:
		return "", false
	}
	return strings.TrimRight(out, "\n"), true
}

// plainWord reports a word made only of literal text and quotes, with no
// expansion or substitution in it.
func plainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// sourceOf returns the source text of a node, or "?" when its positions do
// not fall inside src.
func sourceOf(n syntax.Node, src string) string {
	start, end := n.Pos().Offset(), n.End().Offset()
	if start > end || end > uint(len(src)) {
		return "?"
	}
	return src[start:end]
}

// unescape writes a literal with the shell's backslash escapes removed:
// outside quotes a backslash quotes any character (\rm is rm); inside double
// quotes it only quotes $ ` " \ and newline.
func unescape(b *strings.Builder, s string, inDouble bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++ // line continuation
		case !inDouble || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
}

// decodeANSIC writes the value of a $'...' string: \x72, \162, \u0072, \n
// and friends, so $'\x72m' reads as rm.
func decodeANSIC(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := 2
			if e == 'u' {
				max = 4
			} else if e == 'U' {
				max = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else if n <= utf8.MaxRune {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default: // \\ \' \" \? and unknown escapes keep the character
			b.WriteByte(e)
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// texts returns the text of each arg.
func texts(args []arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.text
	}
	return out
}

// quoteArgs joins args into one shell-quoted line for reasons.
func quoteArgs(args []arg) string {
	if len(args) == 1 {
		return quoteText(args[0])
	}
	n := len(args)
	for _, a := range args {
		n += len(a.text)
	}
	var b strings.Builder
	b.Grow(n + 8)
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(quoteText(a))
	}
	return b.String()
}

// quoteText quotes an arg's text unless it is plain or dynamic (a dynamic
// word is shown in its source form, $HOME stays $HOME).
func quoteText(a arg) string {
	if !a.literal || a.text != "" && !strings.ContainsAny(a.text, " \t\n'\"\\$`;&|<>(){}*?[]#~!") {
		return a.text
	}
	q, err := syntax.Quote(a.text, syntax.LangBash)
	if err != nil {
		return strconv.Quote(a.text)
	}
	return q
}

// option is one option found by scanOptions: its name as written ("-f",
// "--force") and its value, if the option takes one.
type option struct {
	name     string
	value    string
	hasValue bool
}

// options is a command's arguments split into options and operands.
type options struct {
	opts     []option
	operands []arg
	// dashdash reports a "--" that ended the options.
	dashdash bool
	// rest is the index, in the scanned args, where scanning stopped when
	// it stops at the first operand; len(args) otherwise.
	rest int
}

// has reports whether any of the named options is present. Short options
// written together (-rf) have been split, so has("-f") finds them.
func (o options) has(names ...string) bool {
	for _, op := range o.opts {
		for _, n := range names {
			if op.name == n {
				return true
			}
		}
	}
	return false
}

// value returns the value of the last of the named options present.
func (o options) value(names ...string) (string, bool) {
	v, found := "", false
	for _, op := range o.opts {
		for _, n := range names {
			if op.name == n {
				v, found = op.value, true
			}
		}
	}
	return v, found
}

// hasPrefix reports whether an option starting with prefix is present
// (--data matches --data-binary).
func (o options) hasPrefix(prefix string) bool {
	for _, op := range o.opts {
		if strings.HasPrefix(op.name, prefix) {
			return true
		}
	}
	return false
}

// scanSpec tells scanOptions about a program's options.
type scanSpec struct {
	// valued lists, space-separated, the options that take a value
	// ("-o --output -X --request"). A short one takes the rest of its
	// word (-ofile) or the next word; a long one takes =value or the
	// next word.
	valued string
	// stopAtOperand ends the scan at the first operand, as POSIX
	// utilities and wrappers such as sudo and env do: what follows is
	// another command's arguments.
	stopAtOperand bool
	// longSingleDash makes -name a single option, as find and java spell
	// them, instead of -n -a -m -e.
	longSingleDash bool
}

// scanOptions splits args (without the program name) into options and
// operands according to spec. It never fails: an option it does not know
// is taken to have no value.
func scanOptions(args []arg, spec scanSpec) options {
	var o options
	o.rest = len(args)
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--" && args[i].literal:
			o.dashdash = true
			if spec.stopAtOperand {
				o.rest = i + 1
				return o
			}
			o.operands = append(o.operands, args[i+1:]...)
			return o
		case len(t) < 2 || t[0] != '-' || !args[i].literal:
			if spec.stopAtOperand {
				o.rest = i
				return o
			}
			o.operands = append(o.operands, args[i])
		case t[1] == '-' || spec.longSingleDash:
			name, value, hasValue := strings.Cut(t, "=")
			if !hasValue && hasWord(spec.valued, name) && i+1 < len(args) {
				i++
				value, hasValue = args[i].text, true
			}
			o.opts = append(o.opts, option{name: name, value: value, hasValue: hasValue})
		default: // one or more short options: -rf, -ofile, -n5
			for j := 1; j < len(t); j++ {
				name := shortName(t[j])
				if !hasWord(spec.valued, name) {
					o.opts = append(o.opts, option{name: name})
					continue
				}
				value := t[j+1:]
				if value == "" && i+1 < len(args) {
					i++
					value = args[i].text
				}
				o.opts = append(o.opts, option{name: name, value: value, hasValue: true})
				break
			}
		}
	}
	return o
}

// shortNames holds "-a", "-b", ... so that splitting -rf allocates nothing.
var shortNames = func() (names [256]string) {
	for c := range names {
		names[c] = "-" + string(rune(c))
	}
	return names
}()

func shortName(c byte) string { return shortNames[c] }

// hasWord reports whether w is one of the space-separated words of list.
func hasWord(list, w string) bool {
	for list != "" {
		var word string
		word, list, _ = strings.Cut(list, " ")
		if word == w {
			return true
		}
	}
	return false
}

// splitFields splits a string into shell-like words on blanks, for the rare
// places where a program itself splits a string (xargs input, env -S).
func splitFields(s string) []arg {
	fields := strings.Fields(s)
	out := make([]arg, len(fields))
	for i, f := range fields {
		out[i] = lit(f)
	}
	return out
}
