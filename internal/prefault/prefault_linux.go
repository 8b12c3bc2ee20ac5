package prefault

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14), which package
// syscall does not name.
const madvPopulateWrite = 23

// populate maps the whole pages of the n bytes at p.
func populate(p unsafe.Pointer, n uintptr) {
	if unsupported.Load() {
		return
	}
	page := uintptr(syscall.Getpagesize())
	at := uintptr(p)
	lo, hi := (at+page-1)&^(page-1), (at+n)&^(page-1)
	if hi <= lo {
		return
	}
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Add(p, lo-at)), hi-lo, madvPopulateWrite)
	if errno == syscall.EINVAL {
		unsupported.Store(true)
	}
}
