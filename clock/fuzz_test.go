package clock

import (
	"math"
	"strings"
	"testing"

	"kairos/trace"
)

// FuzzParseTable: any input gives a table or an error, never a panic,
// and a table is usable.
func FuzzParseTable(f *testing.F) {
	for _, s := range []string{
		"bytes,t_usec\n0,1.3\n1024,1.62\n4194304,1050\n",
		"# comment\n1 2\n2 3\n",
		"0;1\n8;1.5\n",
		"size\n0,1\n1,1\n",
		"",
		"1,2\n1,3\n",
		"-1,2\n",
		"0,NaN\n1,1\n",
		"0,1e308\n9223372036854775807,1e309\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ParseTable(strings.NewReader(s), "fuzz.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Errorf("error %q does not name the input", err)
			}
			return
		}
		m := newP2P(tab)
		for _, n := range []float64{0, 1, 1e3, 1e9} {
			if l0, b0 := m.terms(n); l0 < 0 || b0 < 0 {
				t.Errorf("terms(%g) = %g, %g", n, l0, b0)
			}
		}
		_ = tab.Base()
	})
}

// FuzzParseConfigs: any input gives valid configurations or an error
// naming the line.
func FuzzParseConfigs(f *testing.F) {
	for _, s := range []string{"1,50\n10 5\n(32, 1.3)\n", "# x\n\n1,1\n", "1,-1\n", "a,b\n", "1,2,3\n", "0,1\n", "Inf,1\n",
		"NaN,1\n", "1,NaN\n", "1e308,1e308\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseConfigs(strings.NewReader(s), "fuzz.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt") {
				t.Errorf("error %q does not name the input", err)
			}
			return
		}
		for _, c := range cs {
			if !c.Valid() {
				t.Errorf("invalid configuration %v accepted", c)
			}
		}
		if len(cs) > 0 {
			_, _ = ParseInterconnect(strings.SplitN(s, "\n", 2)[0])
		}
	})
}

// FuzzReplay: any trace, however wrong, replays to a result or an error,
// never a panic or a hang. Each 4 bytes of input are one event: rank,
// kind, partner (3 = out of range) and tag/size/request.
func FuzzReplay(f *testing.F) {
	f.Add([]byte{0, 5, 1, 1, 1, 7, 0, 1})                           // send / recv
	f.Add([]byte{0, 7, 1, 0, 1, 7, 0, 0})                           // crossed receives
	f.Add([]byte{0, 13, 0, 0, 1, 13, 0, 0, 2, 16, 0, 0})            // barrier, barrier, allreduce
	f.Add([]byte{0, 8, 1, 2, 1, 6, 0, 2, 0, 10, 0, 2, 1, 11, 0, 0}) // irecv, isend, wait, waitall
	f.Add([]byte{0, 12, 1, 3, 1, 12, 0, 3, 2, 3, 9, 9})             // sendrecv pair, compute
	f.Add([]byte{2, 0, 0, 255, 2, 0, 0, 255, 2, 0, 0, 255})         // issue 43: one rank of three with events
	kinds := []trace.Kind{trace.Compute, trace.Send, trace.Isend, trace.Recv, trace.Irecv, trace.Wait, trace.Waitall,
		trace.SendRecv, trace.Barrier, trace.Bcast, trace.Allreduce, trace.Alltoall, trace.Test, trace.Init}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 400 {
			return
		}
		b := newBuilder(3)
		for i := 0; i+4 <= len(data); i += 4 {
			r, k, p, x := int(data[i])%3, kinds[int(data[i+1])%len(kinds)], int32(data[i+2]%5)-1, data[i+3]
			b.add(r, k, func(e *trace.Event) {
				e.Partner, e.Source, e.Tag = p, p, int32(x%3)-1
				e.SendBytes, e.RecvBytes, e.Request, e.Compute = int64(x)*1000, int64(x)*1000, uint64(x%4), float64(x)
				if x%7 == 0 {
					e.Requests = []uint64{uint64(x % 4), 1}
				}
			})
		}
		for _, proto := range []Protocol{Eager, Rendezvous} {
			opt := unitOptions(1)
			opt.Protocol, opt.EagerLimit = proto, 50000
			res, err := Replay(b.t, opt)
			if err == nil {
				for c := range res.Time {
					if math.IsNaN(res.Time[c]) || res.Time[c] < 0 {
						t.Errorf("time %g", res.Time[c])
					}
				}
			}
		}
	})
}
