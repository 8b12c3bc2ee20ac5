package fileio

import "golang.org/x/sys/unix"

// ReserveFiles grows the process's file descriptor table, in the
// background, to hold n more open files. Linux grows the table as open
// needs it, to the next power of two, and in a multi-threaded process
// (every Go program) each growth waits for an RCU grace period: about 15
// ms on the project's machine, so that opening the 1,024 per-rank files
// of a trace for a replay cost 45 ms in three growths (BENCHMARKS.md).
// Growing the table once, while the caller does other work, costs one
// grace period and overlaps it. The caller need not wait: a file opened
// meanwhile waits for the growth at most.
func ReserveFiles(n int) {
	if n < 32 {
		return
	}
	go func() {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		defer unix.Close(fd)
		var lim unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
			return
		}
		// The lowest free descriptor from fd+n on: F_DUPFD never replaces
		// a descriptor in use.
		target := min(uint64(fd+n), lim.Cur-1)
		if target <= uint64(fd) {
			return
		}
		if d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, int(target)); err == nil {
			unix.Close(d)
		}
	}()
}
