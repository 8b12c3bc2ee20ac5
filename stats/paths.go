package stats

import (
	"fmt"
	"sort"
	"strings"

	"kairos/trace"
)

// PathTime is the time a timed trace spends in one activity, computation
// or an MPI function, at one call path of the program's own functions:
// a line of the call-path profile Cube shows (its time metric over the
// call tree, with the spread over the system tree) and Pipit's
// flat_profile by function gives. The time between two calls is the
// computation of the second call's caller (Scalasca's convention, as the
// wait-state analysis takes it).
type PathTime struct {
	// Path is the call path of the program's functions, outermost first,
	// "/"-separated ("" for calls outside any function the trace names).
	Path     string `json:"path"`
	Activity string `json:"activity"`
	Calls    int64  `json:"calls"`
	Spread
}

// pathKey is an activity at a call path: the caller's region and the
// activity, a kind (computation, an MPI call known by its kind) or
// NumKinds + the region of an MPI function the trace names (an
// MPI_Comm_rank, an MPI_File_write_at_all).
type pathKey uint64

func newPathKey(caller uint32, act uint32) pathKey { return pathKey(caller)<<32 | pathKey(act) }

func (k pathKey) caller() uint32 { return uint32(k >> 32) }
func (k pathKey) act() uint32    { return uint32(k) }

// pathAt returns the key of timed event e's own time.
func pathAt(meta *trace.Meta, e *trace.Event) pathKey {
	if e.Kind == trace.Sleep {
		return newPathKey(e.Region, uint32(trace.Compute))
	}
	if meta.MPIFunction(e) != "" {
		return newPathKey(meta.Regions[e.Region].Parent, uint32(trace.NumKinds)+e.Region)
	}
	return newPathKey(e.Region, uint32(e.Kind))
}

// pathCost is one rank's time and calls at an activity.
type pathCost struct {
	seconds float64
	calls   int64
}

// rankPaths is one rank's time by activity and call path.
type rankPaths struct {
	costs   map[pathKey]*pathCost
	started bool
	last    trace.Time // the end of the events so far
	// recent is, by kind, the caller and cost last looked up: a rank
	// makes each kind of call from a few places, mostly from the one
	// before, so that most events need no look-up in costs.
	recent [trace.NumKinds]struct {
		caller uint32
		c      *pathCost
	}
	// named is the key and cost last looked up of an activity recent
	// does not hold (an MPI function named by its region: a polling
	// loop's MPI_Testany, millions in a row).
	namedKey pathKey
	named    *pathCost
}

// add counts timed event e: the time since the events before as
// computation of its caller, and its own, but for the part that overlaps
// the events before (a rank's time is counted once).
func (rp *rankPaths) add(meta *trace.Meta, e *trace.Event) {
	if !e.HasTime {
		return
	}
	k := pathAt(meta, e)
	enter := e.Enter
	if rp.started {
		if enter > rp.last {
			rp.cost(newPathKey(k.caller(), uint32(trace.Compute))).seconds += (enter - rp.last).Seconds()
		}
		enter = max(enter, rp.last)
	}
	c := rp.cost(k)
	c.calls++
	if e.Exit > enter {
		c.seconds += (e.Exit - enter).Seconds()
	}
	if !rp.started || e.Exit > rp.last {
		rp.last = e.Exit
	}
	rp.started = true
}

func (rp *rankPaths) cost(k pathKey) *pathCost {
	if a := k.act(); a < uint32(len(rp.recent)) {
		r := &rp.recent[a]
		if r.c == nil || r.caller != k.caller() {
			r.caller, r.c = k.caller(), rp.lookup(k)
		}
		return r.c
	}
	if rp.named == nil || rp.namedKey != k {
		rp.namedKey, rp.named = k, rp.lookup(k)
	}
	return rp.named
}

// lookup returns the rank's cost at k, made if new.
func (rp *rankPaths) lookup(k pathKey) *pathCost {
	if rp.costs == nil {
		rp.costs = map[pathKey]*pathCost{}
	}
	c := rp.costs[k]
	if c == nil {
		c = &pathCost{}
		rp.costs[k] = c
	}
	return c
}

// pathProfile accumulates the call-path profile one rank at a time: its
// memory grows with the activities, not with the ranks.
type pathProfile struct {
	ranks int
	lines map[pathKey]*pathLine
}

// pathLine is an activity's profile over the ranks folded so far; n
// counts the ranks that spent time in it, min is the least of theirs.
type pathLine struct {
	calls    int64
	sum      float64
	min, max float64
	maxRank  int
	n        int
}

// fold adds rank r's times.
func (p *pathProfile) fold(r int, rp *rankPaths) {
	for k, c := range rp.costs {
		if p.lines == nil {
			p.lines = map[pathKey]*pathLine{}
		}
		l := p.lines[k]
		if l == nil {
			l = &pathLine{min: c.seconds, maxRank: r}
			p.lines[k] = l
		}
		l.calls += c.calls
		l.sum += c.seconds
		l.min = min(l.min, c.seconds)
		if c.seconds > l.max {
			l.max, l.maxRank = c.seconds, r
		}
		l.n++
	}
	p.ranks++
}

// paths returns the profile's lines, most time first, their paths named
// from meta.
func (p *pathProfile) paths(meta *trace.Meta) []PathTime {
	var out []PathTime
	for k, l := range p.lines {
		pt := PathTime{Path: strings.Join(meta.CallPath(k.caller()), "/"), Activity: activityName(meta, k.act()),
			Calls: l.calls, Spread: spreadOf(l.sum, l.min, l.max, l.maxRank, p.ranks)}
		if l.n < p.ranks {
			pt.MinRankSeconds = 0
		}
		out = append(out, pt)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Seconds != b.Seconds:
			return a.Seconds > b.Seconds
		case a.Path != b.Path:
			return a.Path < b.Path
		}
		return a.Activity < b.Activity
	})
	return out
}

// activityName names activity act of a pathKey.
func activityName(meta *trace.Meta, act uint32) string {
	if act >= uint32(trace.NumKinds) {
		return meta.RegionName(act - uint32(trace.NumKinds))
	}
	k := trace.Kind(act)
	switch {
	case k == trace.Compute:
		return "computation"
	case k.MPIName() != "":
		return k.MPIName()
	}
	return k.String()
}

// CallPaths returns the call-path profile of a timed run alone (Collect
// makes it with the rest): a report's of a simulated run.
func CallPaths(src trace.Source) ([]PathTime, error) {
	var p pathProfile
	meta := src.Meta()
	for r := range src.NumRanks() {
		rd, err := src.OpenRank(r)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		var rp rankPaths
		for rd.Next() {
			rp.add(meta, rd.Event())
		}
		err = rd.Err()
		rd.Close()
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		p.fold(r, &rp)
	}
	return p.paths(meta), nil
}
