package sim_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/sim"
)

// ompiActions writes collective coll's action for n ranks and messages of
// about size bytes (every rank's line is the same but for the rank).
var ompiActions = map[string]func(n int, size int64) string{
	"bcast":     func(_ int, s int64) string { return fmt.Sprintf("bcast %d", s) },
	"reduce":    func(_ int, s int64) string { return fmt.Sprintf("reduce %d 0 1", s) },
	"allreduce": func(_ int, s int64) string { return fmt.Sprintf("allreduce %d 0", s) },
	"alltoall":  func(_ int, s int64) string { return fmt.Sprintf("alltoall %d %d", s, s) },
	"alltoallv": func(n int, s int64) string {
		c := strings.TrimSpace(strings.Repeat(fmt.Sprintf("%d ", s), n))
		return fmt.Sprintf("alltoallv %d %s %d %s", s*int64(n), c, s*int64(n), c)
	},
	"barrier": func(int, int64) string { return "barrier" },
	"reduce_scatter": func(n int, s int64) string {
		c := (s + int64(n) - 1) / int64(n)
		return fmt.Sprintf("reducescatter %s 0", strings.TrimSpace(strings.Repeat(fmt.Sprintf("%d ", c), n)))
	},
	"allgather": func(_ int, s int64) string { return fmt.Sprintf("allgather %d %d", s, s) },
	"allgatherv": func(n int, s int64) string {
		return fmt.Sprintf("allgatherv %d %s", s, strings.TrimSpace(strings.Repeat(fmt.Sprintf("%d ", s), n)))
	},
	"gather":  func(_ int, s int64) string { return fmt.Sprintf("gather %d %d 1", s, s) },
	"scatter": func(_ int, s int64) string { return fmt.Sprintf("scatter %d %d 1", s, s) },
}

// TestOmpiSelectorMatchesSimGrid replays every collective under
// smpi/coll-selector:ompi with Kairos and with SimGrid 3.32, on 2, 3, 5,
// 11 and 16 ranks (Open MPI's rules for 2, fewer than 4, 8, 16 and 32
// members) and at every power of two from 1 byte to 1 MiB and 1.5 MiB:
// every threshold of those rules is a power of two, so each choice and
// each boundary between two choices is reached. The times must be equal,
// or both must fail (SimGrid aborts where Open MPI's rules pick its pair
// algorithm for a size that is not a power of two; Kairos refuses).
// Without KAIROS_LONG=1, every sixth size runs, on one of the rank
// counts, and 1 byte on two of them, in turn (barrier and alltoallv, which
// depend on the rank count alone, on all).
func TestOmpiSelectorMatchesSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	var sizes []int64
	for s := int64(1); s <= 1<<20; s *= 2 {
		sizes = append(sizes, s)
	}
	sizes = append(sizes, 3<<19)
	runs := 0
	for k, coll := range []string{"bcast", "reduce", "allreduce", "alltoall", "alltoallv", "barrier", "reduce_scatter", "allgather", "allgatherv", "gather", "scatter"} {
		t.Run(coll, func(t *testing.T) {
			byRanks := coll == "barrier" || coll == "alltoallv" // Open MPI decides on the size of the communicator alone
			for i, n := range []int{2, 3, 5, 11, 16} {
				for j, size := range sizes {
					if byRanks && size > 1 {
						break
					}
					if !testenv.Long() && !byRanks && (i+j+k)%30 != 0 && (size > 1 || (i+k)%5 != 0 && (i+k)%5 != 2) {
						continue // every sixth size, on one of the rank counts, in turn; 1 byte on two
					}
					act := ompiActions[coll](n, size)
					if differsFromSimGrid(t, dir, plat, hostfile, n, act, "smpi/coll-selector:ompi") {
						return // one failure per collective is enough to read
					}
					runs++
				}
			}
		})
	}
	// On 256 to 1,023 ranks and 16 to 32 KiB, Open MPI's rules pick
	// bcast ompi_split_bintree.
	t.Run("bcast on 256 ranks", func(t *testing.T) {
		differsFromSimGrid(t, dir, plat, hostfile, 256, "bcast 20000 3", "smpi/coll-selector:ompi")
		runs++
	})
	t.Logf("%d runs", runs)
}

// differsFromSimGrid replays act on n ranks with the settings cfgs
// ("key:value") with Kairos and SimGrid and reports whether the times
// differ (or only one of them failed).
func differsFromSimGrid(t *testing.T, dir, plat, hostfile string, n int, act string, cfgs ...string) bool {
	t.Helper()
	trace := writeStaggered(t, dir, n, 1000000, act)
	cfg := sim.DefaultConfig()
	var sgArgs []string
	for _, kv := range cfgs {
		k, v, _ := strings.Cut(kv, ":")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
		sgArgs = append(sgArgs, "--cfg="+kv)
	}
	tr, err := ti.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	res, kerr := sim.Run(tr, machineOn(t, plat, n), cfg, nil)
	sg, err := runSimGridCfg(dir, "desc", plat, hostfile, n, sgArgs...)
	switch {
	case kerr != nil && err != nil:
		t.Logf("%v %d ranks %q: refused (%v), and SimGrid fails", cfgs, n, act[:min(len(act), 40)], kerr)
		return false
	case kerr != nil:
		t.Errorf("%v %d ranks %q: %v (SimGrid: %.9f)", cfgs, n, act[:min(len(act), 40)], kerr, sg)
		return true
	case err != nil:
		t.Errorf("%v %d ranks %q: Kairos %.9f, SimGrid fails: %v", cfgs, n, act[:min(len(act), 40)], res.Time, err)
		return true
	}
	if math.Abs(res.Time-sg) > 1e-9 {
		t.Errorf("%v %d ranks %q: Kairos %.9f, SimGrid %.9f", cfgs, n, act[:min(len(act), 40)], res.Time, sg)
		return true
	}
	return false
}

// TestCompositesUseConfiguredAlgorithms checks the algorithms SimGrid
// builds from other collectives (allreduce redbcast and lr: colls::reduce,
// colls::bcast, colls::allreduce for lr's remainder; allgatherv GB), which
// run those with the algorithms configured for them, not the defaults.
func TestCompositesUseConfiguredAlgorithms(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	for _, c := range []struct {
		act  string
		cfgs []string
	}{
		{"allreduce 100000 0", []string{"smpi/allreduce:redbcast", "smpi/bcast:flattree", "smpi/reduce:binomial"}},
		{"allreduce 3 0", []string{"smpi/allreduce:lr", "smpi/bcast:flattree"}},       // fewer elements than ranks
		{"allreduce 17 0", []string{"smpi/allreduce:lr", "smpi/reduce:binomial"}},     // a remainder of 2
		{"allreduce 17 0", []string{"smpi/allreduce:lr", "smpi/coll-selector:ompi"}},  // the remainder by Open MPI's rules
		{"allreduce 8 0", []string{"smpi/coll-selector:ompi", "smpi/bcast:flattree"}}, // lr picked, then redbcast
		{"allgatherv 1000 %v", []string{"smpi/allgatherv:GB", "smpi/bcast:flattree"}},
		{"allgatherv 1000 %v", []string{"smpi/allgatherv:GB"}},
	} {
		for _, n := range []int{3, 5} {
			act := c.act
			if strings.Contains(act, "%") {
				act = fmt.Sprintf(act, strings.TrimSpace(strings.Repeat("1000 ", n)))
			}
			differsFromSimGrid(t, dir, plat, hostfile, n, act, c.cfgs...)
		}
	}
}

// TestNTSLMatchesSimGrid covers bcast NTSL's and NTSB's cases: one segment or less,
// whole segments, a remainder (broadcast with the bcast algorithm
// configured: NTSL again, flattree, or Open MPI's choice), roots other
// than 0, and 2 ranks (no inner rank).
func TestNTSLMatchesSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	var sw sweep
	for _, n := range []int{2, 5, 11} {
		for _, size := range []int{1, 8192, 8193, 16384, 100001} {
			for _, root := range []int{0, n - 1} {
				for _, algo := range []string{"NTSL", "NTSB"} {
					if sw.next() {
						differsFromSimGrid(t, dir, plat, hostfile, n, fmt.Sprintf("bcast %d %d", size, root), "smpi/bcast:"+algo)
					}
				}
			}
		}
	}
	differsFromSimGrid(t, dir, plat, hostfile, 5, "bcast 100001 2", "smpi/bcast:NTSL", "smpi/coll-selector:ompi")
	differsFromSimGrid(t, dir, plat, hostfile, 5, "bcast 20000 2", "smpi/coll-selector:ompi", "smpi/bcast:NTSL")
}

// TestSegmentedMatchSimGrid covers the segmented algorithms' segment
// sizes and counts (several segments, a short last one, one rank or
// several per host) and roots other than 0.
func TestSegmentedMatchSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	var sw sweep
	for _, n := range []int{2, 5, 11} {
		for _, size := range []int{300001, 1048576, 3000000} {
			if sw.next() {
				differsFromSimGrid(t, dir, plat, hostfile, n, fmt.Sprintf("bcast %d %d", size, n/2), "smpi/bcast:ompi_pipeline")
			}
			for _, algo := range []string{"ompi_chain", "ompi_pipeline", "ompi_binary", "ompi_binomial"} {
				if sw.next() {
					differsFromSimGrid(t, dir, plat, hostfile, n, fmt.Sprintf("reduce %d 0 %d", size, n/2), "smpi/reduce:"+algo)
				}
			}
		}
	}
	// ompi_ring_segmented: its ring of 1 MiB segments from n MiB on, lr
	// below.
	for _, n := range []int{2, 3, 5} {
		for _, size := range []int{1000, 300000, 3 << 20, 5<<20 + 12345, 13 << 20} {
			if sw.next() {
				differsFromSimGrid(t, dir, plat, hostfile, n, fmt.Sprintf("allreduce %d 0", size), "smpi/allreduce:ompi_ring_segmented")
			}
		}
	}
	// ompi_split_bintree: 1 KiB and 8 KiB segments, odd and even sizes,
	// halves of unequal segment counts; below two segments it is refused
	// and SimGrid crashes.
	for _, n := range []int{2, 3, 4, 6, 11} {
		for _, size := range []int{2047, 16385, 370727, 370728, 1000001} {
			if sw.next() {
				differsFromSimGrid(t, dir, plat, hostfile, n, fmt.Sprintf("bcast %d %d", size, n-1), "smpi/bcast:ompi_split_bintree")
			}
		}
	}
	// ompi_binomial's 1 KiB segments: many ranks for the message.
	differsFromSimGrid(t, dir, plat, hostfile, 16, "reduce 8000 0 3", "smpi/reduce:ompi_binomial")
}

// TestReduceScatterOmpiMatchesSimGrid runs Open MPI's reduce_scatter
// algorithms on uneven blocks, empty ones included, on sizes that are and
// are not powers of two.
func TestReduceScatterOmpiMatchesSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	var sw sweep
	for _, counts := range []string{"0 5000", "100 0 70000", "0 5000 10 0 200000", "1 2 3 4 5 6 7", "0 0 0 9 0 0 0 0",
		"300 0 7 1 1 1", "5 5 5 5 5 5 5 5 90000", "1000 0 1000 0 1000 0 1000 0 1000 0 1000 0", "9 8 7 6 5 4 3 2 1 0 1 2 3"} {
		n := len(strings.Fields(counts))
		for _, algo := range []string{"ompi_ring", "ompi_basic_recursivehalving", "ompi_butterfly"} {
			if sw.next() {
				differsFromSimGrid(t, dir, plat, hostfile, n, "reducescatter "+counts+" 0", "smpi/reduce_scatter:"+algo)
			}
		}
	}
}
