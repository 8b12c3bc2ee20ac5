package main

import "testing"

// TestGrowthReserve: a growing heap is mapped ahead by half of
// hugeHeapMax, or a sixteenth of the machine's memory where that is
// less, and by half of hugeHeapMax where the machine's memory is unknown.
func TestGrowthReserve(t *testing.T) {
	defer machineBytes.Store(machineBytes.Load())
	for _, c := range []struct {
		machine int64
		want    int
	}{
		{0, hugeHeapMax / 2},
		{24 << 30, hugeHeapMax / 2},
		{4 << 30, 256 << 20},
		{1 << 30, 64 << 20},
	} {
		machineBytes.Store(c.machine)
		if got := growthReserve(); got != c.want {
			t.Errorf("machine of %d bytes: %d bytes reserved, want %d", c.machine, got, c.want)
		}
	}
}
