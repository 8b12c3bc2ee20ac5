package waitstate

import (
	"slices"

	"kairos/trace"
)

// Long intervals. A wait state is charged over the synchronization
// interval of its pair: from their last synchronization point to it. Where
// a rank synchronizes with each of many others in turn (a master and its
// workers), an interval spans about an event for every other rank, and
// walking it for each wait state made the analysis quadratic in the ranks
// (a master and 16,383 workers: 40% of kairos report's time). Past
// walkLimit entries or spans, a rank's intervals are read from indexes
// made for it once: its synchronization points by peer, its wait states,
// and its time by activity cumulated along its spans. The times are
// integers (picoseconds), so their sums are the walk's to the bit.

// walkLimit is the number of entries or spans walked before an index is
// made and read instead (a variable that tests set).
var walkLimit = 64

// rankIndex is a rank's synchronization points and wait states, by the
// position of their entries.
type rankIndex struct {
	byPeer map[int32][]int32 // point-to-point points, per peer
	groups []int32           // points with a group of ranks
	waits  []int32           // wait states
}

// index returns rank r's rankIndex, made at its first use.
func (a *analyzer) index(r int32) *rankIndex {
	if a.indexes == nil {
		a.indexes = make([]*rankIndex, len(a.entries))
	}
	if x := a.indexes[r]; x != nil {
		return x
	}
	x := &rankIndex{byPeer: map[int32][]int32{}}
	for i, e := range a.entries[r] {
		if e.peer >= 0 {
			x.byPeer[e.peer] = append(x.byPeer[e.peer], int32(i))
		}
		if e.group >= 0 {
			x.groups = append(x.groups, int32(i))
		}
		if e.wait > 0 {
			x.waits = append(x.waits, int32(i))
		}
	}
	a.indexes[r] = x
	return x
}

// lastWith returns the position of rank r's last entry up to i that
// synchronizes with peer, -1 if none, and appends to waits those of its
// wait states after it, up to i, latest first (as the walk does).
func (a *analyzer) lastWith(r int32, i int, peer int32, waits []int32) (int, []int32) {
	x, es := a.index(r), a.entries[r]
	last := -1
	if ps := x.byPeer[peer]; len(ps) > 0 {
		if k := upTo(ps, i); k >= 0 {
			last = int(ps[k])
		}
	}
	for k := upTo(x.groups, i); k >= 0 && int(x.groups[k]) > last; k-- {
		if a.with(&es[x.groups[k]], peer) {
			last = int(x.groups[k])
			break
		}
	}
	hi := upTo(x.waits, i)
	for k := hi; k >= 0 && int(x.waits[k]) > last; k-- {
		waits = append(waits, x.waits[k])
	}
	return last, waits
}

// upTo returns the position in the sorted list of the last element not
// above i, -1 if none.
func upTo(list []int32, i int) int {
	k, found := slices.BinarySearch(list, int32(i))
	if found {
		return k
	}
	return k - 1
}

// rankTimes is a rank's time by activity cumulated along its spans: for
// each activity it has, the spans where it takes time and its time up to
// each of them, included.
type rankTimes struct {
	acts []uint32
	at   [][]int32
	cum  [][]trace.Time
}

// times returns rank r's rankTimes, made at its first use.
func (a *analyzer) times(r int32) *rankTimes {
	if a.cumul == nil {
		a.cumul = make([]*rankTimes, len(a.ranks))
	}
	if t := a.cumul[r]; t != nil {
		return t
	}
	t := &rankTimes{}
	pos := map[uint32]int{}
	add := func(i int, k uint32, d trace.Time) {
		if d == 0 {
			return
		}
		j, ok := pos[k]
		if !ok {
			j = len(t.acts)
			pos[k] = j
			t.acts, t.at, t.cum = append(t.acts, k), append(t.at, nil), append(t.cum, nil)
		}
		sum := d
		if n := len(t.cum[j]); n > 0 {
			sum += t.cum[j][n-1]
		}
		t.at[j], t.cum[j] = append(t.at[j], int32(i)), append(t.cum[j], sum)
	}
	comp := a.acts.comp
	for i := range a.ranks[r].spans {
		s := &a.ranks[r].spans[i]
		add(i, comp[s.act], s.gap())
		add(i, s.act, s.busy())
	}
	a.cumul[r] = t
	return t
}

// add adds to m the time of each activity over spans [from, to).
func (t *rankTimes) add(m *timeMap, from, to int32) {
	for j, k := range t.acts {
		m.add(k, t.before(j, to)-t.before(j, from))
	}
}

// before returns the time of activity j over the spans before i.
func (t *rankTimes) before(j int, i int32) trace.Time {
	n, _ := slices.BinarySearch(t.at[j], i) // the spans before i
	if n == 0 {
		return 0
	}
	return t.cum[j][n-1]
}
