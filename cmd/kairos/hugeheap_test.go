package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestGrowthReserve: a growing heap is mapped ahead by half of
// hugeHeapMax, or an eighth of the memory limit in force where that is
// less.
func TestGrowthReserve(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, c := range []struct {
		limit int64
		want  int
	}{
		{math.MaxInt64, hugeHeapMax / 2}, // no limit
		{12 << 30, hugeHeapMax / 2},      // half of 24 GB
		{2 << 30, 256 << 20},
		{512 << 20, 64 << 20},
	} {
		debug.SetMemoryLimit(c.limit)
		if got := growthReserve(); got != c.want {
			t.Errorf("memory limit of %d bytes: %d bytes reserved, want %d", c.limit, got, c.want)
		}
	}
}
