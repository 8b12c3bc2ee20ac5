// Package prefault maps fresh memory in bulk before it is written.
//
// The first write to a page of fresh memory traps into the kernel, which
// maps a zeroed page there. On the virtual machines this project runs on,
// that trap costs several microseconds a 4 KB page, more than
// decompressing or parsing what the page will hold. One
// madvise(MADV_POPULATE_WRITE) maps a buffer's pages in a single call
// (Linux 5.14 and later; a no-op elsewhere): a 64-rank analytic replay of
// a noisy LU, 64 ms, took 608 of its 1,409 faults in the buffers its
// chunks are decompressed into, and 3.6% less CPU time with them
// populated.
// Where faults are cheap it costs what they would.
//
// Only buffers that are about to be written whole are worth it: a
// populated page that is never written is memory taken for nothing.
//
// A populated page still costs a trap at its first write on those
// machines (populating and writing take about 4.8 µs a page, against 9.5
// for a fault). A 2 MB huge page costs what 10 to 20 small ones do, so
// that HugeHeap, which asks for the Go heap in huge pages, spares most
// of the rest where the heap grows while it is advised.
package prefault

import (
	"sync/atomic"
	"unsafe"
)

// minBytes is the smallest buffer populated: below, the call costs what
// the few faults it spares would.
const minBytes = 16 << 10

// unsupported is set once the kernel refused the call (before Linux
// 5.14), which is then not made again.
var unsupported atomic.Bool

// Bytes maps the pages that b's capacity covers entirely, if they are not
// mapped yet. b's contents do not change.
func Bytes(b []byte) { Slice(b) }

// Slice is Bytes for a slice of any element type: the pages its
// capacity covers.
func Slice[T any](s []T) {
	var zero T
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n >= minBytes {
		p := unsafe.Pointer(unsafe.SliceData(s))
		keepAdvised(uintptr(p) + n)
		populate(p, n)
	}
}
