//go:build unix

package dumpi

import "syscall"

// processCPU returns the user plus system CPU seconds of this process, so
// that a benchmark's rate per CPU second holds on a loaded machine.
func processCPU() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e9
}
