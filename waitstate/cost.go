package waitstate

import (
	"slices"
	"sort"

	"kairos/trace"
)

// analyzer charges the wait states to their causes.
type analyzer struct {
	*detector
	acts    *activities
	meta    *trace.Meta
	startUp uint32       // the activity of a rank before its first event
	origin  trace.Time   // the first enter of the trace
	firsts  []trace.Time // the first enter of each rank
	tc      timeMap      // the causer's interval
	tw      timeMap      // the waiter's interval
	// Each rank's indexes of its long intervals (interval.go), made where
	// one is met.
	indexes []*rankIndex
	cumul   []*rankTimes
}

// timeMap is the time of an interval by activity.
type timeMap struct {
	t       []trace.Time
	in      []bool // the activity is in touched
	touched []uint32
}

func (m *timeMap) reset(n int) {
	if len(m.t) < n {
		m.t, m.in = make([]trace.Time, n), make([]bool, n)
	}
	for _, k := range m.touched {
		m.t[k], m.in[k] = 0, false
	}
	m.touched = m.touched[:0]
}

func (m *timeMap) add(k uint32, t trace.Time) {
	if t == 0 {
		return
	}
	if !m.in[k] {
		m.in[k] = true
		m.touched = append(m.touched, k)
	}
	m.t[k] += t
}

// get returns the time of activity k, never below 0 (a wait state taken
// out may exceed the time its call counted where calls overlap).
func (m *timeMap) get(k uint32) trace.Time { return max(m.t[k], 0) }

// handler is a wait state, handled in the backward replay.
type handler struct {
	rank  int32
	entry int32
	end   trace.Time // when the wait ended
	cause trace.Time // when the causer reached the synchronization point
}

// causeKey is a root cause: an activity of a rank.
type causeKey struct {
	rank int32
	act  uint32
}

// charge is what a cause is charged so far.
type charge struct {
	direct, propagated float64
	kinds              [numKinds]float64 // direct, by kind
}

// costs handles every wait state, latest first, so that the waiting a
// wait state caused later (its long-term cost) is known when it is
// charged to its causer's delay.
func (a *analyzer) costs(opt Options) *Analysis {
	n := len(a.ranks)
	res := &Analysis{Ranks: n, RankWaiting: make([]float64, n), RankCost: make([]float64, n), Kinds: []KindTotal{}, Causes: []Cause{}}
	waits := 0 // counted first: tens of millions of handlers are not grown by copies
	for _, es := range a.entries {
		for i := range es {
			if es[i].wait > 0 {
				waits++
			}
		}
	}
	hs := make([]handler, 0, waits)
	for r, es := range a.entries {
		for i := range es {
			if e := &es[i]; e.wait > 0 {
				s := a.span(int32(r), e.call)
				hs = append(hs, handler{int32(r), int32(i), s.enter + e.wait, a.span(e.causer, e.causerCall).enter})
			}
		}
	}
	slices.SortFunc(hs, func(x, y handler) int {
		for _, c := range [...]int64{int64(y.end - x.end), int64(y.cause - x.cause), int64(y.rank - x.rank), int64(y.entry - x.entry)} {
			if c != 0 {
				return int(max(min(c, 1), -1))
			}
		}
		return 0
	})
	if opt.Waits {
		res.Waits = make([]Wait, 0, len(hs))
	}
	var kinds [numKinds]KindTotal
	charged := map[causeKey]*charge{}
	for _, h := range hs {
		e := &a.entries[h.rank][h.entry]
		direct, indirect := a.handle(h.rank, e, charged)
		omega := e.wait.Seconds()
		k := &kinds[e.kind]
		k.Count++
		k.Seconds += omega
		k.Direct += direct
		k.Indirect += indirect
		res.Waiting += omega
		res.RankWaiting[h.rank] += omega
		if opt.Waits {
			act, _ := a.name(a.span(h.rank, e.call).act)
			res.Waits = append(res.Waits, Wait{Rank: h.rank, Kind: e.kind, Start: a.span(h.rank, e.call).enter.Seconds(),
				Seconds: omega, Causer: e.causer, Activity: act, Direct: direct, Indirect: indirect})
		}
	}
	for i := range kinds {
		if kinds[i].Count > 0 {
			kinds[i].Kind = Kind(i)
			res.Kinds = append(res.Kinds, kinds[i])
		}
	}
	sort.SliceStable(res.Kinds, func(i, j int) bool { return res.Kinds[i].Seconds > res.Kinds[j].Seconds })
	total := 0.0
	for k, c := range charged {
		act, path := a.name(k.act)
		cause := Cause{Rank: k.rank, Activity: act, CallPath: path, Direct: c.direct, Propagated: c.propagated,
			Cost: c.direct + c.propagated, DirectKinds: map[string]float64{}}
		for i, v := range c.kinds {
			if v > 0 {
				cause.DirectKinds[Kind(i).String()] = v
			}
		}
		if res.Waiting > 0 {
			cause.Share = cause.Cost / res.Waiting
		}
		res.Causes = append(res.Causes, cause)
	}
	sortCauses(res.Causes)
	for _, c := range res.Causes {
		res.RankCost[c.Rank] += c.Cost
		total += c.Cost
	}
	res.Unexplained = max(res.Waiting-total, 0)
	if opt.Waits {
		slices.SortStableFunc(res.Waits, func(x, y Wait) int {
			if x.Start != y.Start {
				if x.Start < y.Start {
					return -1
				}
				return 1
			}
			return int(x.Rank - y.Rank)
		})
	}
	res.Runtime, res.RankTime = a.runtime()
	for r := range a.ranks {
		res.Alltoallv += a.ranks[r].alltoallv.Seconds()
	}
	return res
}

// handle charges wait state e of rank w to the delays of its causer over
// their synchronization interval, passes the part that propagated on to
// the causer's own wait states, and returns the wait state's direct and
// indirect parts (seconds).
func (a *analyzer) handle(w int32, e *entry, charged map[causeKey]*charge) (direct, indirect float64) {
	c := e.causer
	nacts := len(a.acts.list)
	a.tc.reset(nacts)
	a.tw.reset(nacts)
	prop := a.interval(c, e.causerCall, w, &a.tc)
	a.interval(w, e.call, c, &a.tw)
	var delay, waits trace.Time
	for _, k := range a.tc.touched {
		delay += max(a.tc.get(k)-a.tw.get(k), 0)
	}
	for _, i := range prop {
		waits += a.entries[c][i].wait
	}
	if delay+waits <= 0 {
		return 0, 0
	}
	dw := (delay + waits).Seconds()
	short := min(e.wait.Seconds()/dw, 1)
	long := e.cost / dw
	for _, k := range a.tc.touched {
		d := max(a.tc.get(k)-a.tw.get(k), 0).Seconds()
		if d <= 0 {
			continue
		}
		ch := charged[causeKey{c, k}]
		if ch == nil {
			ch = &charge{}
			charged[causeKey{c, k}] = ch
		}
		ch.direct += short * d
		ch.propagated += long * d
		ch.kinds[e.kind] += short * d
	}
	for _, i := range prop {
		v := &a.entries[c][i]
		v.cost += (short + long) * v.wait.Seconds()
	}
	return short * delay.Seconds(), short * waits.Seconds()
}

// interval folds the time of rank r by activity from its previous
// synchronization point with peer to the enter of call: the previous
// point's completion time (or, from the start of the trace, the rank's
// late start), every event between and the computation leading to call,
// less the wait states between, whose entries it returns.
func (a *analyzer) interval(r int32, call int32, peer int32, m *timeMap) []int32 {
	es := a.entries[r]
	i := sort.Search(len(es), func(i int) bool { return es[i].call >= call }) - 1
	var waits []int32
	for walked := 0; i >= 0 && !a.with(&es[i], peer); i-- {
		if walked++; walked > walkLimit {
			i, waits = a.lastWith(r, i, peer, waits)
			break
		}
		if es[i].wait > 0 {
			waits = append(waits, int32(i))
		}
	}
	spans := a.ranks[r].spans
	from := int32(0)
	if i < 0 {
		m.add(a.startUp, a.firsts[r]-a.origin)
	} else {
		p := &es[i]
		m.add(spans[p.call].act, p.completion)
		from = p.call + 1
		kept := waits[:0]
		for _, j := range waits {
			if es[j].call > p.call {
				kept = append(kept, j)
			}
		}
		waits = kept
	}
	comp := a.acts.comp
	if int(call-from) > walkLimit {
		a.times(r).add(m, from, call)
	} else {
		for k := from; k < call; k++ {
			s := &spans[k]
			m.add(comp[s.act], s.gap())
			m.add(s.act, s.busy())
		}
	}
	m.add(comp[spans[call].act], spans[call].gap())
	for _, j := range waits {
		m.add(spans[es[j].call].act, -es[j].wait)
	}
	return waits
}

// runtime returns the span of the trace and the ranks' time together.
func (a *analyzer) runtime() (span, ranks float64) {
	first, last := trace.Time(0), trace.Time(0)
	seen := false
	for r := range a.ranks {
		s := a.ranks[r].spans
		lo, hi, ok := timedBounds(s)
		if !ok {
			continue
		}
		ranks += (hi - lo).Seconds()
		if !seen || lo < first {
			first = lo
		}
		if !seen || hi > last {
			last = hi
		}
		seen = true
	}
	return (last - first).Seconds(), ranks
}

// timedBounds returns the first enter and the last end of a rank's timed
// events. The first enter is the first timed span's start where that is
// earlier: the enter of the calls a wait took (polls, probes: see poll)
// that were the rank's first.
func timedBounds(s []span) (lo, hi trace.Time, ok bool) {
	for i := range s {
		if s[i].flags&untimed == 0 {
			if !ok {
				lo = min(s[i].enter, s[i].start)
			}
			hi, ok = max(hi, s[i].end()), true
		}
	}
	return lo, hi, ok
}
