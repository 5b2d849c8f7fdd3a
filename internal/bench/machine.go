package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// MachineCPU is how the machine's cores spent the time of a load, and how
// much of it this process used. On a shared virtual machine the same build
// runs a third slower when other guests are busy, so a figure means
// something only next to these: a run with cores idle and nothing stolen
// is limited by logbook; one with steal or no idle time is limited by the
// machine.
type MachineCPU struct {
	Cores int `json:"cores"`
	// Busy, IOWait, Idle and Steal are fractions of all cores' time:
	// running anything (user, system, interrupts), idle with a disk
	// request pending, idle, and taken by the hypervisor for other guests.
	Busy   float64 `json:"busy"`
	IOWait float64 `json:"iowait"`
	Idle   float64 `json:"idle"`
	Steal  float64 `json:"steal"`
	// ProcessSeconds is the CPU time this process used (user and system).
	ProcessSeconds float64 `json:"process_cpu_seconds"`
}

// cpuSample is the machine's CPU time by state since boot, in clock ticks,
// and this process's CPU time.
type cpuSample struct {
	busy, iowait, idle, steal uint64
	process                   time.Duration
}

// sampleCPU reads the machine's times from /proc/stat; ok is false where
// there is no /proc (not Linux).
func sampleCPU() (s cpuSample, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return s, false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return s, false
	}
	if s, err = parseCPULine(line); err != nil {
		return s, false
	}
	s.process = processCPU()
	return s, true
}

// parseCPULine reads /proc/stat's first line, "cpu user nice system idle
// iowait irq softirq steal guest guest_nice" (guest time is counted in
// user already).
func parseCPULine(line string) (cpuSample, error) {
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return cpuSample{}, fmt.Errorf("not a /proc/stat cpu line: %q", line)
	}
	var t [8]uint64
	for i := range t {
		v, err := strconv.ParseUint(fields[i+1], 10, 64)
		if err != nil {
			return cpuSample{}, fmt.Errorf("/proc/stat cpu line, field %d: %w", i+1, err)
		}
		t[i] = v
	}
	user, nice, system, idle, iowait, irq, softirq, steal := t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]
	return cpuSample{busy: user + nice + system + irq + softirq, iowait: iowait, idle: idle, steal: steal}, nil
}

// machineCPU is how the cores spent the time between two samples.
func machineCPU(from, to cpuSample) *MachineCPU {
	busy, iowait, idle, steal := to.busy-from.busy, to.iowait-from.iowait, to.idle-from.idle, to.steal-from.steal
	total := float64(busy + iowait + idle + steal)
	if total == 0 {
		return nil
	}
	return &MachineCPU{
		Cores: runtime.NumCPU(),
		Busy:  float64(busy) / total, IOWait: float64(iowait) / total,
		Idle: float64(idle) / total, Steal: float64(steal) / total,
		ProcessSeconds: (to.process - from.process).Seconds(),
	}
}
