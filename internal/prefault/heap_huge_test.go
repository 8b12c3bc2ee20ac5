//go:build linux && (amd64 || arm64)

package prefault

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestHugeHeapAdvises checks that after HugeHeap the heap's mapping is
// eligible for huge pages (smaps' THPeligible), which under the
// "madvise" setting it is not without the advice, and no longer after
// DropHugeHeap.
func TestHugeHeapAdvises(t *testing.T) {
	if !hugeAllowed() {
		t.Skip("this machine gives no transparent huge pages, has too few free 2 MB blocks, or GODEBUG=disablethp=1")
	}
	freshHeapState(t)
	HugeHeap()
	addr := uint64(uintptr(unsafe.Pointer(heapProbe)))
	eligible, ok := smapsField(t, addr, "THPeligible")
	if !ok {
		t.Skip("this kernel's smaps has no THPeligible")
	}
	if eligible != 1 {
		t.Errorf("the heap's mapping at %#x: THPeligible %d after HugeHeap, expected 1", addr, eligible)
	}
	if huge, _ := smapsField(t, addr, "AnonHugePages"); huge == 0 {
		t.Logf("no huge page in the heap's mapping yet (the kernel had none to give, or no MADV_COLLAPSE)")
	}

	// Given up, for good: advising again changes nothing.
	DropHugeHeap()
	AdviseHeap()
	keepAdvised(^uintptr(0))
	if eligible, _ := smapsField(t, addr, "THPeligible"); eligible != 0 {
		t.Errorf("the heap's mapping at %#x: THPeligible %d after DropHugeHeap and AdviseHeap, expected 0", addr, eligible)
	}
}

// TestReserveHeapAdvises checks that what the heap holds after
// ReserveHeap lies in mappings eligible for huge pages: without it, the
// mappings the runtime makes as the heap grows are not, under the
// "madvise" setting (where every mapping is, the test tells nothing and
// is skipped).
func TestReserveHeapAdvises(t *testing.T) {
	if !hugeAllowed() {
		t.Skip("this machine gives no transparent huge pages, has too few free 2 MB blocks, or GODEBUG=disablethp=1")
	}
	var b [128]byte
	if n, _ := readSmall("/sys/kernel/mm/transparent_hugepage/enabled", b[:]); strings.Contains(string(b[:n]), "[always]") {
		t.Skip("every mapping is eligible for huge pages on this machine (setting \"always\")")
	}
	skipIfBounded(t)
	freshHeapState(t)
	HugeHeap()

	const reserved, used, piece = 64 << 20, 32 << 20, 64 << 10
	ReserveHeap(reserved)
	kept := make([][]byte, 0, used/piece)
	for range used / piece {
		kept = append(kept, make([]byte, piece))
	}
	for _, i := range []int{len(kept) / 2, len(kept) - 1} {
		addr := uint64(uintptr(unsafe.Pointer(&kept[i][0])))
		eligible, ok := smapsField(t, addr, "THPeligible")
		if !ok {
			t.Skip("this kernel's smaps has no THPeligible")
		}
		if eligible != 1 {
			t.Errorf("piece %d of %d, at %#x: THPeligible %d after ReserveHeap(%d MB), expected 1", i, len(kept), addr, eligible, reserved>>20)
		}
	}
}

// freshHeapState sets the package's heap state as before HugeHeap (not
// dropped: DropHugeHeap is for good), and back as it was once t ends, so
// that the tests run in any order and again (-count).
func freshHeapState(t *testing.T) {
	wasDropped, wasTop := dropped.Load(), heapTop.Load()
	t.Cleanup(func() { dropped.Store(wasDropped); heapTop.Store(wasTop) })
	dropped.Store(false)
	heapTop.Store(0)
}

// smapsField returns the value of field name in /proc/self/smaps for the
// mapping that holds addr.
func smapsField(t *testing.T, addr uint64, name string) (int64, bool) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lo, hi, isRange := strings.Cut(fields[0], "-"); isRange && !strings.HasSuffix(fields[0], ":") {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			in = err1 == nil && err2 == nil && l <= addr && addr < h
			continue
		}
		if in && fields[0] == name+":" && len(fields) > 1 {
			v, err := strconv.ParseInt(fields[1], 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

func TestFreeHugeBlocks(t *testing.T) {
	for _, c := range []struct {
		name, info string
		want       int
	}{
		{"this machine's", `Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3
Node 0, zone    DMA32      0      4      2      2      1      2      0      3      3      1    753
Node 0, zone   Normal   9915   6218   3587   1402   1153    994   1914   1271    724    428    934
`, (1 + 2*3) + (1 + 2*753) + (428 + 2*934)},
		{"two nodes, no order past 9", "Node 0, zone Normal 1 2 3 4 5 6 7 8 9 10\nNode 1, zone Normal 0 0 0 0 0 0 0 0 0 5\n", 15},
		{"orders below 9 only", "Node 0, zone Normal 100 100 100\n", 0},
		{"empty", "", 0},
		{"not a count", "Node 0, zone Normal 0 0 0 0 0 0 0 0 0 x 4\n", 8},
	} {
		if got := freeHugeBlocks([]byte(c.info)); got != c.want {
			t.Errorf("%s: %d free 2 MB blocks, expected %d", c.name, got, c.want)
		}
	}
}

// TestReserveHeapWritesNothing checks that ReserveHeap maps what it is
// asked for and leaves it unwritten where the heap's top holds freed
// pages: one allocation of n bytes that starts on pages the heap used
// before is cleared whole by the runtime (a 41 MB replay grew to 566 MB,
// and took 0.9 s of CPU time more). The heap is laid out by what ran
// before, so the test runs in a process of its own (reserveChild).
func TestReserveHeapWritesNothing(t *testing.T) {
	inChild(t, "free", func(t *testing.T) {
		skipIfBounded(t)
		grown, mapped := reserveChild(t)
		if grown > 64<<20 {
			t.Errorf("ReserveHeap(%d MB) after 16 MB freed: resident memory grew by %d MB, expected at most 64", reserved>>20, grown>>20)
		}
		if mapped < reserved/2 { // less the 16 MB freed it may take first
			t.Errorf("ReserveHeap(%d MB): the heap's mappings grew by %d MB, expected at least %d", reserved>>20, mapped>>20, reserved>>21)
		}
	})
}

// TestReserveHeapUnderLimit checks that ReserveHeap maps nothing where
// the process's data is limited (ulimit -d, RLIMIT_DATA), which the
// mapping could pass: the runtime then fails with "out of memory".
func TestReserveHeapUnderLimit(t *testing.T) {
	inChild(t, "limited", func(t *testing.T) {
		var l unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_DATA, &l); err != nil {
			t.Skip(err)
		}
		l.Cur = min(l.Max, 1<<40) // finite, and far above what the test uses
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &l); err != nil {
			t.Skip(err)
		}
		if _, mapped := reserveChild(t); mapped > 64<<20 {
			t.Errorf("ReserveHeap(%d MB) under a limit of data: the heap's mappings grew by %d MB, expected none", reserved>>20, mapped>>20)
		}
	})
}

// skipIfBounded skips a test of what ReserveHeap maps where it maps
// nothing.
func skipIfBounded(t *testing.T) {
	if mappingsBounded() {
		t.Skip("this process's mappings are bounded (vm.overcommit_memory=2, ulimit -v or -d): ReserveHeap reserves nothing")
	}
}

// childEnv names the test a child process runs (inChild).
const childEnv = "KAIROS_PREFAULT_CHILD"

// inChild runs f, as test t's, in a new process of the test binary: the
// heap's layout and the package's once-read state are then f's alone.
func inChild(t *testing.T, name string, f func(t *testing.T)) {
	if os.Getenv(childEnv) == name {
		f(t)
		return
	}
	if !hugeAllowed() {
		t.Skip("this machine gives no transparent huge pages, has too few free 2 MB blocks, or GODEBUG=disablethp=1")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+name)
	out, err := cmd.CombinedOutput()
	switch {
	case err != nil:
		t.Errorf("in a process of its own: %v\n%s", err, out)
	case bytes.Contains(out, []byte("--- SKIP")):
		t.Skipf("in a process of its own:\n%s", out)
	}
}

// reserved is what the children reserve.
const reserved = 256 << 20

// reserveChild frees 16 MB it wrote at the heap's top, reserves and
// returns what the process's resident memory and the heap's mappings
// (HeapSys) grew by.
func reserveChild(t *testing.T) (grown, mapped int64) {
	freshHeapState(t)
	HugeHeap()
	dirty := make([]byte, 16<<20)
	for i := range dirty {
		dirty[i] = 1
	}
	runtime.KeepAlive(dirty)
	dirty = nil
	runtime.GC()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rss := residentBytes(t)
	ReserveHeap(reserved)
	grown = residentBytes(t) - rss
	runtime.ReadMemStats(&after)
	mapped = int64(after.HeapSys) - int64(before.HeapSys)
	t.Logf("ReserveHeap(%d MB): resident memory grew by %d MB, the heap's mappings by %d MB", reserved>>20, grown>>20, mapped>>20)
	return grown, mapped
}

// residentBytes returns the process's resident memory (/proc/self/statm).
func residentBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip(err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		t.Fatalf("/proc/self/statm: %q, expected at least 2 fields", b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatalf("/proc/self/statm: %v", err)
	}
	return pages * int64(os.Getpagesize())
}

// FuzzFreeHugeBlocks compares freeHugeBlocks, which the package writes
// without package bytes (text.go), with the same count written with it.
func FuzzFreeHugeBlocks(f *testing.F) {
	f.Add([]byte("Node 0, zone   Normal   9915   6218   3587   1402   1153    994   1914   1271    724    428    934\n"))
	f.Add([]byte("zone\nzone Normal 1 2 3 4 5 6 7 8 9 10 99999999999 x\n\n  zone\tDMA 0 0 0 0 0 0 0 0 0 1"))
	f.Add([]byte("Node 0, zonezone Normal 1 1 1 1 1 1 1 1 1 2147483647 2147483647 2147483647\n"))
	f.Fuzz(func(t *testing.T, info []byte) {
		want := 0
		for _, line := range bytes.Split(info, []byte("\n")) {
			_, counts, ok := bytes.Cut(line, []byte("zone"))
			if !ok {
				continue
			}
			fields := bytes.FieldsFunc(counts, asciiSpace)
			for order := 9; order+1 < len(fields); order++ {
				f := fields[order+1]
				n, err := strconv.Atoi(string(f))
				switch {
				case bytes.ContainsFunc(f, func(r rune) bool { return r < '0' || r > '9' }):
					n = 0 // a sign, or not a number
				case err != nil:
					n = 1 << 30 // all digits, past int
				}
				for i := 9; i < order && n < 1<<30; i++ {
					n *= 2 // blocks of order 9 and more in 2 MB blocks
				}
				want = min(want+min(n, 1<<30), 1<<30)
			}
		}
		if got := freeHugeBlocks(info); got != want {
			t.Errorf("%q: %d free 2 MB blocks, expected %d", info, got, want)
		}
	})
}
