package ui

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time of the calling OS thread; procCPU the whole process's (its GC
// workers included). On a shared machine wall time also counts the slices other processes
// ran in; CPU time is the cost of our own work alone. Benchmarks that read threadCPU lock
// their goroutine to its thread.
func threadCPU() time.Duration { return cpuClock(unix.CLOCK_THREAD_CPUTIME_ID) }

func procCPU() time.Duration { return cpuClock(unix.CLOCK_PROCESS_CPUTIME_ID) }

func cpuClock(id int32) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(id, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}
