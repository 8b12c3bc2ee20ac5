package cluster

import (
	"math/rand/v2"
	"testing"
	"time"

	"kairos/internal/testenv"
	"kairos/trace"
	"kairos/workload"
)

// BenchmarkSignAll signs the 64 ranks of the default 8x8 stencil (1,000
// iterations, 646,528 events) and the 1,024 of a 32x32 one of 10
// iterations, and reports the rate beside the trace-reading rate (every
// event decoded from memory).
func BenchmarkSignAll(b *testing.B) {
	p, err := workload.Defaults("stencil2d")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name       string
		grid       []int
		iterations int
	}{{"8x8x1000", []int{8, 8}, 1000}, {"32x32x10", []int{32, 32}, 10}} {
		p.Ranks, p.Grid, p.Iterations = 0, c.grid, c.iterations
		src, err := workload.New("stencil2d", p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) { benchSign(b, src) })
	}
}

func benchSign(b *testing.B, src trace.Source) {
	tr, err := trace.Load(src)
	if err != nil {
		b.Fatal(err)
	}
	// The trace-reading rate, for comparison: every rank's events decoded,
	// alternately with signing, so that the machine's load falls on both.
	var read, sign, readWall, signWall time.Duration
	for b.Loop() {
		cpu0, wall0 := testenv.CPUTime(), time.Now()
		if err := trace.ForEach(tr, func(_, _ int, _ *trace.Event) error { return nil }); err != nil {
			b.Fatal(err)
		}
		cpu1, wall1 := testenv.CPUTime(), time.Now()
		if _, err := SignAll(tr, SignOptions{}); err != nil {
			b.Fatal(err)
		}
		read, sign = read+cpu1-cpu0, sign+testenv.CPUTime()-cpu1
		readWall, signWall = readWall+wall1.Sub(wall0), signWall+time.Since(wall1)
	}
	n := float64(tr.NumEvents()) * float64(b.N)
	b.ReportMetric(n/sign.Seconds(), "cpu-events/s")
	b.ReportMetric(n/read.Seconds(), "read-cpu-events/s")
	b.ReportMetric(100*read.Seconds()/sign.Seconds(), "%-of-read-rate")
	b.ReportMetric(100*readWall.Seconds()/signWall.Seconds(), "%-of-read-rate-wall")
}

// randomSigs returns n ranks' signatures drawn from a few behaviours.
func randomSigs(n int) []Signatures {
	rng := rand.New(rand.NewPCG(1, 2))
	sigs := make([]Signatures, n)
	for i := range sigs {
		kind := rng.IntN(16)
		sigs[i] = Signatures{Rank: int32(i), Path: int32(kind % 4), CallPath: uint64(kind % 4), Count: float64(kind * 100),
			Src: float64(rng.IntN(8) - 4), Dest: float64(rng.IntN(8) - 4), Comp: rng.Float64()}
		sigs[i].Params = ParamKey{CountSum: int64(kind * 100), CountN: 1, DestSum: int64(sigs[i].Dest), DestN: 1, SrcSum: int64(sigs[i].Src), SrcN: 1}
		sigs[i].Param = ParamSignature(sigs[i].Count, sigs[i].Dest, sigs[i].Src, 0)
		sigs[i].Reference = int32(kind)
	}
	return sigs
}

// BenchmarkCluster clusters 100,000 ranks' signatures with each method.
func BenchmarkCluster(b *testing.B) {
	sigs := randomSigs(100000)
	for _, m := range Methods {
		b.Run(string(m), func(b *testing.B) {
			opt := DefaultOptions()
			opt.Method = m
			cpu0 := testenv.CPUTime()
			for b.Loop() {
				if _, err := Cluster(sigs, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((testenv.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(sigs))*float64(b.N)/b.Elapsed().Seconds(), "ranks/s")
		})
	}
}

// BenchmarkClusterNAS clusters the signatures of 131,072 ranks of the
// NAS-like generators, signed with and without their plug-ins (CG's
// transpose partner makes every rank's end-points its own without the
// plug-in: the filtering function's case; FT's splits), with each method.
func BenchmarkClusterNAS(b *testing.B) {
	for _, c := range []struct {
		kind    string
		plugins []string
	}{{"cg", nil}, {"cg", []string{"cg"}}, {"ft", nil}, {"ft", []string{"ft"}}} {
		p, err := workload.Defaults(c.kind)
		if err != nil {
			b.Fatal(err)
		}
		p.Ranks, p.Grid, p.Iterations, p.Inner = 1<<17, nil, 1, 1
		src, err := workload.New(c.kind, p)
		if err != nil {
			b.Fatal(err)
		}
		sigs, err := SignAll(src, SignOptions{Plugins: c.plugins, Reference: true})
		if err != nil {
			b.Fatal(err)
		}
		name := c.kind
		if c.plugins != nil {
			name += "+plugin"
		}
		for _, m := range Methods {
			b.Run(name+"/"+string(m), func(b *testing.B) {
				opt := DefaultOptions()
				opt.Method = m
				var groups int
				cpu0 := testenv.CPUTime()
				for b.Loop() {
					res, err := Cluster(sigs, opt)
					if err != nil {
						b.Fatal(err)
					}
					groups = len(res.Groups)
				}
				b.ReportMetric((testenv.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
				b.ReportMetric(float64(groups), "clusters")
			})
		}
	}
}
