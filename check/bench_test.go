package check

import (
	"errors"
	"math/rand/v2"
	"testing"

	"kairos/trace"
)

// stencil builds a 2-D 5-point stencil on a side x side torus: per
// iteration four irecvs, four isends, a waitall and a compute, with an
// allreduce every tenth iteration.
func stencil(side, iters int) *trace.Trace {
	n := side * side
	t := trace.New(n, trace.NewMeta())
	for r := 0; r < n; r++ {
		x, y := r%side, r/side
		nb := []int32{
			int32((x+1)%side + y*side), int32((x+side-1)%side + y*side),
			int32(x + (y+1)%side*side), int32(x + (y+side-1)%side*side),
		}
		rk := &t.Ranks[r]
		for it := 0; it < iters; it++ {
			req := uint64(0)
			for d, p := range nb {
				e := irecv(p, int32(d^1), 4096, req)
				rk.Append(&e)
				req++
			}
			for d, p := range nb {
				e := isend(p, int32(d), 4096, req)
				rk.Append(&e)
				req++
			}
			e := waitall()
			rk.Append(&e)
			e = compute(1e6)
			rk.Append(&e)
			if it%10 == 9 {
				e = coll(trace.Allreduce, 0, 8)
				rk.Append(&e)
			}
		}
	}
	return t
}

func TestStencilValid(t *testing.T) {
	tr := stencil(4, 20)
	for _, p := range []Protocol{None, Eager, Rendezvous, SimGrid} {
		rep, err := Check(tr, Options{Protocol: p})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) != 0 {
			t.Errorf("%s: %v", p, rep.Problems)
		}
		if rep.Events != int64(tr.NumEvents()) || rep.Messages != 16*20*4 || rep.Collectives != 2 || rep.Requests != 16*20*8 {
			t.Errorf("%s: counts %+v", p, rep)
		}
	}
}

// BenchmarkCheck reports the events checked per second on a 256-rank
// stencil of about 1.1 million events.
func BenchmarkCheck(b *testing.B) {
	tr := stencil(16, 420)
	for _, p := range []Protocol{None, SimGrid, Rendezvous} {
		b.Run(p.String(), func(b *testing.B) {
			for b.Loop() {
				rep, err := Check(tr, Options{Protocol: p})
				if err != nil || !rep.OK() {
					b.Fatal(err, rep.Problems)
				}
			}
			b.ReportMetric(float64(tr.NumEvents())*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// randomSource builds a small trace of mostly invalid events from data:
// every 8 bytes make one event of a rank.
func randomSource(data []byte) *textSource {
	kinds := []trace.Kind{trace.Send, trace.Isend, trace.Recv, trace.Irecv, trace.Wait, trace.Waitall,
		trace.Test, trace.SendRecv, trace.Barrier, trace.Bcast, trace.Allreduce, trace.Probe, trace.Compute,
		trace.Alltoallv, trace.CommSplit, trace.Iprobe, trace.Gatherv, trace.Scatterv, trace.Allgatherv}
	n := 1
	if len(data) > 0 {
		n = 1 + int(data[0]%4)
		data = data[1:]
	}
	src := &textSource{meta: trace.NewMeta(), ranks: make([][]trace.Event, n)}
	src.meta.Comms = []trace.Comm{{ID: 1, Members: []int32{0}}, {ID: 2, Members: []int32{int32(n - 1), 0, 7}}}
	for i := 0; len(data) >= 8; i, data = i+1, data[8:] {
		b := data[:8]
		e := trace.NewEvent(kinds[int(b[0])%len(kinds)])
		e.Partner = int32(b[1]%byte(n+3)) - 2
		e.Source = int32(b[2]%byte(n+2)) - 1
		e.Tag = int32(b[3]%3) - 1
		e.SendBytes = int64(b[4]%4) - 1
		e.RecvBytes = int64(b[4]/4%4) - 1
		e.Request = uint64(b[5] % 3)
		e.Comm = uint32(b[6] % 3)
		switch b[7] % 5 {
		case 0:
			e.Requests = []uint64{uint64(b[7] / 5 % 3)}
		case 1:
			e.SendCounts = []int64{int64(b[7]/5%3) - 1}
		case 2:
			e.Compute = float64(b[7]/5) - 10
		}
		r := int(b[2]) % n
		src.ranks[r] = append(src.ranks[r], e)
	}
	return src
}

// checkAll runs src through every protocol: Check must end without
// panicking, whatever the input, and problems must be in order.
func checkAll(t *testing.T, src trace.Source) {
	for _, p := range []Protocol{None, Eager, Rendezvous, SimGrid} {
		rep, err := Check(src, Options{Protocol: p, EagerLimit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() != (rep.Errors == 0) || len(rep.Problems) != rep.Errors+rep.Warnings-rep.Omitted {
			t.Fatalf("inconsistent report %+v", rep)
		}
	}
}

func TestRandomTraces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		data := make([]byte, 1+8*rng.IntN(40))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		checkAll(t, randomSource(data))
	}
}

// FuzzCheck checks random traces (see randomSource) both ways (see
// checkAll). While "go test -fuzz" minimizes a new interesting input (up
// to -fuzzminimizetime, 60 s by default) its exec counter stands still,
// which looks like a stall; -fuzzminimizetime 1x keeps it fuzzing.
func FuzzCheck(f *testing.F) {
	f.Add([]byte{1, 0, 1, 0, 1, 1, 0, 0, 0, 2, 0, 1, 1, 1, 0, 0, 0})
	f.Add([]byte{3, 8, 0, 0, 0, 0, 0, 0, 0, 8, 0, 1, 0, 0, 0, 0, 0, 8, 0, 2, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 1, 3, 0, 1, 5, 1, 0, 0, 5, 0, 0, 1, 5, 1, 0, 0})
	f.Add([]byte{3, 12, 0, 2, 0, 0, 0, 0, 2, 12, 0, 2, 0, 0, 0, 0, 0}) // issue 43: computes of -10 flops, ranks without events
	// A gatherv and a scatterv on two ranks whose root, rank 2, is not
	// one (the pairwise check indexed its counts at -1).
	f.Add([]byte{1, 16, 4, 0, 0, 5, 0, 0, 1, 16, 4, 1, 0, 5, 0, 0, 1})
	f.Add([]byte{1, 17, 4, 0, 0, 5, 0, 0, 1, 17, 4, 1, 0, 5, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 8*200 {
			return
		}
		checkAll(t, randomSource(data))
	})
}

type failingSource struct{ textSource }

func (s *failingSource) OpenRank(r int) (trace.Reader, error) {
	return nil, errors.New("no such file")
}

func TestReadError(t *testing.T) {
	src := &failingSource{textSource{meta: trace.NewMeta(), ranks: make([][]trace.Event, 2)}}
	if _, err := Check(src, Options{}); err == nil || err.Error() != "rank 0: no such file" {
		t.Errorf("err = %v", err)
	}
}
