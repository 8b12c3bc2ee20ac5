//go:build unix

package ti

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) this process has used,
// so that benchmarks can report a rate that other load on the machine
// does not distort.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
