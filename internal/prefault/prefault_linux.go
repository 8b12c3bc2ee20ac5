package prefault

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// populate maps the whole pages of the n bytes at p.
func populate(p unsafe.Pointer, n uintptr) {
	if unsupported.Load() {
		return
	}
	page := uintptr(unix.Getpagesize())
	at := uintptr(p)
	lo, hi := (at+page-1)&^(page-1), (at+n)&^(page-1)
	if hi <= lo {
		return
	}
	err := unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, lo-at)), hi-lo), unix.MADV_POPULATE_WRITE)
	if err == unix.EINVAL {
		unsupported.Store(true)
	}
}
