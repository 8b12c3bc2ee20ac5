package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestMachineMemory: on Linux, the memory kairos limits itself to half of
// is read from /proc/meminfo (or the cgroup's limit) and is at least what
// the runtime already took from the system.
func TestMachineMemory(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo: the limit is left to GOMEMLIMIT")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if got := machineMemory(); got < int64(ms.Sys) {
		t.Errorf("machineMemory() = %d bytes, less than the %d the runtime holds", got, ms.Sys)
	}
}

// TestMemoryWatch: the check calls over with the live heap once it
// passes three quarters of the memory, and not before; eachGC runs it
// after a collection, and liveHeap reads the heap that collection found.
func TestMemoryWatch(t *testing.T) {
	var live uint64
	var got []uint64
	check := memoryWatch(1000, func() uint64 { return live }, func(l uint64) { got = append(got, l) })
	for _, live = range []uint64{100, 700, 750, 751, 900} {
		check()
	}
	if fmt.Sprint(got) != "[751 900]" {
		t.Errorf("over called with %v, want [751 900]", got)
	}

	ran := make(chan uint64, 1)
	eachGC(func() {
		select {
		case ran <- liveHeap():
		default:
		}
	})
	runtime.GC()
	select {
	case l := <-ran:
		if l == 0 {
			t.Error("liveHeap reads 0 after a collection")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing ran after a collection")
	}
}

// TestGCPercent: the GOGC floorGC sets gives a heap goal of gcFloor
// below half of it, twice the live heap above.
func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		goal uint64
	}{
		{0, gcFloor}, {1 << 20, gcFloor}, {4 << 20, gcFloor}, {6 << 20, gcFloor},
		{gcFloor / 2, gcFloor}, {gcFloor, 2 * gcFloor}, {1 << 30, 2 << 30},
	} {
		p := uint64(gcPercent(c.live))
		goal := c.live + c.live*p/100
		if c.live < 4<<20 {
			goal = (4 << 20) * p / 100 // the runtime's goal with no live heap
		}
		if goal < c.goal-c.goal/100 || goal > c.goal+c.goal/100 {
			t.Errorf("live %d: GOGC %d gives a goal of %d, want %d", c.live, p, goal, c.goal)
		}
	}
}

// TestFloorRanks: a replay's ranks raise the floor by gcFloorRank each,
// never lower it, and leave a GOGC the user set alone.
func TestFloorRanks(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer func() {
		debug.SetGCPercent(old)
		floor.Store(0)
		gcManaged.Store(false)
	}()
	goal := func() uint64 { return (4 << 20) * uint64(gcPercent(0)) / 100 }
	floorRanks(4096) // GOGC set by the user: not managed
	if got := heapFloor(); got != gcFloor {
		t.Errorf("unmanaged: floor %d, want %d", got, gcFloor)
	}
	gcManaged.Store(true)
	for _, c := range []struct {
		ranks int
		want  uint64
	}{{16, gcFloor + 16*gcFloorRank}, {4096, gcFloor + 4096*gcFloorRank}, {64, gcFloor + 4096*gcFloorRank}} {
		floorRanks(c.ranks)
		if got := heapFloor(); got != c.want {
			t.Errorf("%d ranks: floor %d, want %d", c.ranks, got, c.want)
		}
		if g := goal(); g < c.want-c.want/100 || g > c.want+c.want/100 {
			t.Errorf("%d ranks: goal %d, want %d", c.ranks, g, c.want)
		}
	}
	if p := debug.SetGCPercent(100); p == 100 {
		t.Error("floorRanks left GOGC at 100")
	}
}
