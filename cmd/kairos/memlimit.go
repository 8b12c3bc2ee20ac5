package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// limitMemory sets the Go runtime's soft memory limit to half the
// machine's memory (or of the cgroup's limit, if lower), unless
// GOMEMLIMIT sets one: the collector then runs more often as the heap
// nears it, where by default it lets the heap grow to twice what is live.
// A verb that holds a long run in memory (patterns of NetPIPE's 60.6 M
// events peaked at 15.2 GB on a 24 GB machine) stays nearer what it
// needs instead of being killed; a small run never reaches the limit and
// is not slowed.
func limitMemory() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if total := machineMemory(); total > 0 {
		debug.SetMemoryLimit(total / 2)
	}
}

// machineMemory returns the bytes of memory this process may use: the
// machine's (MemTotal of /proc/meminfo) or its cgroup's limit
// (memory.max), whichever is lower; 0 where neither says.
func machineMemory() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if kb, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
				if err == nil {
					total = n << 10
				}
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}
