package prsd

import (
	"math"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

// gen returns a generated trace of kind with ranks ranks and iterations
// time steps, noisy and imbalanced.
func gen(t testing.TB, kind string, ranks, iterations int, noisy bool) trace.Source {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	if ranks > 0 {
		p.Ranks, p.Grid = ranks, nil
	}
	if iterations > 0 {
		p.Iterations = iterations
	}
	if noisy {
		p.Imbalance, p.Noise = 0.2, 0.05
	}
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestLossless: every generator's trace, noisy and imbalanced, compresses
// into one cluster and reads back call for call, parameter for
// parameter.
func TestLossless(t *testing.T) {
	for _, kind := range workload.Kinds() {
		for _, noisy := range []bool{false, true} {
			src := gen(t, kind, 0, 3, noisy)
			tr, err := Build(src, nil, DefaultOptions())
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			if err := Verify(src, tr); err != nil {
				t.Errorf("%s (noisy %v): %v", kind, noisy, err)
			}
		}
	}
}

// TestTimingBound: every rank's total computation at every call site is
// within the time error of its own.
func TestTimingBound(t *testing.T) {
	src := gen(t, "stencil2d", 16, 20, true)
	for _, eps := range []float64{0, 0.01, 0.1} {
		tr, err := Build(src, nil, Options{TimeError: eps})
		if err != nil {
			t.Fatal(err)
		}
		for r := range src.NumRanks() {
			own, back := computeBySite(t, src, r), computeBySite(t, tr, r)
			for site, v := range own {
				if d := math.Abs(back[site]-v) / v; d > eps+1e-12 {
					t.Errorf("eps %g: rank %d site %x: %g, read back %g", eps, r, site, v, back[site])
				}
			}
		}
	}
}

func computeBySite(t *testing.T, src trace.Source, r int) map[uint64]float64 {
	t.Helper()
	rd, err := src.OpenRank(r)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	out := map[uint64]float64{}
	for rd.Next() {
		if e := rd.Event(); e.Kind == trace.Compute {
			out[e.CallSite] += e.Compute
		}
	}
	if rd.Err() != nil {
		t.Fatal(rd.Err())
	}
	return out
}
