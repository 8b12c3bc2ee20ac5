//go:build linux && (amd64 || arm64)

package prefault

import (
	"bytes"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
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
)

// heapProbe is an object on the heap, whose address says where the heap
// is.
var heapProbe = new([64]byte)

// unsupportedCollapse is set once the kernel refused MADV_COLLAPSE
// (before Linux 6.1).
var unsupportedCollapse atomic.Bool

// adviseHeap gives the heap's mapped arenas MADV_HUGEPAGE and, if
// collapse, remaps the 2 MB regions already written around heapProbe as
// huge pages (MADV_COLLAPSE). Addresses stay integers: a pointer to heap
// memory no object holds would stop the collector.
func adviseHeap(collapse bool) {
	if unix.Getpagesize() != 4096 {
		return
	}
	probe := uintptr(unsafe.Pointer(heapProbe))
	base, end := heapWindowOf()
	if end <= base {
		return
	}
	// The window holds unmapped holes, which madvise skips (and reports
	// with ENOMEM, once it has advised the rest).
	madvise(base, end-base, unix.MADV_HUGEPAGE)
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
		_, _, errno := unix.Syscall(unix.SYS_MINCORE, r, hugeBytes, uintptr(unsafe.Pointer(&resident[0])))
		if errno != 0 || !anyResident(resident[:]) {
			continue // not mapped, or nothing written there yet
		}
		if madvise(r, hugeBytes, unix.MADV_COLLAPSE) == unix.EINVAL {
			unsupportedCollapse.Store(true)
			return
		}
	}
}

// unadviseHeap gives the heap's arenas MADV_NOHUGEPAGE.
func unadviseHeap() {
	if base, end := heapWindowOf(); end > base {
		madvise(base, end-base, unix.MADV_NOHUGEPAGE)
	}
}

// heapWindowOf returns the addresses from the first arena to the end of
// the window the heap is looked for in.
func heapWindowOf() (base, end uintptr) {
	base = uintptr(unsafe.Pointer(heapProbe)) &^ (arenaBytes - 1)
	return base, min(base+heapWindow, userTop)
}

// madvise is madvise(2) of n bytes at address p.
func madvise(p, n uintptr, advice int) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, p, n, uintptr(advice))
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

// thpNever reports whether the machine gives no transparent huge pages:
// its setting is "never", or the kernel has none. (Three system calls
// into a buffer on the stack: os.ReadFile took five, and the file's
// finalizer.)
func thpNever() bool {
	fd, err := unix.Open("/sys/kernel/mm/transparent_hugepage/enabled", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	var b [128]byte
	n, err := unix.Read(fd, b[:])
	return err != nil || n <= 0 || bytes.Contains(b[:n], []byte("[never]"))
}
