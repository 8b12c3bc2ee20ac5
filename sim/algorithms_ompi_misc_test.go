package sim_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/sim"
)

// TestAllgatherNTSLRNBMatchesSimGrid runs allgather NTSLR_NB on the
// branches the common table does not reach: messages of 0 and 1 byte and
// at SMPI's detached-send threshold (64 KiB), blocks that differ in
// bytes (SimGrid falls back to allgather__default; larger sends than
// receives are refused, and SimGrid aborts) or only in counts, and sizes
// of 2, 3 and 16 ranks.
func TestAllgatherNTSLRNBMatchesSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	var tab strings.Builder
	acts := []string{"allgather 0 0", "allgather 1 1", "allgather 65536 65536", "allgather 1000 2000",
		"allgather 1000 4000 1 6", "allgather 2000 1000"}
	runs := algorithmMatches(t, dir, plat, hostfile, "allgather", "NTSLR_NB", acts, &tab)
	for _, n := range []int{2, 3, 16} {
		for _, act := range []string{"allgather 8191 8191", "allgather 100000 100000"} {
			differsFromSimGrid(t, dir, plat, hostfile, n, act, "smpi/allgather:NTSLR_NB")
			runs++
		}
	}
	t.Logf("%d runs\n%s", runs, tab.String())
}

// TestAllgatherTruncationRefused checks that Kairos refuses the
// allgathers SimGrid 3.32 aborts on with MPI_ERR_TRUNCATE (NTSLR_NB and
// the default, more bytes sent than received per block), and replays
// them on one rank, where SimGrid only copies.
func TestAllgatherTruncationRefused(t *testing.T) {
	dir := t.TempDir()
	plat := clusterXML(t, dir, 4, "")
	for _, c := range []struct {
		algo   string
		n      int
		act    string
		refuse bool
	}{
		{"NTSLR_NB", 4, "allgather 2000 1000", true},
		{"default", 3, "allgather 1000 500 0 6", true},
		{"NTSLR_NB", 1, "allgather 2000 1000", false},
		{"NTSLR_NB", 4, "allgather 1000 2000", false},
		{"ring", 4, "allgather 1000 1000", false},
	} {
		var b strings.Builder
		for r := 0; r < c.n; r++ {
			fmt.Fprintf(&b, "%d init\n%d %s\n", r, r, c.act)
		}
		path := filepath.Join(dir, "t.ti")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := ti.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg := sim.DefaultConfig()
		if err := cfg.Set("smpi/allgather", c.algo); err != nil {
			t.Fatal(err)
		}
		_, err = sim.Run(tr, machineOn(t, plat, c.n), cfg, nil)
		if refused := err != nil && strings.Contains(err.Error(), "MPI_ERR_TRUNCATE"); refused != c.refuse {
			t.Errorf("%s on %d ranks %q: refused %v, want %v (%v)", c.algo, c.n, c.act, refused, c.refuse, err)
		}
	}
}

// TestOmpiLinearMatchesSimGrid runs Open MPI's linear gather, scatter and
// alltoallv and the gather-then-broadcast allgatherv on what the common
// table leaves out: a gather smaller than linear_sync's first segment,
// empty blocks, another datatype and uneven or empty count vectors.
func TestOmpiLinearMatchesSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	var tab strings.Builder
	runs := 0
	for _, algo := range []string{"ompi_basic_linear", "ompi_linear_sync"} {
		runs += algorithmMatches(t, dir, plat, hostfile, "gather", algo, []string{"gather 1000 1000 2", "gather 0 0 1", "gather 11521 11521 4 0 0"}, &tab)
	}
	for _, algo := range []string{"ompi_basic_linear", "ompi_linear_nb"} {
		runs += algorithmMatches(t, dir, plat, hostfile, "scatter", algo, []string{"scatter 0 0 1", "scatter 20000 20000 2 1 1"}, &tab)
	}
	uneven := []string{"0 70000 5 0", "1 0 3 100000 0 9 2"}
	for _, counts := range uneven {
		n := len(strings.Fields(counts))
		big := strings.TrimSpace(strings.Repeat("100000 ", n))
		differsFromSimGrid(t, dir, plat, hostfile, n, "alltoallv 100000 "+counts+" 100000 "+big, "smpi/alltoallv:ompi_basic_linear")
		differsFromSimGrid(t, dir, plat, hostfile, n, "allgatherv 0 "+counts, "smpi/allgatherv:GB")
		runs += 2
	}
	t.Logf("%d runs\n%s", runs, tab.String())
}

// TestReduceScatterRingEmptyMatchesSimGrid replays reduce_scatter
// ompi_ring of 0 elements, which SimGrid's replay skips while one of its
// shared temporary buffers is still null: as the first collective, after
// a broadcast (which grows the send buffer only), after an allreduce
// (which grows both: the ring then sends its empty blocks), and after a
// gather whose root grows the receive buffer only once the others have
// skipped the ring (SimGrid aborts, Kairos reports a deadlock).
func TestReduceScatterRingEmptyMatchesSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	for _, c := range []struct {
		n      int
		before string
	}{{3, ""}, {16, ""}, {4, "bcast 1000"}, {3, "allreduce 1000 0"}, {7, "allreduce 1000 0"}, {3, "gather 10 10 1"}} {
		var b strings.Builder
		zeros := strings.TrimSpace(strings.Repeat("0 ", c.n))
		for r := 0; r < c.n; r++ {
			fmt.Fprintf(&b, "%d init\n%d compute %d\n", r, r, r*1000000)
			if c.before != "" {
				fmt.Fprintf(&b, "%d %s\n", r, c.before)
			}
			fmt.Fprintf(&b, "%d reducescatter %s 0\n", r, zeros)
		}
		replayMatches(t, dir, plat, hostfile, c.n, "smpi/reduce_scatter:ompi_ring", b.String())
	}
}

// TestReduceScatterPairEmptyMatchesSimGrid: with every count 0, MPICH's
// pairwise reduce_scatter returns an error at once, which SimGrid's
// replay ignores: no message, then the reduction's flops (a random trace
// ended 0.2 ms late while Kairos sent the empty blocks).
func TestReduceScatterPairEmptyMatchesSimGrid(t *testing.T) {
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	for _, n := range []int{2, 5} {
		var b strings.Builder
		zeros := strings.TrimSpace(strings.Repeat("0 ", n))
		for r := 0; r < n; r++ {
			fmt.Fprintf(&b, "%d init\n%d compute %d\n%d reducescatter %s 20000 0\n%d send %d 0 1000\n%d recv %d 0 1000\n",
				r, r, r*1000000, r, zeros, r, (r+1)%n, r, (r+n-1)%n)
		}
		replayMatches(t, dir, plat, hostfile, n, "smpi/reduce_scatter:mpich_pair", b.String())
	}
}

// TestBinomialEmptyMatchesSimGrid replays gathers and scatters of 0
// elements with Open MPI's binomial trees, whose roots other than 0 and
// members of even virtual rank give up while the temporary buffer they
// ask for is still null: first, after an allgather (which grows both
// buffers), before a gather of 10 elements (whose parents then take the
// leaves' stale empty messages, and whose buffers are taken only in each
// rank's next turn), and rooted at 0 (both deadlock or abort).
func TestBinomialEmptyMatchesSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	for _, c := range []struct {
		coll    string
		n       int
		actions []string
	}{
		{"gather", 4, []string{"gather 0 0 3"}}, {"gather", 7, []string{"gather 0 0 2"}},
		{"gather", 4, []string{"allgather 10 10", "gather 0 0 3"}},
		{"gather", 4, []string{"gather 0 0 3", "gather 10 10 3"}},
		{"gather", 4, []string{"gather 0 0 0"}},
		{"scatter", 4, []string{"allgather 10 10", "scatter 0 0 2"}},
		{"scatter", 4, []string{"scatter 0 0 0"}}, {"scatter", 6, []string{"scatter 0 0 5"}},
	} {
		var b strings.Builder
		for r := 0; r < c.n; r++ {
			fmt.Fprintf(&b, "%d init\n", r)
			for _, a := range c.actions {
				fmt.Fprintf(&b, "%d %s\n", r, a)
			}
		}
		replayMatches(t, dir, plat, hostfile, c.n, "smpi/"+c.coll+":ompi_binomial", b.String())
	}
}

// replayMatches replays trace on n ranks with the --cfg setting kv with
// Kairos and SimGrid and requires the same time, or both to fail.
func replayMatches(t *testing.T, dir, plat, hostfile string, n int, kv, trace string) {
	t.Helper()
	path := filepath.Join(dir, "t.ti")
	if err := os.WriteFile(path, []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("t.ti\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ti.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	args := setBoth(t, &cfg, []string{kv})
	res, kerr := sim.Run(tr, machineOn(t, plat, n), cfg, nil)
	sg, sgErr := runSimGridCfg(dir, "desc", plat, hostfile, n, args...)
	switch {
	case kerr != nil && sgErr != nil:
	case kerr != nil || sgErr != nil:
		t.Errorf("%s, %d ranks:\n%sKairos: %v\nSimGrid: %v", kv, n, trace, kerr, sgErr)
	case math.Abs(res.Time-sg) > 1e-9:
		t.Errorf("%s, %d ranks:\n%sKairos %.9f, SimGrid %.9f", kv, n, trace, res.Time, sg)
	}
}
