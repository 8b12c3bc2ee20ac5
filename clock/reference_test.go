package clock

import (
	"fmt"
	"math"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

// This file is a second, deliberately naive replay of one configuration:
// the whole trace in memory, messages paired up front by their (source,
// destination, tag, communicator) order, and ranks swept round-robin until
// none can move. It shares nothing with the engine but the paper's
// formulas and the collective cost model, so that the engine's lazy
// clocks, shared snapshots, pools and scheduling are checked against
// plain code.

type refMsg struct {
	sendRank, recvRank int
	n                  int64
	start              float64 // eager: entry + copy; rendezvous: send post
	posted             bool    // the send has been replayed
	recvPost           float64
	recvPosted         bool
}

type refRank struct {
	evs                  []trace.Event
	pc                   int
	t, comp, w, lat, bwt float64
	reqs                 map[uint64]int  // request id -> message index
	recvReq              map[uint64]bool // the request is a receive's
	reqOrder             []uint64
	collSeq              map[uint32]int
	entered              bool // the current event's entry actions are done
}

type refReplay struct {
	o      Options
	c      Config
	ranks  []*refRank
	msgOf  map[[2]int]int     // (rank, event index) -> message
	latest map[[2]int]float64 // (comm, sequence) -> latest entry
	arrive map[[2]int]int
}

// refRun replays src under configuration c alone; it supports the eager
// and rendezvous protocols, point-to-point calls without wildcards and
// collectives on MPI_COMM_WORLD.
func refRun(t *testing.T, src trace.Source, o Options, c Config) []RankResult {
	t.Helper()
	tr, err := trace.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	r := &refReplay{o: o, c: c, msgOf: map[[2]int]int{}, latest: map[[2]int]float64{}, arrive: map[[2]int]int{}}
	type key struct {
		src, dst, tag int32
		comm          uint32
	}
	sends, recvs := map[key][][2]int{}, map[key][][2]int{}
	var msgs []*refMsg
	for rk := range tr.Ranks {
		rr := &refRank{reqs: map[uint64]int{}, recvReq: map[uint64]bool{}, collSeq: map[uint32]int{}}
		rd := tr.Ranks[rk].Reader()
		for i := 0; rd.Next(); i++ {
			e := rd.Event().Clone()
			rr.evs = append(rr.evs, e)
			me := int32(rk)
			switch e.Kind {
			case trace.Send, trace.Isend:
				k := key{me, e.Partner, e.Tag, e.Comm}
				sends[k] = append(sends[k], [2]int{rk, i})
			case trace.Recv, trace.Irecv:
				k := key{e.Partner, me, e.Tag, e.Comm}
				recvs[k] = append(recvs[k], [2]int{rk, i})
			case trace.SendRecv:
				k := key{me, e.Partner, e.Tag, e.Comm}
				sends[k] = append(sends[k], [2]int{rk, i})
				k = key{e.Source, me, e.Tag, e.Comm}
				recvs[k] = append(recvs[k], [2]int{rk, -1 - i})
			}
		}
		r.ranks = append(r.ranks, rr)
	}
	for k, ss := range sends {
		rs := recvs[k]
		if len(rs) != len(ss) {
			t.Fatalf("reference: %d sends and %d receives on %+v", len(ss), len(rs), k)
		}
		for i := range ss {
			n := r.ranks[ss[i][0]].evs[ss[i][1]].SendBytes
			msgs = append(msgs, &refMsg{sendRank: ss[i][0], recvRank: rs[i][0], n: n})
			r.msgOf[ss[i]] = len(msgs) - 1
			r.msgOf[rs[i]] = len(msgs) - 1
		}
	}
	for moved := true; moved; {
		moved = false
		for rk := range r.ranks {
			for r.step(rk, msgs) {
				moved = true
			}
		}
	}
	out := make([]RankResult, len(r.ranks))
	for rk, rr := range r.ranks {
		if rr.pc != len(rr.evs) {
			t.Fatalf("reference: rank %d stuck at event %d (%s)", rk, rr.pc, rr.evs[rr.pc].String())
		}
		out[rk] = RankResult{Comp: rr.comp, Clock: []float64{rr.t}, Wait: []float64{rr.w}, Lat: []float64{rr.lat}, BW: []float64{rr.bwt}}
	}
	return out
}

func (r *refReplay) rdv(n int64) bool { return r.o.Protocol == Rendezvous && n >= r.o.EagerLimit }

// cost returns the latency and bandwidth time of an n-byte message
// between two ranks.
func (r *refReplay) cost(a, b int, n float64) (float64, float64) {
	rpn := max(r.o.RanksPerNode, 1)
	if a/rpn == b/rpn {
		return r.o.Intra.Alpha(), n * r.o.Intra.Beta()
	}
	return r.c.Alpha(), n * r.c.Beta()
}

// finish moves rank rr from its entry to the end of the message that
// decides it (start s, latency l, arrival s+l+b), counting wait, latency
// and bandwidth time.
func (rr *refRank) finish(s, l, b float64) {
	entry := rr.t
	end := s + l + b
	if s > entry {
		rr.w += s - entry
	}
	if s+l > math.Max(entry, s) {
		rr.lat += s + l - math.Max(entry, s)
	}
	if end > math.Max(entry, s+l) {
		rr.bwt += end - math.Max(entry, s+l)
	}
	rr.t = math.Max(entry, end)
}

func (rr *refRank) local(d float64) { rr.t += d; rr.comp += d }

// step replays rank rk's next event if it can.
func (r *refReplay) step(rk int, msgs []*refMsg) bool {
	rr := r.ranks[rk]
	if rr.pc == len(rr.evs) {
		return false
	}
	i := rr.pc
	e := &rr.evs[i]
	if e.HasTime {
		panic("reference replay: timed traces are not supported")
	}
	mc := func(n int64) float64 { return float64(n) / (r.o.MemcpyGBs * 1e9) }
	msg := func(idx int) *refMsg { return msgs[r.msgOf[[2]int{rk, idx}]] }
	post := func(m *refMsg) {
		m.posted, m.start = true, rr.t
		if !r.rdv(m.n) {
			m.start += mc(m.n)
		}
	}
	postRecv := func(m *refMsg) { m.recvPosted, m.recvPost = true, rr.t }
	first := !rr.entered
	rr.entered = true
	var blockOn []*refMsg
	var recv []bool // per message of blockOn, whether the rank receives it
	switch e.Kind {
	case trace.Compute:
		rr.local(e.Compute / r.o.Speed)
	case trace.Sleep:
		rr.local(e.Compute)
	case trace.Send:
		m := msg(i)
		if first {
			post(m)
			if !r.rdv(m.n) {
				rr.local(mc(m.n))
			}
		}
		blockOn, recv = []*refMsg{m}, []bool{false}
	case trace.Isend:
		post(msg(i))
		rr.reqs[e.Request] = r.msgOf[[2]int{rk, i}]
		rr.reqOrder = append(rr.reqOrder, e.Request)
	case trace.Irecv:
		postRecv(msg(i))
		rr.reqs[e.Request] = r.msgOf[[2]int{rk, i}]
		rr.recvReq[e.Request] = true
		rr.reqOrder = append(rr.reqOrder, e.Request)
	case trace.Recv:
		if first {
			postRecv(msg(i))
		}
		blockOn, recv = []*refMsg{msg(i)}, []bool{true}
	case trace.SendRecv:
		s, rv := msg(i), msg(-1-i)
		if first {
			post(s)
			if !r.rdv(s.n) {
				rr.local(mc(s.n))
			}
			postRecv(rv)
		}
		blockOn, recv = []*refMsg{s, rv}, []bool{false, true}
	case trace.Wait, trace.Waitall:
		ids := e.Requests
		if e.Kind == trace.Wait {
			ids = []uint64{e.Request}
		} else if ids == nil {
			ids = rr.reqOrder
		}
		for _, id := range ids {
			if p, ok := rr.reqs[id]; ok {
				blockOn, recv = append(blockOn, msgs[p]), append(recv, rr.recvReq[id])
			}
		}
		if !r.complete(rk, blockOn, recv) {
			return false
		}
		for _, id := range ids {
			delete(rr.reqs, id)
			delete(rr.recvReq, id)
		}
		if e.Kind == trace.Waitall && e.Requests == nil {
			rr.reqOrder = nil
		}
		blockOn = nil
	default:
		if e.Kind.IsCollective() && e.Kind != trace.CommSplit && e.Kind != trace.CommDup && e.Kind != trace.CommCreate {
			if !r.collective(rk, e, first) {
				return false
			}
		}
	}
	if blockOn != nil && !r.complete(rk, blockOn, recv) {
		return false
	}
	rr.pc++
	rr.entered = false
	return true
}

// complete finishes rank rk's blocking call on messages ms (those it
// receives where recv says so: a message to itself is both) at the latest
// arrival (the latest start among equals), or reports that it must wait.
func (r *refReplay) complete(rk int, ms []*refMsg, recv []bool) bool {
	rr := r.ranks[rk]
	bestA, bestS, bestL, bestB := rr.t, rr.t, 0.0, 0.0
	for i, m := range ms {
		rdv := r.rdv(m.n)
		if !recv[i] && !rdv {
			continue // an eager send completes locally
		}
		if !m.posted || rdv && !m.recvPosted {
			return false
		}
		s := m.start
		if rdv {
			s = math.Max(m.start, m.recvPost)
		}
		l, b := r.cost(m.sendRank, m.recvRank, float64(m.n))
		if a := s + l + b; a > bestA || a == bestA && s > bestS {
			bestA, bestS, bestL, bestB = a, s, l, b
		}
	}
	rr.finish(bestS, bestL, bestB)
	return true
}

// collective replays rank rk's arrival at a world collective and, once
// every rank has arrived, its exit.
func (r *refReplay) collective(rk int, e *trace.Event, first bool) bool {
	rr := r.ranks[rk]
	k := [2]int{int(e.Comm), rr.collSeq[e.Comm]}
	if first {
		r.arrive[k]++
		if r.arrive[k] == 1 || rr.t > r.latest[k] {
			r.latest[k] = rr.t
		}
	}
	n := len(r.ranks)
	if r.arrive[k] < n {
		return false
	}
	cost := collectiveCost(e, n)
	other := n - 1 // a rank on another node than rank 0, unless all share it
	l, _ := r.cost(0, other, 0)
	_, b := r.cost(0, other, cost.m)
	rr.finish(r.latest[k], cost.kL*l, cost.kB*b)
	rr.collSeq[e.Comm]++
	if e.Kind.HasReduction() && e.Compute > 0 {
		rr.local(e.Compute / r.o.Speed)
	}
	return true
}

// TestReference: for every generator, eager and rendezvous, with and
// without several ranks per node, the engine predicts what the naive
// replay predicts for each configuration.
func TestReference(t *testing.T) {
	configs := []Config{{BW: 1, Lat: 50}, {BW: 32, Lat: 1.3}, {BW: 0.125, Lat: 400}}
	for _, kind := range workload.Kinds() {
		src := generated(t, kind, func(p *workload.Params) {
			p.Iterations = min(p.Iterations, 3)
			p.Tasks, p.Planes, p.Inner = min(p.Tasks, 30), min(p.Planes, 4), min(p.Inner, 3)
			p.Imbalance, p.Noise = 0.5, 0.2
		})
		for _, setup := range []struct {
			proto Protocol
			rpn   int
		}{{Eager, 1}, {Rendezvous, 1}, {Eager, 2}} {
			name := fmt.Sprintf("%s/%v/%d-per-node", kind, setup.proto, setup.rpn)
			o := DefaultOptions()
			o.Speed, o.Protocol, o.EagerLimit, o.RanksPerNode, o.PerRank = 1e9, setup.proto, 2048, setup.rpn, true
			o.Configs = configs
			got, err := Replay(src, o)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for c, cfg := range configs {
				want := refRun(t, src, o, cfg)
				for rk, w := range want {
					g := got.PerRank[rk]
					for _, v := range []struct {
						what string
						g, w float64
					}{{"clock", g.Clock[c], w.Clock[0]}, {"wait", g.Wait[c], w.Wait[0]}, {"latency", g.Lat[c], w.Lat[0]},
						{"bandwidth", g.BW[c], w.BW[0]}, {"computation", g.Comp, w.Comp}} {
						if math.Abs(v.g-v.w) > 1e-9*math.Max(math.Abs(v.w), 1e-12) {
							t.Errorf("%s %v rank %d %s: engine %.15g, reference %.15g", name, cfg, rk, v.what, v.g, v.w)
						}
					}
				}
			}
		}
	}
}
