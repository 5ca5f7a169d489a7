//go:build unix

package sekitei

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used: a
// machine shared with other jobs stretches wall time, not CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
