package workload_test

import (
	"fmt"
	"testing"

	"kairos/check"
	"kairos/workload"
)

// FuzzGenerate builds workloads from arbitrary parameters (a third of them
// with a delay): New either rejects them with an error or returns a trace
// that passes check and replays without deadlock under rendezvous sends.
// Sizes are kept small so that each input checks quickly.
func FuzzGenerate(f *testing.F) {
	f.Add(uint8(0), uint8(4), uint8(0), uint8(0), uint8(0), uint8(2), uint32(100), 1e6, 0.5, 0.1, uint64(1), true, uint8(1), uint8(5), uint8(2))
	f.Add(uint8(8), uint8(0), uint8(3), uint8(2), uint8(0), uint8(1), uint32(8), 0.0, 0.0, 0.0, uint64(7), false, uint8(0), uint8(1), uint8(3))
	f.Add(uint8(9), uint8(0), uint8(2), uint8(1), uint8(3), uint8(3), uint32(1), 5.0, 2.0, 0.9, uint64(3), true, uint8(2), uint8(3), uint8(4))
	f.Add(uint8(4), uint8(9), uint8(0), uint8(0), uint8(0), uint8(1), uint32(70000), 1e9, 0.0, 0.5, uint64(9), false, uint8(0), uint8(2), uint8(9))
	f.Add(uint8(10), uint8(0), uint8(5), uint8(1), uint8(0), uint8(2), uint32(0), 1.0, 0.0, 1.0, uint64(0), false, uint8(0), uint8(0), uint8(0))
	f.Add(uint8(3), uint8(0), uint8(1), uint8(6), uint8(0), uint8(1), uint32(640), 1e8, 0.2, 0.0, uint64(5), false, uint8(3), uint8(3), uint8(2))
	// Valid delays: stencil2d (rank 6, iteration 0, x2) and ring (rank 3,
	// iteration 2, x4).
	f.Add(uint8(8), uint8(9), uint8(0), uint8(0), uint8(0), uint8(3), uint32(100), 1e6, 0.1, 0.1, uint64(2), true, uint8(1), uint8(0), uint8(6))
	f.Add(uint8(7), uint8(5), uint8(0), uint8(0), uint8(0), uint8(3), uint32(64), 1e5, 0.0, 0.3, uint64(4), false, uint8(2), uint8(6), uint8(3))
	kinds := workload.Kinds()
	f.Fuzz(func(t *testing.T, kind, ranks, gx, gy, gz, iters uint8, bytes uint32, flops, imb, noise float64,
		seed uint64, periodic bool, every, x1, x2 uint8) {
		k := kinds[int(kind)%len(kinds)]
		p, err := workload.Defaults(k)
		if err != nil {
			t.Fatal(err)
		}
		p.Ranks = int(ranks % 40)
		p.Grid = nil
		if gx > 0 {
			p.Grid = []int{int(gx % 7)}
			if gy > 0 {
				p.Grid = append(p.Grid, int(gy%7))
			}
			if gz > 0 {
				p.Grid = append(p.Grid, int(gz%7))
			}
		}
		p.Iterations = int(iters % 4)
		p.Bytes = int64(bytes) - 1
		p.Flops, p.Imbalance, p.Noise, p.Seed = flops, imb, noise, seed
		p.Periodic = periodic
		p.AllreduceEvery = int(every%4) - 1
		p.Tasks = int(x1) - 1
		p.Levels = int(x2 % 6)
		p.Blocks, p.Planes, p.Inner = int(x1%4), int(x2%8), int(x2%4)
		if x1%3 == 0 {
			p.Delay = workload.Delay{Rank: int(x2 % 8), Iterations: []int{int(x1 % 4)}, Factor: 1 + float64(x2%5)}
		}
		src, err := workload.New(k, p)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		rep, err := check.Check(src, check.Options{Protocol: check.Rendezvous})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.Warnings > 0 {
			t.Fatalf("%s %+v: %s", k, p, fmt.Sprint(rep.Problems))
		}
	})
}

// FuzzParseGrid: ParseGrid never panics, and what it accepts prints back
// as it parses.
func FuzzParseGrid(f *testing.F) {
	for _, s := range []string{"8x8", "4x4x4", "1", "0x3", "x", "9999999999999999999x2", "3x-1", " 2x2 ", "1000000x1000000", "4097x4096"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := workload.ParseGrid(s)
		if err != nil {
			return
		}
		if len(g) == 0 || len(g) > 3 {
			t.Fatalf("%q: %v", s, g)
		}
		for _, d := range g {
			if d < 1 {
				t.Fatalf("%q: %v", s, g)
			}
		}
	})
}
