//go:build linux && (amd64 || arm64)

package prefault

import (
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

const (
	// arenaBytes is the size and alignment of the runtime's heap arenas
	// on 64-bit Linux (heapArenaBytes).
	arenaBytes = 64 << 20
	// hugeBytes is a huge page's size where pages are 4 KB (amd64, and
	// arm64 as most distributions build it).
	hugeBytes = 2 << 20
	// heapWindow is how far above its first arena the heap is looked
	// for: the runtime maps its arenas upwards from there.
	heapWindow = 1 << 40
	// userTop bounds the window: the end of a 47-bit address space.
	userTop = 1 << 47
	// madvCollapse is MADV_COLLAPSE (Linux 6.1), which package syscall
	// does not name.
	madvCollapse = 25
)

// heapProbe is an object on the heap, whose address says where the heap
// is: made by a function, as a package variable's new(T) might one day
// be laid out in the binary's data instead, and kept.
var heapProbe = newProbe()

//go:noinline
func newProbe() *[64]byte { return new([64]byte) }

// unsupportedCollapse is set once the kernel refused MADV_COLLAPSE
// (before Linux 6.1).
var unsupportedCollapse atomic.Bool

// adviseHeap gives the heap's mapped arenas MADV_HUGEPAGE and, if
// collapse, remaps the 2 MB regions already written around heapProbe as
// huge pages (MADV_COLLAPSE). Addresses stay integers: a pointer to heap
// memory no object holds would stop the collector.
func adviseHeap(collapse bool) {
	if syscall.Getpagesize() != 4096 {
		return
	}
	probe := uintptr(unsafe.Pointer(heapProbe))
	base, end := heapWindowOf()
	if end <= base {
		return
	}
	// The window holds unmapped holes, which madvise skips (and reports
	// with ENOMEM, once it has advised the rest).
	madvise(base, end-base, syscall.MADV_HUGEPAGE)
	if !collapse || unsupportedCollapse.Load() {
		return
	}
	// What the runtime wrote before main lies in its first 4 MB chunk,
	// which holds heapProbe, and can pass into the next one: the
	// regions of the two are looked at (each a system call, which costs
	// here what a few faults do).
	var resident [hugeBytes / 4096]byte
	first := probe &^ (chunkBytes - 1)
	for r := first; r < first+2*chunkBytes; r += hugeBytes {
		_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, r, hugeBytes, uintptr(unsafe.Pointer(&resident[0])))
		if errno != 0 || !anyResident(resident[:]) {
			continue // not mapped, or nothing written there yet
		}
		if madvise(r, hugeBytes, madvCollapse) == syscall.EINVAL {
			unsupportedCollapse.Store(true)
			return
		}
	}
}

// unadviseHeap gives the heap's arenas MADV_NOHUGEPAGE.
func unadviseHeap() {
	if base, end := heapWindowOf(); end > base {
		madvise(base, end-base, syscall.MADV_NOHUGEPAGE)
	}
}

// heapWindowOf returns the addresses from the first arena to the end of
// the window the heap is looked for in.
func heapWindowOf() (base, end uintptr) {
	base = uintptr(unsafe.Pointer(heapProbe)) &^ (arenaBytes - 1)
	return base, min(base+heapWindow, userTop)
}

// madvise is madvise(2) of n bytes at address p.
func madvise(p, n uintptr, advice int) syscall.Errno {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, p, n, uintptr(advice))
	return errno
}

// anyResident reports whether mincore's vector marks a page resident.
func anyResident(vec []byte) bool {
	for _, b := range vec {
		if b&1 != 0 {
			return true
		}
	}
	return false
}

// hugeFreeMin is the number of free 2 MB blocks below which no huge page
// is asked for: as many as the heap takes before it gives them up
// (1 GB; cmd/kairos's hugeHeapMax).
const hugeFreeMin = 512

// fewHugeFree reports whether the kernel has fewer than hugeFreeMin free
// blocks of 2 MB or more (/proc/buddyinfo, every zone): a fault in an
// advised region would then compact memory before it returns, under the
// "madvise" defrag setting of most distributions, a stall the Go
// runtime's developers met when the runtime advised its heap
// (golang/go#61718).
func fewHugeFree() bool {
	var b [4096]byte
	n, ok := readSmall("/proc/buddyinfo", b[:])
	return !ok || freeHugeBlocks(b[:n]) < hugeFreeMin
}

// freeHugeBlocks returns the free 2 MB blocks that /proc/buddyinfo's
// text lists: each zone's counts of free blocks of order 0, 1, ... (4 KB
// times 2^order), those of order 9 and more counted in 2 MB blocks.
func freeHugeBlocks(info []byte) int {
	total := 0
	for rest := string(info); rest != ""; {
		var line string
		line, rest, _ = cut(rest, "\n")
		_, counts, ok := cut(line, "zone")
		if !ok {
			continue
		}
		_, counts = nextField(counts) // the zone's name
		for order := 0; ; order++ {
			var f string
			if f, counts = nextField(counts); f == "" {
				break
			}
			if order < 9 {
				continue
			}
			n := 0
			for _, c := range []byte(f) {
				if c < '0' || c > '9' {
					n = 0
					break
				}
				n = min(n*10+int(c-'0'), 1<<30)
			}
			total = min(total+min(n<<min(order-9, 31), 1<<30), 1<<30)
		}
	}
	return total
}

// readSmall reads the start of a small file into b, in three system
// calls (os.ReadFile takes five, and the file's finalizer).
func readSmall(path string, b []byte) (int, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer syscall.Close(fd)
	n, err := syscall.Read(fd, b)
	return n, err == nil && n > 0
}

// thpNever reports whether the machine gives no transparent huge pages:
// its setting is "never", or the kernel has none.
func thpNever() bool {
	var b [128]byte
	n, ok := readSmall("/sys/kernel/mm/transparent_hugepage/enabled", b[:])
	_, _, never := cut(string(b[:n]), "[never]")
	return !ok || never
}

// mappingsBounded reports whether the kernel may refuse the process a
// mapping that the heap's own growth would not have asked for: where it
// counts mappings against a commit limit (/proc/sys/vm/overcommit_memory
// is 2), or the process has a finite limit of address space or data
// (RLIMIT_AS, RLIMIT_DATA, which counts the heap's private mappings;
// batch systems and login nodes set them with ulimit -v and -d). A
// mapping refused is the runtime's fatal "out of memory": `report` of
// the noisy LU on 64 ranks, which ran under ulimit -v of 1.5 to 1.7 GB
// without a reservation, failed there with one. Read once.
var mappingsBounded = sync.OnceValue(func() bool {
	var b [8]byte
	if _, ok := readSmall("/proc/sys/vm/overcommit_memory", b[:]); ok && b[0] == '2' {
		return true
	}
	for _, res := range []int{syscall.RLIMIT_AS, syscall.RLIMIT_DATA} {
		var l syscall.Rlimit
		if err := syscall.Getrlimit(res, &l); err != nil || l.Cur != ^uint64(0) { // RLIM_INFINITY
			return true
		}
	}
	return false
})
