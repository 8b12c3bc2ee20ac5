package main

import (
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
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

// TestHugeHeapFirst checks that the heap is advised (package atstart)
// before the packages whose initialization writes most of a short run's
// heap are initialized: the order in which this test binary, which
// imports what kairos does, initializes its packages, as
// GODEBUG=inittrace=1 prints it. An import that package prefault gains
// (package strings, whose tables are unicode's) puts it after them.
func TestHugeHeapFirst(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	at := map[string]int{}
	for i, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "init" {
			at[f[1]] = i
		}
	}
	first, ok := at["kairos/internal/prefault/atstart"]
	if !ok {
		t.Fatalf("GODEBUG=inittrace=1 lists no initialization of package atstart:\n%s", out)
	}
	for _, p := range []string{"unicode", "encoding/xml", "html/template", "kairos/platform", "kairos/sim"} {
		if i, ok := at[p]; !ok || i < first {
			t.Errorf("package %s initialized before atstart asked for huge pages (or not listed)", p)
		}
	}
}
