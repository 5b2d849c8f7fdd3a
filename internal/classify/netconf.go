package classify

import "strings"

// Network configuration: firewalls, interfaces, routes and the tools that
// show them.

// netconfPrograms registers the network configuration tools.
func netconfPrograms(r *registry) {
	r.handle(iptablesCmd, "iptables", "ip6tables", "iptables-nft", "iptables-legacy", "ebtables", "arptables")
	r.handle(nftCmd, "nft")
	r.handle(ipCmd, "ip")
	r.handle(optionWrites("-K --kill", ServiceControl, "closes the sockets it lists", "lists sockets"), "ss")
	r.handle(ifconfigCmd, "ifconfig", "route")
	r.fixed(ReadOnly, map[string]string{
		"netstat": "lists sockets", "ip6tables-save": "prints firewall rules",
		"iptables-save": "prints firewall rules", "ifstat": "prints interface statistics",
	})
	r.fixed(ConfigMutation, map[string]string{
		"ufw": "changes the firewall", "firewall-cmd": "changes the firewall", "nmcli": "changes network settings",
		"netplan": "changes network settings", "resolvectl": "changes DNS settings",
		"ethtool": "changes network device settings",
	})
}

// iptablesCmd: listing rules reads; any other command changes the firewall.
func iptablesCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-t --table -A --append -I --insert -D --delete -R --replace -P --policy -N --new-chain -X --delete-chain -F --flush -Z --zero -E --rename-chain -j -p -s -d -i -o --dport --sport -m -w --wait"})
	if o.has("-A", "--append", "-I", "--insert", "-D", "--delete", "-R", "--replace", "-P", "--policy", "-N", "--new-chain", "-X", "--delete-chain", "-F", "--flush", "-Z", "--zero", "-E", "--rename-chain") {
		return is(ConfigMutation, c.name+" changes firewall rules")
	}
	return is(ReadOnly, c.name+" lists firewall rules")
}

// nftCmd: nft list reads; everything else changes the rule set.
func nftCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "-f --file -I --includepath")
	if verb == "list" || verb == "describe" || helpOnly(c.args) || verb == "" && !scanOptions(c.args, scanSpec{valued: "-f --file"}).has("-f", "--file") {
		return is(ReadOnly, "nft lists the firewall rules")
	}
	return is(ConfigMutation, "nft changes firewall rules")
}

// ipCmd: ip OBJECT [show|list] reads; add, del, change, set, flush...
// change networking. ip netns exec NAME COMMAND unwraps.
func ipCmd(st *state, c command) judgement {
	object, rest := subcommand(c.args, "-n -netns -b -batch -rc -rcvbuf -l -loops -f -family")
	action := ""
	if len(rest) > 0 {
		action = strings.ToLower(rest[0].text)
	}
	if object == "netns" && action == "exec" && len(rest) > 2 {
		st.call(rest[2:], input{})
		return judgement{class: Privilege, rule: "ip netns exec runs the command in a network namespace, as root", wrapper: true}
	}
	switch action {
	case "", "show", "list", "ls", "get", "lst", "sh", "s", "l", "help", "monitor":
		return is(ReadOnly, "ip "+object+" shows network settings")
	}
	if !strings.HasPrefix(action, "-") && (action == "add" || action == "del" || action == "delete" || action == "change" || action == "replace" || action == "set" || action == "flush" || action == "append" || action == "prepend" || action == "save" || action == "restore" || action == "a" || action == "d") {
		return is(ConfigMutation, "ip "+object+" "+action+" changes network settings")
	}
	return is(ReadOnly, "ip "+object+" shows network settings")
}

// ifconfigCmd: with no arguments or one interface it shows settings.
func ifconfigCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	if len(o.operands) <= 1 {
		return is(ReadOnly, c.name+" shows network settings")
	}
	return is(ConfigMutation, c.name+" changes network settings")
}
