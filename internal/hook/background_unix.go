//go:build unix

package hook

import "syscall"

// detachedAttr puts the background delivery in a session of its own, so
// the harness's signals to the hook's process group do not reach it.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
