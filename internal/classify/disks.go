package classify

// Disks, partitions, volumes and file systems: LVM, ZFS, partitioning and
// formatting tools. Formatting or repartitioning a disk erases it.

// diskPrograms registers the disk and volume tools.
func diskPrograms(r *registry) {
	r.fixed(Destructive, map[string]string{
		"lvremove": "deletes logical volumes and their data", "vgremove": "deletes a volume group",
		"pvremove": "wipes the LVM label from a disk", "lvreduce": "shrinks a logical volume, cutting off its end",
	})
	r.handle(mdadmCmd, "mdadm")
	r.handle(diskCmd, "fdisk", "parted", "sgdisk", "cryptsetup")
	r.handle(zfsCmd, "zfs")
	r.handle(zpoolCmd, "zpool")
	r.prefix("mkfs", fixedRule(Destructive, "formats a disk, erasing what is on it"))
	r.fixed(ReadOnly, map[string]string{
		"lsblk": "lists block devices", "blkid": "prints device ids", "pvs": "lists LVM volumes",
		"vgs": "lists LVM volumes", "lvs": "lists LVM volumes", "pvdisplay": "describes LVM volumes",
		"vgdisplay": "describes LVM volumes", "lvdisplay": "describes LVM volumes",
	})
	r.fixed(ConfigMutation, map[string]string{
		"lvcreate": "creates LVM volumes", "lvextend": "resizes LVM volumes", "lvresize": "resizes LVM volumes",
		"vgcreate": "creates LVM volume groups", "pvcreate": "initialises LVM disks",
		"vgextend": "extends LVM volume groups", "resize2fs": "resizes a file system",
		"xfs_growfs": "grows a file system", "tune2fs": "changes file system settings",
	})
	r.fixed(Destructive, map[string]string{
		"wipefs": "erases file-system signatures from a disk", "mkswap": "formats a disk as swap",
		"mke2fs": "formats a disk", "blkdiscard": "discards every block of a disk",
		"sfdisk": "rewrites a partition table", "cfdisk": "rewrites a partition table",
		"gdisk": "rewrites a partition table", "badblocks": "may overwrite a disk while testing it",
		"zerofree": "overwrites free blocks",
	})
}

// diskCmd: partitioning tools only read when they list.
func diskCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{})
	switch {
	case o.has("-l", "--list", "-p", "--print", "-s", "--size") || len(o.operands) > 1 && o.operands[1].text == "print":
		return is(ReadOnly, c.name+" lists partitions")
	case c.name == "cryptsetup" && len(o.operands) > 0 && (o.operands[0].text == "status" || o.operands[0].text == "luksDump"):
		return is(ReadOnly, "cryptsetup shows an encrypted volume")
	case c.name == "cryptsetup" && len(o.operands) > 0 && (o.operands[0].text == "open" || o.operands[0].text == "luksOpen" || o.operands[0].text == "close"):
		return is(ConfigMutation, "cryptsetup opens or closes an encrypted volume")
	}
	return is(Destructive, c.name+" rewrites partitions or encryption headers, which can erase a disk")
}

var zfsVerbs = verbTable{
	"list": ReadOnly, "get": ReadOnly, "holds": ReadOnly, "diff": ReadOnly, "userspace": ReadOnly,
	"groupspace": ReadOnly, "projectspace": ReadOnly, "help": ReadOnly, "send": ReadOnly, "version": ReadOnly,
	"set": ConfigMutation, "create": ConfigMutation, "snapshot": ConfigMutation, "snap": ConfigMutation,
	"clone": ConfigMutation, "rename": ConfigMutation, "mount": ConfigMutation, "unmount": ConfigMutation,
	"umount": ConfigMutation, "promote": ConfigMutation, "inherit": ConfigMutation, "hold": ConfigMutation,
	"release": ConfigMutation, "allow": ConfigMutation, "unallow": ConfigMutation, "share": ConfigMutation,
	"unshare": ConfigMutation, "bookmark": ConfigMutation, "receive": ConfigMutation, "recv": ConfigMutation,
	"load-key": ConfigMutation, "unload-key": ConfigMutation, "change-key": ConfigMutation,
	"destroy": Destructive, "rollback": Destructive,
}

func zfsCmd(_ *state, c command) judgement {
	verb, rest := subcommand(c.args, "")
	if (verb == "receive" || verb == "recv") && scanOptions(rest, scanSpec{}).has("-F") {
		return is(Destructive, "zfs receive -F rolls the dataset back, destroying newer data")
	}
	return lookupVerb("zfs", verb, zfsVerbs)
}

var zpoolVerbs = verbTable{
	"list": ReadOnly, "status": ReadOnly, "get": ReadOnly, "iostat": ReadOnly, "history": ReadOnly,
	"events": ReadOnly, "help": ReadOnly, "version": ReadOnly, "wait": ReadOnly,
	"set": ConfigMutation, "create": ConfigMutation, "add": ConfigMutation, "attach": ConfigMutation,
	"detach": ConfigMutation, "replace": ConfigMutation, "online": ConfigMutation, "offline": ConfigMutation,
	"import": ConfigMutation, "export": ConfigMutation, "scrub": ConfigMutation, "trim": ConfigMutation,
	"upgrade": ConfigMutation, "clear": ConfigMutation, "remove": ConfigMutation, "split": ConfigMutation,
	"reguid": ConfigMutation, "resilver": ConfigMutation, "initialize": ConfigMutation, "checkpoint": ConfigMutation,
	"destroy": Destructive, "labelclear": Destructive,
}

func zpoolCmd(_ *state, c command) judgement {
	verb, _ := subcommand(c.args, "")
	return lookupVerb("zpool", verb, zpoolVerbs)
}

// mdadmCmd: creating an array or zeroing a superblock overwrites disks;
// --detail, --examine and --query read; the rest manages an array.
func mdadmCmd(_ *state, c command) judgement {
	o := scanOptions(c.args, scanSpec{valued: "-l --level -n --raid-devices -c --chunk --name -e --metadata"})
	switch {
	case o.has("-C", "--create", "--zero-superblock", "-B", "--build"):
		return is(Destructive, "mdadm "+firstOf(o, "-C", "--create", "--zero-superblock", "-B", "--build")+" overwrites the disks it is given")
	case o.has("-D", "--detail", "-E", "--examine", "-Q", "--query", "--detail-platform"):
		return is(ReadOnly, "mdadm describes arrays")
	case o.has("-S", "--stop", "-A", "--assemble", "--run"):
		return is(ServiceControl, "mdadm starts or stops an array")
	}
	return is(ConfigMutation, "mdadm changes an array")
}
