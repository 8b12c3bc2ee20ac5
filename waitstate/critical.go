package waitstate

import (
	"slices"
	"sort"
	"strings"

	"kairos/trace"
)

// criticalPath follows the run back from the rank that ended last: on a
// rank, back to its latest wait state, then on the rank that caused it,
// from the moment that rank reached the synchronization point.
func (a *analyzer) criticalPath() CriticalPath {
	start, end := int32(-1), trace.Time(0)
	for r := range a.ranks {
		if _, hi, ok := timedBounds(a.ranks[r].spans); ok && (start < 0 || hi > end) {
			start, end = int32(r), hi
		}
	}
	if start < 0 {
		return CriticalPath{Ranks: []PathRank{}, Activities: []PathActivity{}}
	}
	on := map[causeKey]trace.Time{}
	add := func(r int32, act uint32, t trace.Time) {
		if t > 0 {
			on[causeKey{r, act}] += t
		}
	}
	comp := a.acts.comp
	used := map[[2]int32]bool{}
	// The path runs on rank r up to call hi, and up to time limit: where
	// a clock-condition violation made a wait end before its causer
	// arrived, the causer's time past the end is not counted twice.
	r, hi, limit := start, int32(len(a.ranks[start].spans)), end
	clip := func(from, to trace.Time) trace.Time { return max(min(to, limit)-from, 0) }
	for {
		spans, es := a.ranks[r].spans, a.entries[r]
		i := sort.Search(len(es), func(i int) bool { return es[i].call >= hi }) - 1
		for i >= 0 && es[i].wait == 0 {
			i--
		}
		from := int32(0)
		if i >= 0 && !used[[2]int32{r, int32(i)}] {
			e := &es[i]
			s := &spans[e.call]
			add(r, s.act, clip(max(s.enter, s.start)+e.wait, s.end()))
			from = e.call + 1
		}
		for k := from; k < hi; k++ {
			s := &spans[k]
			add(r, comp[s.act], clip(s.start, max(s.enter, s.start)))
			add(r, s.act, clip(max(s.enter, s.start), s.end()))
		}
		if hi < int32(len(spans)) {
			s := &spans[hi]
			add(r, comp[s.act], clip(s.start, max(s.enter, s.start)))
		}
		if from == 0 {
			add(r, a.startUp, clip(a.origin, a.firsts[r]))
			break
		}
		e := &es[i]
		used[[2]int32{r, int32(i)}] = true
		limit = min(limit, a.span(r, e.call).enter+e.wait)
		r, hi = e.causer, e.causerCall
	}
	return a.pathProfile(on)
}

// pathProfile sums the critical path by rank and by activity, and
// compares each activity with its mean non-waiting time per rank.
func (a *analyzer) pathProfile(on map[causeKey]trace.Time) CriticalPath {
	cp := CriticalPath{Ranks: []PathRank{}, Activities: []PathActivity{}}
	byRank := map[int32]trace.Time{}
	byAct := map[uint32]trace.Time{}
	var length trace.Time
	for k, t := range on {
		byRank[k.rank] += t
		byAct[k.act] += t
		length += t
	}
	cp.Seconds = length.Seconds()
	for r, t := range byRank {
		cp.Ranks = append(cp.Ranks, PathRank{Rank: r, Seconds: t.Seconds()})
	}
	slices.SortFunc(cp.Ranks, func(x, y PathRank) int {
		if x.Seconds != y.Seconds {
			if x.Seconds > y.Seconds {
				return -1
			}
			return 1
		}
		return int(x.Rank - y.Rank)
	})
	mean := a.meanTimes()
	for k, t := range byAct {
		act, path := a.name(k)
		m := mean[k].Seconds() / float64(len(a.ranks))
		cp.Activities = append(cp.Activities, PathActivity{Activity: act, CallPath: path, Seconds: t.Seconds(),
			Mean: m, Imbalance: max(t.Seconds()-m, 0)})
	}
	slices.SortFunc(cp.Activities, func(x, y PathActivity) int {
		if x.Seconds != y.Seconds {
			if x.Seconds > y.Seconds {
				return -1
			}
			return 1
		}
		return strings.Compare(x.CallPath+x.Activity, y.CallPath+y.Activity)
	})
	return cp
}

// meanTimes returns every activity's non-waiting time over all the ranks.
func (a *analyzer) meanTimes() map[uint32]trace.Time {
	sum := map[uint32]trace.Time{}
	comp := a.acts.comp
	for r := range a.ranks {
		sum[a.startUp] += a.firsts[r] - a.origin
		spans := a.ranks[r].spans
		for i := range spans {
			sum[comp[spans[i].act]] += spans[i].gap()
			sum[spans[i].act] += spans[i].busy()
		}
		for _, e := range a.entries[r] {
			sum[spans[e.call].act] -= e.wait
		}
	}
	for k, t := range sum {
		sum[k] = max(t, 0)
	}
	return sum
}
