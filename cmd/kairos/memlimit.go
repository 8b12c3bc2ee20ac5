package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"

	"kairos/internal/fileio"
)

// limitMemory sets the Go runtime's soft memory limit to half the
// machine's memory (or of the cgroup's limit, or of what the process's
// limits of address space and data leave it, if lower), unless
// GOMEMLIMIT sets one: the collector then runs more often as the heap
// nears it, where by default it lets the heap grow to twice what is live.
// A verb that holds a long run in memory (patterns of NetPIPE's 60.6 M
// events peaked at 15.2 GB on a 24 GB machine) stays nearer what it
// needs instead of being killed; a small run never reaches the limit and
// is not slowed. A run whose live heap passes three quarters of the
// machine's memory stops with an error (memoryWatch).
func limitMemory() {
	total := machineMemory()
	if total <= 0 {
		return
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(total / 2)
	}
	eachGC(memoryWatch(total, liveHeap, func(live uint64) {
		fmt.Fprintf(os.Stderr, "kairos: out of memory: %.1f GB in use of the %.1f GB this run may use (the machine's memory, its cgroup's limit or ulimit -v and -d); "+
			"stopped before the run is refused memory or killed (the input is too large for this verb on this machine)\n",
			float64(live)/1e9, float64(total)/1e9)
		fileio.RemovePending()
		os.Exit(exitFailed)
	}))
}

// memoryWatch returns the check to run after each collection, which
// calls over once the live heap (live) passes three quarters of total,
// the memory the process may use: past it, the kernel would soon kill
// the run without a word. (reduce of Ray's 50 M-event OTF2 archive was
// killed at 24.4 GB on a 24 GB machine, its live heap at 21 GB; it
// passed 18 GB a minute before.) The live heap is only known at the end
// of a collection, so that checking there misses nothing, and a run
// that never collects pays nothing (a goroutine that read it every
// second woke a thread at every run's start).
func memoryWatch(total int64, live func() uint64, over func(live uint64)) func() {
	limit := uint64(total) / 4 * 3
	return func() {
		if l := live(); l > limit {
			over(l)
		}
	}
}

// eachGC runs f after each garbage collection, on the runtime's
// finalizer goroutine: an object dropped as soon as it is made has its
// finalizer run once the next collection ends, and that finalizer makes
// the next such object.
func eachGC(f func()) {
	type sentinel struct{ _ [16]byte } // not tiny: a tiny object's finalizer may never run
	var rearm func(*sentinel)
	rearm = func(*sentinel) {
		f()
		runtime.SetFinalizer(new(sentinel), rearm)
	}
	runtime.SetFinalizer(new(sentinel), rearm)
}

// gcFloor is the heap below which the collector does not run: Go's is 4
// MB (at GOGC=100), which a replay of 64 ranks passes in its first
// milliseconds, so that its first collection, and the write barriers on
// while it marks, ran through a fifth of a 20 ms analytic replay. Small
// runs stay far below SimGrid's memory (34 MB for 4 ranks) with it.
const gcFloor = 16 << 20

// gcFloorRank is what floorRanks adds to gcFloor for each rank of a
// replay: the state a replay builds for its ranks (readers, hosts, links,
// requests) is live to the end, and a collection that marks it only adds
// work (three collections took a fifth of the analytic replay of 4,096
// ranks). SimGrid 3.32 takes about 55 KB more a rank (36.5 MB at 64
// ranks, 257 MB at 4,096), so that the floor stays below its memory.
const gcFloorRank = 16 << 10

// floor is the heap goal's floor floorRanks set, 0 for gcFloor.
var floor atomic.Uint64

// gcManaged is set when floorGC manages the collector (GOGC unset).
var gcManaged atomic.Bool

// floorGC keeps the collector's heap goal at the floor or more, twice the
// live heap (GOGC=100) above it, unless GOGC is set: it sets the GOGC
// that gives that goal at the start and again after each collection.
// Called again (a benchmark that runs as the command), it does nothing.
func floorGC() {
	if os.Getenv("GOGC") != "" || gcManaged.Swap(true) {
		return
	}
	debug.SetGCPercent(gcPercent(0))
	eachGC(func() { debug.SetGCPercent(gcPercent(liveHeap())) })
}

// floorRanks raises the floor to gcFloor plus gcFloorRank for each of a
// replay's ranks, once the trace is open and its ranks known, and from
// reserveRanks on maps the heap up to that floor in huge pages.
func floorRanks(ranks int) {
	f := uint64(gcFloor) + uint64(max(ranks, 0))*gcFloorRank
	if !gcManaged.Load() || f <= heapFloor() {
		return
	}
	floor.Store(f)
	debug.SetGCPercent(gcPercent(liveHeap()))
	reserveForRanks(ranks, f)
}

// heapFloor returns the heap goal's floor in force.
func heapFloor() uint64 { return max(floor.Load(), gcFloor) }

// gcPercent returns the GOGC whose heap goal, after a collection that
// found live bytes, is the floor or twice live, whichever is larger. (The
// goal is live + live x GOGC/100, and 4 MB x GOGC/100 at the start.)
func gcPercent(live uint64) int {
	const minHeap = 4 << 20 // the runtime's goal at GOGC=100 and no live heap
	f := heapFloor()
	if live < minHeap {
		return int(100 * f / minHeap)
	}
	if live >= f/2 {
		return 100
	}
	return int(100 * (f - live) / live)
}

// liveHeap returns the heap the last garbage collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// machineMemory returns the bytes of memory this process may use: the
// machine's (MemTotal of /proc/meminfo), its cgroup's limit (memory.max)
// or what its limits of address space and data leave it (spaceLeft),
// whichever is lowest; 0 where none says.
func machineMemory() int64 {
	total := procSizes("/proc/meminfo", "MemTotal:")[0]
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	if n := spaceLeft(); n > 0 && (total == 0 || n < total) {
		total = n
	}
	return total
}

// procSizes returns the sizes in bytes of the fields named of a /proc
// file of "Name: value kB" lines (meminfo, self/status); 0 for one not
// found, or where the file cannot be read.
func procSizes(path string, names ...string) []int64 {
	v := make([]int64, len(names))
	f, err := os.Open(path)
	if err != nil {
		return v
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for i, name := range names {
			if rest, ok := strings.CutPrefix(sc.Text(), name); ok {
				n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err == nil {
					v[i] = n << 10
				}
			}
		}
	}
	return v
}
