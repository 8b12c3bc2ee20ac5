package capture_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
	"kairos/internal/testenv"
	"kairos/internal/tracertest"
	"kairos/trace"
)

// TestTracerCommCreation traces testdata/commcreate.c on Open MPI and
// its Fortran twin on MPICH (each on both under testenv.Long): a rank
// waits 0.2 s in MPI_Comm_split and another in MPI_Comm_dup for the rank
// that slept before them. The waits are MPI time, not computation: each
// rank's TI computation is its time outside MPI in the OTF2 archive of
// the same run, whose MPI_Comm_split, MPI_Comm_dup, MPI_Cart_create and
// MPI_Cart_sub are calls of their own, MPI time that a replay does not
// replay (before, the TI trace counted the waits as computation and the
// archive had no such calls); and the archive made time-independent has
// the TI trace's computation, rank by rank.
func TestTracerCommCreation(t *testing.T) {
	type run struct {
		m   tracertest.MPI
		src string
	}
	runs := []run{{tracertest.OpenMPI, "commcreate.c"}, {tracertest.MPICH, "commcreate.f90"}}
	if testenv.Long() {
		runs = append(runs, run{tracertest.MPICH, "commcreate.c"}, run{tracertest.OpenMPI, "commcreate.f90"})
	}
	for _, c := range runs {
		t.Run(strings.ReplaceAll(c.m.Name, " ", "")+"/"+c.src, func(t *testing.T) {
			dir := t.TempDir()
			lib := tracerFor(t, c.m)
			prog := c.m.Compile(t, dir, tracertest.Testdata(c.src))
			record(t, c.m, dir, lib, prog)
			src, _, err := format.Open(filepath.Join(dir, "trace", "traces.otf2"))
			if err != nil {
				t.Fatal(err)
			}
			type rankTimes struct {
				first, last, mpi trace.Time
				calls            map[string]trace.Time
			}
			ranks := make([]rankTimes, src.NumRanks())
			if err := trace.ForEach(src, func(r, i int, e *trace.Event) error {
				rt := &ranks[r]
				if rt.calls == nil {
					rt.calls = map[string]trace.Time{}
				}
				switch {
				case e.Kind == trace.Init:
					rt.first = e.Exit
				case e.Kind == trace.Finalize:
					rt.last = e.Enter
				case e.Kind != trace.Compute:
					rt.mpi += e.Duration()
				}
				if e.Kind == trace.Deferred {
					rt.calls[src.Meta().RegionName(e.Region)] += e.Duration()
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for r, rt := range ranks {
				for _, call := range []string{"MPI_Comm_split", "MPI_Comm_dup", "MPI_Cart_create", "MPI_Cart_sub"} {
					if _, ok := rt.calls[call]; !ok {
						t.Errorf("rank %d: no %s in the archive (%v)", r, call, rt.calls)
					}
				}
				outside := (rt.last - rt.first - rt.mpi).Seconds()
				flops := tiFlops(t, filepath.Join(dir, "trace", fmt.Sprintf("rank-%d.ti", r)))
				if d := flops/1e9 - outside; d > 0.02 || d < -0.02 {
					t.Errorf("rank %d: %.3f s of computation in TI, %.3f s outside MPI in the archive (in MPI_Comm_split %.3f s, MPI_Comm_dup %.3f s)",
						r, flops/1e9, outside, rt.calls["MPI_Comm_split"].Seconds(), rt.calls["MPI_Comm_dup"].Seconds())
				}
			}
			untimed := make([]float64, src.NumRanks())
			if err := trace.ForEach(trace.UntimedAbove(src, 1e9, trace.FromSeconds(1e-6)), func(r, _ int, e *trace.Event) error {
				if e.Kind == trace.Compute {
					untimed[r] += e.Compute
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for r, f := range untimed {
				ti := tiFlops(t, filepath.Join(dir, "trace", fmt.Sprintf("rank-%d.ti", r)))
				if d := (f - ti) / 1e9; d > 0.02 || d < -0.02 {
					t.Errorf("rank %d: %.3f s of computation from the archive, %.3f s in TI", r, f/1e9, ti/1e9)
				}
			}
			if w := ranks[0].calls["MPI_Comm_split"]; w < trace.FromSeconds(0.15) {
				t.Errorf("rank 0 waits %.3f s in MPI_Comm_split, want rank 1's 0.2 s sleep", w.Seconds())
			}
			if w := ranks[1].calls["MPI_Comm_dup"]; w < trace.FromSeconds(0.15) {
				t.Errorf("rank 1 waits %.3f s in MPI_Comm_dup, want rank 0's 0.2 s sleep", w.Seconds())
			}
		})
	}
}
