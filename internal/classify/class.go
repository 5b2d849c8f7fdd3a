package classify

import "fmt"

// Class is a command's risk class. Its value is the snake_case name used in
// JSON, policies and the CLI.
type Class string

// The classes, from least to most risky. Unknown sits outside that order:
// it is what the classifier says of a command it cannot read, and policies
// treat it at least as config_mutation (see Policy.Decide).
const (
	ReadOnly       Class = "read_only"       // reads and prints, changes nothing
	WorkspaceWrite Class = "workspace_write" // writes files in the workspace, runs the project's build
	Network        Class = "network"         // sends data out or fetches into the workspace
	ConfigMutation Class = "config_mutation" // changes system, repository-remote or infrastructure configuration
	ServiceControl Class = "service_control" // starts, stops or restarts services, machines, containers
	PackageInstall Class = "package_install" // installs or removes software
	SecretRead     Class = "secret_read"     // reads or prints credentials: keys, tokens, passwords, .env files, the whole environment
	Privilege      Class = "privilege"       // runs as another user, changes users, owners or permissions
	Destructive    Class = "destructive"     // deletes or overwrites data that cannot be got back
	Unknown        Class = "unknown"         // the classifier cannot tell what the command does
)

// Classes lists every class in order of Rank, unknown last.
var Classes = []Class{ReadOnly, WorkspaceWrite, Network, ConfigMutation, ServiceControl, PackageInstall, SecretRead, Privilege, Destructive, Unknown}

// Rank orders classes by risk: read_only is 0, destructive 9. Reading a
// secret ranks above installing software: a leaked credential reaches
// further than anything a package manager does to one machine. Unknown ranks
// just below destructive, so that the worst of unknown and anything short of
// destructive is unknown: a command line with one part the classifier cannot
// read is a command line it cannot vouch for. Rank returns -1 for a value
// that is not a class.
func (c Class) Rank() int {
	switch c {
	case ReadOnly:
		return 0
	case WorkspaceWrite:
		return 1
	case Network:
		return 2
	case ConfigMutation:
		return 3
	case ServiceControl:
		return 4
	case PackageInstall:
		return 5
	case SecretRead:
		return 6
	case Privilege:
		return 7
	case Unknown:
		return 8
	case Destructive:
		return 9
	}
	return -1
}

// Valid reports whether c is one of the classes.
func (c Class) Valid() bool { return c.Rank() >= 0 }

// Worse returns whichever of c and d is riskier by Rank.
func (c Class) Worse(d Class) Class {
	if d.Rank() > c.Rank() {
		return d
	}
	return c
}

// ParseClass returns the class named s, or an error listing the valid names.
func ParseClass(s string) (Class, error) {
	c := Class(s)
	if !c.Valid() {
		return "", fmt.Errorf("classify: unknown class %q (want one of %v)", s, Classes)
	}
	return c, nil
}
