//go:build unix

package hook

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lock takes an exclusive flock on the file at path, made when missing,
// and returns its release. With tryOnly it does not wait: when another
// process holds the lock it returns a nil unlock and no error. The kernel
// releases the lock if the process dies, so a crashed hook never leaves
// the spool locked.
func lock(path string, tryOnly bool) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the lock file %s: %w", path, err)
	}
	how := syscall.LOCK_EX
	if tryOnly {
		how |= syscall.LOCK_NB
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if tryOnly && errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, nil
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
