package classify

// Users, groups, passwords and rights: privilege.

// userPrograms registers the user and permission tools.
func userPrograms(r *registry) {
	r.fixed(ConfigMutation, map[string]string{
		"ssh-copy-id": "installs a key on another machine",
	})
	r.fixed(Privilege, map[string]string{
		"useradd": "creates a user", "adduser": "creates a user", "usermod": "changes a user",
		"userdel": "deletes a user", "deluser": "deletes a user", "groupadd": "creates a group",
		"groupmod": "changes a group", "groupdel": "deletes a group", "gpasswd": "changes group members",
		"passwd": "changes a password", "chpasswd": "changes passwords", "chage": "changes password ageing",
		"chsh": "changes a login shell", "chfn": "changes user information", "visudo": "edits sudo rights",
		"vipw": "edits the user database", "vigr": "edits the group database", "newusers": "creates users",
		"setcap": "grants capabilities to a program", "pkexec": "runs a command as root",
		"runuser": "runs a command as another user", "sg": "runs a command as another group",
		"newgrp": "switches group",
	})
}
