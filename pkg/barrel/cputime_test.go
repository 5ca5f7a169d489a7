package barrel

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time of the calling OS thread
// (CLOCK_THREAD_CPUTIME_ID). Query latencies are reported both as wall time
// and as this CPU time: on a machine shared with other jobs the wall time
// also counts the time the thread waited for a core.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// timeQuery runs fn on a locked thread and returns its wall and CPU time.
func timeQuery(fn func()) (wall, cpu time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, t0 := threadCPU(), time.Now()
	fn()
	return time.Since(t0), threadCPU() - c0
}
