package stats

import (
	"sort"

	"kairos/trace"
)

// CallTime is the time a timed trace spends in one kind of MPI call: a
// line of the flat profile mpiP, Cube's call tree at depth one and Pipit's
// flat_profile give, with the spread over ranks that shows load imbalance
// (a wait that is long on some ranks and short on others).
type CallTime struct {
	Call  string `json:"call"`
	Calls int64  `json:"calls"`
	Spread
}

// Spread is a time summed over ranks and its spread over them.
type Spread struct {
	// Seconds is the time summed over ranks.
	Seconds float64 `json:"seconds"`
	// MinRankSeconds, MeanRankSeconds and MaxRankSeconds are the least,
	// mean and most time one rank spent (ranks that spent none count as
	// 0); MaxRank is the rank with the most (the lowest such rank on
	// ties).
	MinRankSeconds  float64 `json:"min_rank_seconds"`
	MeanRankSeconds float64 `json:"mean_rank_seconds"`
	MaxRankSeconds  float64 `json:"max_rank_seconds"`
	MaxRank         int     `json:"max_rank"`
}

// Imbalance is the most loaded rank's time over the mean (Scalasca's
// load imbalance): what balancing this time alone would save the run at
// most.
func (s Spread) Imbalance() float64 { return s.MaxRankSeconds - s.MeanRankSeconds }

// spreadOf returns the spread of sum seconds over ranks, the least and
// most of one rank.
func spreadOf(sum, least, most float64, mostRank, ranks int) Spread {
	return Spread{Seconds: sum, MinRankSeconds: least, MeanRankSeconds: sum / float64(ranks), MaxRankSeconds: most, MaxRank: mostRank}
}

// profile accumulates the flat profile one rank at a time, so that its
// memory does not grow with ranks. A call the trace names (Meta.MPIFunction: an
// MPI_Iprobe, an MPI_Comm_rank) has its own line, not its kind's.
type profile struct {
	ranks   int
	empty   int // of the ranks, those without events (see skip)
	first   int // the lowest of them
	calls   [trace.NumKinds]int64
	sum     [trace.NumKinds]float64
	min     [trace.NumKinds]float64
	max     [trace.NumKinds]float64
	maxRank [trace.NumKinds]int
	named   map[string]*namedLine
}

// namedLine is the profile of a call by name.
type namedLine struct {
	calls         int64
	sum, min, max float64
	maxRank       int
}

// rankTimes is one rank's time and calls by kind, and by name for the
// calls the trace names.
type rankTimes struct {
	paths   rankPaths // and by activity and call path
	calls   [trace.NumKinds]int64
	seconds [trace.NumKinds]float64
	named   map[string]*callSum
	last    string // the name of the last named call, and its sum (a cache)
	lastSum *callSum
}

type callSum struct {
	calls   int64
	seconds float64
}

// add counts e, named name if not "".
func (rt *rankTimes) add(e *trace.Event, name string) {
	if !e.HasTime || !e.Kind.IsMPI() {
		return
	}
	if name == "" {
		rt.calls[e.Kind]++
		rt.seconds[e.Kind] += e.Duration().Seconds()
		return
	}
	if rt.lastSum == nil || name != rt.last {
		if rt.named == nil {
			rt.named = map[string]*callSum{}
		}
		cs := rt.named[name]
		if cs == nil {
			cs = &callSum{}
			rt.named[name] = cs
		}
		rt.last, rt.lastSum = name, cs
	}
	rt.lastSum.calls++
	rt.lastSum.seconds += e.Duration().Seconds()
}

// fold adds rank r's times.
func (p *profile) fold(r int, rt *rankTimes) {
	for k := range rt.seconds {
		v := rt.seconds[k]
		p.calls[k] += rt.calls[k]
		p.sum[k] += v
		if p.ranks == 0 || v < p.min[k] {
			p.min[k] = v
		}
		if p.ranks == 0 || v > p.max[k] {
			p.max[k], p.maxRank[k] = v, r
		}
	}
	for name, cs := range rt.named {
		if p.named == nil {
			p.named = map[string]*namedLine{}
		}
		if p.named[name] == nil {
			// The ranks before, if any, had none of it: least 0, most 0
			// at the lowest of them.
			l := &namedLine{}
			if p.ranks == 0 {
				l.min, l.max, l.maxRank = cs.seconds, cs.seconds, r
			}
			p.named[name] = l
		}
	}
	for name, l := range p.named {
		var v float64
		if cs := rt.named[name]; cs != nil {
			v = cs.seconds
			l.calls += cs.calls
			l.sum += v
		}
		l.min = min(l.min, v)
		if v > l.max {
			l.max, l.maxRank = v, r
		}
	}
	p.ranks++
}

// skip adds rank r, which has no events, as fold would, in constant time.
func (p *profile) skip(r int) {
	if p.empty == 0 {
		p.first = r
	}
	p.empty++
	p.ranks++
}

// withEmpty counts in ct the ranks without events (skip): none of their
// time, the lowest of them the most loaded on a tie at 0.
func (p *profile) withEmpty(ct CallTime) CallTime {
	if p.empty > 0 {
		ct.MinRankSeconds = 0
		if ct.MaxRankSeconds == 0 {
			ct.MaxRank = min(ct.MaxRank, p.first)
		}
	}
	return ct
}

// lines returns the kinds that were called, most time first (then by
// name).
func (p *profile) lines() []CallTime {
	out := []CallTime{}
	for k, c := range p.calls {
		if c == 0 {
			continue
		}
		ct := CallTime{Call: trace.Kind(k).String(), Calls: c, Spread: spreadOf(p.sum[k], p.min[k], p.max[k], p.maxRank[k], p.ranks)}
		out = append(out, p.withEmpty(ct))
	}
	for name, l := range p.named {
		ct := CallTime{Call: name, Calls: l.calls, Spread: spreadOf(l.sum, l.min, l.max, l.maxRank, p.ranks)}
		out = append(out, p.withEmpty(ct))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seconds != out[j].Seconds {
			return out[i].Seconds > out[j].Seconds
		}
		return out[i].Call < out[j].Call
	})
	return out
}
