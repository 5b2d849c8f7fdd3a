package hook

import (
	"fmt"
	"os"
	"os/exec"
)

// flushLater starts Config.FlushCommand, a process of its own that
// delivers the spool, without waiting for it: PreToolUse only appends its
// record, so that its answer never waits on the server, and a call it
// denies has no PostToolUse to deliver that record (one it asks about has
// one only once a person answers). Starting the process costs the hook a
// few milliseconds, so it is done for those calls only: an allowed call's
// PostToolUse follows it and delivers. Nothing is started while another
// process delivers the spool: that one takes the record too, since a
// delivery reads the spool until it is empty.
func (h *Hook) flushLater(spool *Spool) {
	if spool == nil || len(h.cfg.FlushCommand) == 0 {
		return
	}
	unlock, err := lock(spool.path(deliverLock), true)
	if err != nil || unlock == nil {
		return
	}
	unlock()
	if err := startDetached(h.cfg.FlushCommand); err != nil {
		h.report("cannot start the background delivery of the spool (%v); the next hook call delivers it", err)
	}
}

// startDetached starts argv with no standard streams (the harness waits for
// the hook's stdout and stderr to close, so the child must not hold them),
// in a session of its own where the system has them, and does not wait for
// it.
func startDetached(argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = detachedAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", argv[0], err)
	}
	// Release, not Wait: the child outlives this process, and the kernel
	// reparents it.
	return cmd.Process.Release()
}

// BackgroundFlushCommand is the FlushCommand of a binary whose subcommand
// args deliver the spool: os.Executable and args, or nil when the binary
// cannot be found (the hook then leaves delivery to the next call).
func BackgroundFlushCommand(args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return append([]string{exe}, args...)
}
