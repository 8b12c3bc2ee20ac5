//go:build unix

package prefault

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// minorFaults returns the minor page faults so far of the calling
// thread on Linux (RUSAGE_THREAD: the caller locks its goroutine to its
// thread, so that the runtime's other threads, faulting as they collect
// or grow the heap, do not count), of the process elsewhere.
func minorFaults(t *testing.T) int64 {
	who := syscall.RUSAGE_SELF
	if runtime.GOOS == "linux" {
		who = 1 // RUSAGE_THREAD
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		t.Fatal(err)
	}
	return int64(ru.Minflt)
}

// TestPopulateMapsFreshPages writes fresh anonymous memory after Bytes:
// that takes about no fault, where the same writes without take one a
// page (the control), and the memory keeps what it held.
func TestPopulateMapsFreshPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("populates on Linux only")
	}
	runtime.LockOSThread() // minorFaults counts this thread's
	defer runtime.UnlockOSThread()
	const size = 256 << 10
	page := syscall.Getpagesize()
	pages := int64(size / page)
	fresh := func() []byte {
		b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Munmap(b) })
		b[0] = 42
		return b
	}
	write := func(b []byte) int64 {
		before := minorFaults(t)
		for i := 0; i < len(b); i += page {
			b[i] = byte(i/page) | 1
		}
		return minorFaults(t) - before
	}
	if f := write(fresh()); f < pages/2 {
		t.Fatalf("the control took %d faults for %d fresh pages: faults are not counted here", f, pages)
	}
	for name, populate := range map[string]func([]byte){
		"Bytes": Bytes,
		"Bytes of a slice whose capacity is the memory": func(b []byte) { Bytes(b[:0]) },
		"Slice of 8-byte elements": func(b []byte) {
			Slice(unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)[:0])
		},
	} {
		b := fresh()
		populate(b)
		if unsupported.Load() {
			t.Skip("this kernel has no MADV_POPULATE_WRITE (Linux 5.14)")
		}
		if b[0] != 42 || b[1] != 0 {
			t.Errorf("%s changed the memory: % x", name, b[:2])
		}
		if f := write(b); f > pages/16 {
			t.Errorf("%s: writing %d populated pages took %d faults", name, pages, f)
		}
	}
}
