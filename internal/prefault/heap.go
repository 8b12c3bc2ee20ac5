package prefault

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
)

// HugeHeap asks the kernel to back the Go heap with transparent huge
// pages, and remaps the 2 MB regions of it the runtime has already
// written as huge pages, so that the heap's growth faults once a 2 MB
// page where it faulted once a 4 KB page. The runtime leaves the heap to
// the machine's setting, and most distributions' setting, "madvise",
// gives huge pages only where a program asks for them.
//
// On the virtual machines this project runs on, a first write to a 4 KB
// page costs about 9.5 µs of wall time (BenchmarkFirstWrite), 4 to 8 of
// them the process's CPU time, and a 2 MB page what 10 to 20 small ones
// do: a 20 ms analytic replay of 64 ranks, which took 700 to 850
// faults, takes 3 to 11% less CPU time. Remapping the few hundred
// kilobytes the packages' initialization wrote costs about 1 ms as main
// starts; the CLI asks earlier, as its packages are initialized (package
// atstart), before most of those pages are written, which takes 1.3 to
// 2 ms off every command, --version included, and again as a verb
// starts, for what the initialization added.
//
// A large heap gives them up (DropHugeHeap): the collector returns
// the memory it freed to the kernel a few pages at a time, and the
// kernel's khugepaged remaps an advised region whole as soon as one of
// its pages is there, which would take that memory back (why the Go
// runtime stopped asking for huge pages).
//
// Nothing is done where the machine's setting is "never" or
// GODEBUG=disablethp=1 (the runtime's own switch for its heap), on
// kernels without the calls (before Linux 6.1 for the remapping), or
// where free memory is too fragmented to give huge pages without
// compacting it first (fewHugeFree), which would stall the faults.
func HugeHeap() {
	if hugeAllowed() {
		adviseHeap(true)
		heapTop.Store(1) // the next buffer Bytes populates advises again
	}
}

// AdviseHeap asks for huge pages for the parts of the heap the runtime
// mapped since HugeHeap: it maps the heap 4 MB at a time as it grows,
// each new mapping without the advice. It is cheap (one system call),
// to be called as the heap grows: after each garbage collection, and
// (Bytes) where a buffer to be written lies above the heap advised.
func AdviseHeap() {
	if hugeAllowed() && !dropped.Load() {
		adviseHeap(false)
	}
}

// ReserveHeap maps n bytes more of heap with the huge-page advice, ahead
// of the heap's growth, so that what it grows into is made in huge
// pages: the runtime maps its heap 4 MB at a time as it grows, each new
// mapping without the advice, and AdviseHeap after a collection only
// reaches the 2 MB regions not written yet. It allocates n bytes, 4 MB
// at a time (where the heap has no free run, new mappings, which the
// runtime does not clear), advises the heap and collects, so that the bytes
// return to the heap free, in advised mappings. What was not used stays
// untouched: it costs address space, not memory. The collection costs
// what marking the live heap does, and a 2 MB page what zeroing it
// does: for a heap that grows (cmd/kairos's hugeAfterGC and
// reserveRanks), not for a small one (a 64-rank analytic replay took
// 8 ms more with it). Nothing is done before HugeHeap or after
// DropHugeHeap, nor where the kernel may refuse the mapping, which would
// take the runtime with it (mappingsBounded: a commit limit, or a limit
// of the process's address space or data).
func ReserveHeap(n int) {
	if n <= 0 || heapTop.Load() == 0 || !hugeAllowed() || dropped.Load() || mappingsBounded() {
		return
	}
	// In pieces: the runtime clears an allocation whole where it starts
	// on pages the heap used before (the free pages at its top), which
	// for one of n bytes wrote them all (a replay of 41 MB grew to
	// 566 MB). A piece that starts there is cleared alone.
	pieces := make([][]byte, 0, (n+chunkBytes-1)/chunkBytes)
	for left := n; left > 0; left -= chunkBytes {
		pieces = append(pieces, make([]byte, min(left, chunkBytes)))
	}
	AdviseHeap()
	runtime.KeepAlive(pieces)
	runtime.GC()
}

// DropHugeHeap withdraws the advice from the whole heap
// (MADV_NOHUGEPAGE), for good: the huge pages it has keep, and none is
// made again, by a fault or by khugepaged.
func DropHugeHeap() {
	if hugeAllowed() && !dropped.Swap(true) {
		heapTop.Store(0)
		unadviseHeap()
	}
}

// dropped is set once DropHugeHeap has run.
var dropped atomic.Bool

// heapTop is, once HugeHeap has run, the end of the highest 4 MB chunk
// of the heap that Bytes saw advised; 0 before, and where it was not
// called.
var heapTop atomic.Uintptr

// chunkBytes is the step by which the runtime maps its heap
// (pallocChunkBytes).
const chunkBytes = 4 << 20

// keepAdvised advises the heap again if a buffer that ends at end lies
// above the chunks advised so far: the heap grows upwards, and a chunk
// mapped since the last advice would fault 4 KB at a time.
func keepAdvised(end uintptr) {
	top := heapTop.Load()
	if top == 0 || end <= top {
		return
	}
	heapTop.CompareAndSwap(top, (end+chunkBytes-1)&^(chunkBytes-1))
	AdviseHeap()
}

// allowed is hugeAllowed's answer.
var allowed struct {
	once sync.Once
	ok   bool
}

// hugeAllowed reports whether huge pages may be asked for (GODEBUG, the
// machine's setting and its free memory in 2 MB blocks, read once).
func hugeAllowed() bool {
	allowed.once.Do(func() {
		godebug, _ := syscall.Getenv("GODEBUG")
		allowed.ok = !disabledByGODEBUG(godebug) && !thpNever() && !fewHugeFree()
	})
	return allowed.ok
}

// disabledByGODEBUG reports whether GODEBUG turns the heap's huge pages
// off: disablethp=1 (its last setting counts, as in the runtime).
func disabledByGODEBUG(v string) bool {
	off := false
	for v != "" {
		var kv string
		kv, v, _ = cut(v, ",")
		if key, val, ok := cut(trimSpace(kv), "="); ok && key == "disablethp" {
			off = val == "1"
		}
	}
	return off
}
