package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/logbookhq/logbook/internal/store"
)

// BackendCPU is the CPU time each server process of a PostgreSQL database
// on this machine has used, by process id: PostgreSQL serves each
// connection from a process of its own, so on PostgreSQL most of a
// write's CPU is there and not in logbook's process.
type BackendCPU map[int]time.Duration

// SampleBackendCPU reads the CPU time of the server processes of st's
// database (every connection to it, logbook's pool among them). ok is
// false where that cannot be read: another engine, a database on another
// machine, or no /proc.
func SampleBackendCPU(ctx context.Context, st store.Store) (cpu BackendCPU, ok bool) {
	withDB, isSQL := st.(interface{ DB() *sql.DB })
	if st.Engine() != "postgres" || !isSQL {
		return nil, false
	}
	rows, err := withDB.DB().QueryContext(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return nil, false
	}
	defer rows.Close()
	cpu = BackendCPU{}
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			return nil, false
		}
		used, err := processCPUOf(pid)
		if err != nil {
			return nil, false // not a process of this machine
		}
		cpu[pid] = used
	}
	return cpu, rows.Err() == nil
}

// Since is the CPU the processes of b used since earlier was sampled
// (processes new since then, all of theirs). A connection closed between
// the two samples is not counted.
func (b BackendCPU) Since(earlier BackendCPU) time.Duration {
	var sum time.Duration
	for pid, used := range b {
		sum += used - earlier[pid]
	}
	return sum
}

// clockTicks is Linux's unit of CPU time in /proc (USER_HZ, 100 on every
// architecture Go runs Linux on).
const clockTicks = 100

// processCPUOf reads a process's user and system CPU time from
// /proc/PID/stat: fields 14 and 15, counted after the command's closing
// parenthesis, since the command itself may hold spaces.
func processCPUOf(pid int) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStat(string(raw))
}

func parseProcStat(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("not a /proc/PID/stat line: %q", stat)
	}
	fields := strings.Fields(stat[end+1:]) // from field 3, the state
	if len(fields) < 13 {
		return 0, fmt.Errorf("a /proc/PID/stat line of %d fields: %q", len(fields)+2, stat)
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime, stime
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/PID/stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
