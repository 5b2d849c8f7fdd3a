//go:build !unix

package hook

import "syscall"

// detachedAttr has nothing to set where there are no sessions.
func detachedAttr() *syscall.SysProcAttr { return nil }
