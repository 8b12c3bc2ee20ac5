package main

import (
	"os"
	"runtime"
	"testing"
)

// TestMachineMemory: on Linux, the memory kairos limits itself to half of
// is read from /proc/meminfo (or the cgroup's limit) and is at least what
// the runtime already took from the system.
func TestMachineMemory(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo: the limit is left to GOMEMLIMIT")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if got := machineMemory(); got < int64(ms.Sys) {
		t.Errorf("machineMemory() = %d bytes, less than the %d the runtime holds", got, ms.Sys)
	}
}
