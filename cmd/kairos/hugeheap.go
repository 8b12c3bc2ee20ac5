package main

import (
	"runtime/debug"
	"sync/atomic"

	"kairos/internal/prefault"
)

// A verb's heap is kept in transparent huge pages (prefault.HugeHeap,
// called as main starts): advised again after each collection, mapped
// ahead where it is about to grow (prefault.ReserveHeap), given up past
// hugeHeapMax.

// hugeHeapMax is the live heap past which a verb's heap gives up its
// huge pages (prefault.DropHugeHeap): a heap that large is returned to
// the kernel in pieces as it shrinks, which khugepaged would take back,
// and its faults are a small part of its time (reduce of HPCC's 64
// ranks, 115 MB: 5%).
const hugeHeapMax = 1 << 30

// growingLive is the live heap from which a collection's verb is taken
// to be building a large state, and its heap mapped ahead: a verb that
// only churns (check's collections find 3 to 4 MB live) would pay the
// mapping's collection and 2 MB pages for nothing (check of the noisy
// LU on 64 ranks took 8% more CPU time with it), where one that builds
// (reduce's and patterns' first collections find 11 to 21 MB) gains.
const growingLive = 8 << 20

// reserveRanks is the number of ranks from which a replay's heap, up to
// its floor, is mapped in huge pages before the replay builds its state,
// which it does under the floor, without a collection. On the noisy
// 32x32 stencil (25 iterations) the exact replay took 8.7% less CPU
// time and the analytic one 17% less; on the 64x64 one 7 to 11% and 27%
// less, its state's 57 of 71 MB in huge pages rather than 4 of 69. A
// 16x16 one took 2% less, and a 64-rank analytic replay 8 ms more (the
// collection, and 2 MB pages zeroed for a small state).
const reserveRanks = 1024

// reserved is set once the heap has been mapped ahead, which is done
// once: a heap that outgrows the reservation grows past it in small
// pages, as before (HPCC's patterns, 480 MB, stays within it).
var reserved atomic.Bool

// hugeAfterGC runs after each collection of a verb: it advises the
// mappings the heap grew into, maps it ahead the first time a
// collection finds a state being built (growingLive), and gives the huge
// pages up past hugeHeapMax.
func hugeAfterGC() {
	live := liveHeap()
	if live >= hugeHeapMax {
		prefault.DropHugeHeap()
		return
	}
	prefault.AdviseHeap()
	if live >= growingLive && !reserved.Swap(true) {
		// On its own goroutine: the collection it makes would hold up
		// the finalizers that run this.
		go prefault.ReserveHeap(growthReserve())
	}
}

// growthReserve is how much heap a growing verb maps ahead: half of
// hugeHeapMax, or an eighth of the memory limit in force if less (by
// default half the machine's memory, limitMemory; or GOMEMLIMIT), so
// that the free heap it leaves does not press on the limit.
func growthReserve() int {
	return int(min(hugeHeapMax/2, debug.SetMemoryLimit(-1)/8))
}

// reserveForRanks maps a replay's heap up to its floor f ahead of its
// state, from reserveRanks ranks on, by growthReserve at most.
func reserveForRanks(ranks int, f uint64) {
	if ranks >= reserveRanks && !reserved.Swap(true) {
		prefault.ReserveHeap(int(min(f, uint64(growthReserve()))))
	}
}
