package classify

// Users, groups, passwords and rights: privilege.

// userPrograms registers the user and permission tools.
func userPrograms(r *registry) {
	r.handle(userdelCmd, "userdel", "deluser")
	r.fixed(ConfigMutation, map[string]string{
		"ssh-copy-id": "installs a key on another machine",
	})
	r.fixed(Privilege, map[string]string{
		"useradd": "creates a user", "adduser": "creates a user", "usermod": "changes a user",
		"groupadd": "creates a group",
		"groupmod": "changes a group", "groupdel": "deletes a group", "gpasswd": "changes group members",
		"passwd": "changes a password", "chpasswd": "changes passwords", "chage": "changes password ageing",
		"chsh": "changes a login shell", "chfn": "changes user information", "visudo": "edits sudo rights",
		"vipw": "edits the user database", "vigr": "edits the group database", "newusers": "creates users",
		"setcap": "grants capabilities to a program",
		"newgrp": "switches group",
	})
}

// userdelCmd: deleting a user is privilege; with -r (userdel) or
// --remove-home / --remove-all-files (deluser) it also deletes the
// user's files.
func userdelCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-R --root -P --prefix --backup-to --conf"})
	if o.has("-r", "--remove", "--remove-home", "--remove-all-files") {
		return is(Destructive, c.name+" also deletes the user's home directory and files")
	}
	return is(Privilege, c.name+" deletes a user")
}
