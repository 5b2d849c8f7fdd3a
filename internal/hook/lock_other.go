//go:build !unix

package hook

import "sync"

// processLocks stand in for flock where there is none: they keep the
// goroutines of one process apart, not separate processes.
var processLocks sync.Map // path → *sync.Mutex

// lock takes the process-wide lock for path; see lock_unix.go for the
// real one.
func lock(path string, tryOnly bool) (unlock func(), err error) {
	m, _ := processLocks.LoadOrStore(path, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	if tryOnly {
		if !mu.TryLock() {
			return nil, nil
		}
	} else {
		mu.Lock()
	}
	return mu.Unlock, nil
}
