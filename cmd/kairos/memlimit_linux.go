package main

import "golang.org/x/sys/unix"

// spaceLeft returns the bytes the process may still map under its limits
// of address space (RLIMIT_AS, ulimit -v) and of data (RLIMIT_DATA,
// ulimit -d, which counts the heap's private mappings), the lower of the
// two where both are set; 0 where neither is. Batch systems and login
// nodes set them; a heap that grows past one is refused a mapping, and
// the runtime stops with its fatal "out of memory", where the memory
// limit set from it makes the collector work harder first and
// memoryWatch stops the run with a word. What the process has mapped
// already (the runtime reserves about 0.7 GB of address space at its
// start) is taken off.
func spaceLeft() int64 {
	var used []int64 // read where a limit is set: most runs have none
	left := int64(0)
	for i, res := range []int{unix.RLIMIT_AS, unix.RLIMIT_DATA} {
		var l unix.Rlimit
		if unix.Getrlimit(res, &l) != nil || l.Cur == unix.RLIM_INFINITY || l.Cur > 1<<62 {
			continue
		}
		if used == nil {
			used = procSizes("/proc/self/status", "VmSize:", "VmData:")
		}
		n := max(int64(l.Cur)-used[i], 1)
		if left == 0 || n < left {
			left = n
		}
	}
	return left
}
