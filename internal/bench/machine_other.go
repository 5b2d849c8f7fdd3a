//go:build !unix

package bench

import "time"

// processCPU is 0 where there is no getrusage; sampleCPU reports nothing
// there anyway, for want of /proc.
func processCPU() time.Duration { return 0 }
