package main

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMachineMemoryUnderLimit: under a limit of address space (ulimit
// -v), the memory a run may use is what the limit leaves beyond what the
// process has mapped, not the machine's: the memory limit and the watch
// then act before the runtime is refused a mapping. In a process of its
// own, whose limit it sets.
func TestMachineMemoryUnderLimit(t *testing.T) {
	const room = 1 << 30
	if os.Getenv("KAIROS_TEST_RLIMIT_CHILD") == "1" {
		used := procSizes("/proc/self/status", "VmSize:")[0]
		if used == 0 {
			t.Skip("no VmSize in /proc/self/status")
		}
		var l unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_AS, &l); err != nil {
			t.Skip(err)
		}
		l.Cur = uint64(used + room)
		if err := unix.Setrlimit(unix.RLIMIT_AS, &l); err != nil {
			t.Skip(err) // a hard limit below it
		}
		got := machineMemory()
		if got <= 0 || got > room {
			t.Errorf("machineMemory() under ulimit -v of %d MB more than the %d MB mapped = %d MB, expected between 0 and %d", room>>20, used>>20, got>>20, room>>20)
		}
		return
	}
	if procSizes("/proc/self/status", "VmSize:")[0] == 0 {
		t.Skip("no /proc/self/status")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMachineMemoryUnderLimit$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "KAIROS_TEST_RLIMIT_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("in a process of its own: %v\n%s", err, out)
	}
}
