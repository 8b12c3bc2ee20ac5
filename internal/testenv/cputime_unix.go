//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user and system) the process has used, so
// that benchmarks can report a cost that the load of a shared machine
// distorts less than wall-clock time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
