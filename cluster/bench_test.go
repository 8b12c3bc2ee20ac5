package cluster

import (
	"math/rand/v2"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

// BenchmarkSignAll signs the 1,024 ranks of a 32x32 stencil (10
// iterations): signatures, loop folding and reference, per event.
func BenchmarkSignAll(b *testing.B) {
	p, err := workload.Defaults("stencil2d")
	if err != nil {
		b.Fatal(err)
	}
	p.Ranks, p.Grid, p.Iterations = 1024, []int{32, 32}, 10
	src, err := workload.New("stencil2d", p)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := trace.Load(src)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := SignAll(tr, SignOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tr.NumEvents())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
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
			for b.Loop() {
				if _, err := Cluster(sigs, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(sigs))*float64(b.N)/b.Elapsed().Seconds(), "ranks/s")
		})
	}
}
