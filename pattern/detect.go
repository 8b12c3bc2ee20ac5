package pattern

import (
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"kairos/trace"
)

// CommPattern is a communication pattern: a set of process patterns whose
// instances exchange messages or take part in the same collectives
// (Table 3 of the paper).
type CommPattern struct {
	ID        int      `json:"id"`        // 1-based: CP1, CP2... in order of first appearance in the sequence
	Process   []int    `json:"process"`   // IDs of its first instance's process patterns, ascending (with repeats)
	Words     []string `json:"words"`     // per rank, "P<rank>:" and its first maxWord calls, in rank order
	Functions []string `json:"functions"` // user functions of its first instance's calls
	Ranks     int      `json:"ranks"`     // processes involved
	Events    int      `json:"events"`    // calls per instance
	Frequency int      `json:"frequency"` // instances in the trace
}

// maxWord bounds the calls of a rank a CommPattern's word lists.
const maxWord = 16

// Name returns "CP" and the pattern's number.
func (c *CommPattern) Name() string { return "CP" + itoa(c.ID) }

// EventRef names one call of an instance.
type EventRef struct {
	Rank     int32      `json:"rank"`
	Index    int32      `json:"index"` // index in the rank's event stream
	Kind     trace.Kind `json:"-"`
	Op       string     `json:"op"`
	Duration trace.Time `json:"duration_ps"` // picoseconds
}

// Instance is one occurrence of a communication pattern: an element of
// the pattern sequence (Table 4). Times are in picoseconds and are zero
// in an untimed trace.
type Instance struct {
	Pattern  int        `json:"pattern"`  // CP number
	Position int        `json:"position"` // 1-based position in the sequence
	Ranks    []int32    `json:"ranks"`
	Events   int        `json:"events"`
	Bytes    int64      `json:"bytes"` // bytes sent by its calls
	Start    trace.Time `json:"start_ps"`
	Finish   trace.Time `json:"finish_ps"`
	// FirstStart and LastStart are the ranks whose first call in the
	// instance begins first and last; FirstFinish and LastFinish the
	// ranks whose last call ends first and last.
	FirstStart  int32 `json:"first_start"`
	LastStart   int32 `json:"last_start"`
	FirstFinish int32 `json:"first_finish"`
	LastFinish  int32 `json:"last_finish"`
	// LastStartOp is the call of the last rank to start that decides
	// its lateness: its first collective (a late process), else its first
	// send (a late sender: the others wait for its messages), else its
	// first receive (a late receiver).
	LastStartOp string `json:"last_start_op"`
	lastKind    trace.Kind
	Slowest     EventRef `json:"slowest"`
	Shortest    EventRef `json:"shortest"`
	Regions     []uint32 `json:"regions"` // user functions (call-path regions) of its calls
}

// Duration returns Finish - Start.
func (in *Instance) Duration() trace.Time { return in.Finish - in.Start }

// Lateness classifies the instance's delay by its last process to start
// (Section 4.2): "late sender", "late receiver" or "late process"; ""
// for an instance of one process (a collective on a communicator of one:
// no other waits for it).
func (in *Instance) Lateness() string {
	switch {
	case len(in.Ranks) < 2:
		return ""
	case in.lastKind.IsCollective():
		return "late process"
	case in.lastKind.IsSend() || in.lastKind == trace.SendRecv:
		return "late sender"
	case in.lastKind.IsRecv():
		return "late receiver"
	}
	return ""
}

// StepTimes are the wall-clock times of the analysis steps.
type StepTimes struct {
	Read     time.Duration `json:"read"`     // reading the trace
	Process  time.Duration `json:"process"`  // step 1: process patterns
	Comm     time.Duration `json:"comm"`     // step 2: communication patterns and sequence
	Phases   time.Duration `json:"phases"`   // step 3
	Slow     time.Duration `json:"slow"`     // step 4
	Classify time.Duration `json:"classify"` // step 5
}

// Patterns is what steps 1 and 2 find in a trace.
type Patterns struct {
	Method    Method // how the calls were cut into contexts
	Ranks     int
	Timed     bool // every communication call has timestamps
	Process   []ProcessPattern
	Comm      []CommPattern
	Sequence  []Instance
	Unmatched int // sends and receives left without a partner
	Times     StepTimes
	meta      *trace.Meta
}

// Symbols returns the pattern sequence as CP numbers.
func (p *Patterns) Symbols() []int32 {
	s := make([]int32, len(p.Sequence))
	for i := range p.Sequence {
		s[i] = int32(p.Sequence[i].Pattern)
	}
	return s
}

// Function returns the name of the user function of region id.
func (p *Patterns) Function(id uint32) string {
	if p.meta == nil {
		return ""
	}
	return p.meta.RegionName(id)
}

// maxFirstHint bounds the calls the first rank's arrays are made for
// from its source's count (48 MB of events): a file may claim any count.
const maxFirstHint = 1 << 20

// Detect runs steps 1 and 2 with the default method, Iterations.
func Detect(src trace.Source) (*Patterns, error) { return DetectMethod(src, Iterations) }

// DetectMethod runs steps 1 and 2: it cuts every rank's communication
// calls into process patterns (with method m), links them through matched
// messages and collectives into communication pattern instances, and
// orders the instances by happened-before (their first call's Enter in a
// timed trace, a Lamport clock otherwise; ties go to the lower rank).
func DetectMethod(src trace.Source, m Method) (*Patterns, error) {
	t0 := time.Now()
	n := src.NumRanks()
	syms := &symbols{ids: map[symKey]int32{}}
	ranks := make([]rankData, n)
	p := &Patterns{Method: m, Ranks: n, Timed: true, meta: src.Meta()}
	// Each rank's calls are about as many as the last one's; the first
	// rank's, where its source counts its events, about half of them (a
	// call and the computation before it), so that a rank of millions of
	// calls is not grown a quarter at a time, each growth copying it. The
	// count is what a file claims: the hint stops at maxFirstHint.
	hint := int(min(max(trace.RankEvents(src, 0)/2, 0), maxFirstHint))
	for r := range ranks {
		rd, err := readRank(src, r, syms, hint+hint/8)
		if err != nil {
			return nil, err
		}
		ranks[r] = rd
		hint = len(rd.ev)
		p.Timed = p.Timed && rd.timed
	}
	t1 := time.Now()
	tiles := cutRanks(ranks, syms.keys, m)
	l := match(ranks, syms.keys)
	if m == Iterations {
		refine(ranks, tiles, l, syms.keys, len(syms.keys))
		align(ranks, tiles, l, syms.keys)
	}
	for r := range ranks {
		ranks[r].open = nil // the iterations are cut
	}
	p.Process = processPatterns(ranks, tiles, syms, src.Meta())
	t2 := time.Now()
	p.Unmatched = l.unmatched
	if !p.Timed {
		lamport(ranks, l, syms.keys)
	}
	// Without timestamps, enter now holds Lamport clocks; the instances'
	// times stay zero (build reads them only when Timed).
	d, base, tileOf := group(ranks, tiles, l, syms.keys)
	d = unchain(d, ranks, base, tileOf, l, syms.keys)
	p.build(ranks, tiles, d, base, syms.keys)
	p.Times.Read, p.Times.Process, p.Times.Comm = t1.Sub(t0), t2.Sub(t1), time.Since(t2)
	return p, nil
}

// build makes the instances from the union-find components, orders them
// and numbers the communication patterns.
func (p *Patterns) build(ranks []rankData, tiles [][]tile, d dsu, base []int32, keys []symKey) {
	nt := len(d)
	tileRank := make([]int32, nt)
	for r := range ranks {
		for t := base[r]; t < base[r+1]; t++ {
			tileRank[t] = int32(r)
		}
	}
	comp := make([]int32, nt) // component number of each root
	for i := range comp {
		comp[i] = -1
	}
	nc := int32(0)
	size := []int32{}
	for t := int32(0); t < int32(nt); t++ {
		root := d.find(t)
		if comp[root] < 0 {
			comp[root] = nc
			nc++
			size = append(size, 0)
		}
		size[comp[root]]++
	}
	// members[c] lists component c's tiles in tile order, in one array.
	flat := make([]int32, nt)
	off := make([]int32, nc+1)
	for c := range size {
		off[c+1] = off[c] + size[c]
	}
	fill := append([]int32{}, off[:nc]...)
	for t := int32(0); t < int32(nt); t++ {
		c := comp[d.find(t)]
		flat[fill[c]] = t
		fill[c]++
	}
	members := make([][]int32, nc)
	for c := range members {
		members[c] = flat[off[c]:off[c+1]:off[c+1]]
	}
	ikeys := make([]instKey, len(members))
	for c, ts := range members {
		for i, t := range ts {
			r := tileRank[t]
			e := &ranks[r].ev[tiles[r][t-base[r]].start]
			k := instKey{int64(e.enter), r, e.pos}
			if i == 0 || k.less(ikeys[c]) {
				ikeys[c] = k
			}
		}
	}
	order := make([]int32, len(members))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		switch {
		case ikeys[a].less(ikeys[b]):
			return -1
		case ikeys[b].less(ikeys[a]):
			return 1
		}
		return 0
	})
	cpOf := map[string]int{}
	sc := newScratch(len(ranks))
	p.Sequence = make([]Instance, 0, len(order))
	for _, c := range order {
		in := sc.instance(ranks, tiles, base, tileRank, members[c], p.Timed, keys)
		key := sc.cpKey(ranks, tiles, base, tileRank, members[c])
		id, ok := cpOf[key]
		if !ok {
			id = len(p.Comm) + 1
			cpOf[key] = id
			p.Comm = append(p.Comm, p.newComm(id, ranks, tiles, base, tileRank, members[c], in.Events))
		}
		p.Comm[id-1].Frequency++
		in.Pattern, in.Position = id, len(p.Sequence)+1
		p.Sequence = append(p.Sequence, in)
	}
}

// instKey orders instances: by their earliest call's happened-before
// key, then rank, then position.
type instKey struct {
	order int64
	rank  int32
	pos   int32
}

func (a instKey) less(b instKey) bool {
	if a.order != b.order {
		return a.order < b.order
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.pos < b.pos
}

// cpKey identifies an instance's pattern: each rank's calls as a sorted
// multiset, ranks in order. Two instances whose ranks make the same calls
// in a different order are the same pattern, as in the authors' tool
// (this gives the paper's 25 patterns for SMG2000 on 4 processes, where
// telling orders apart gives 32).
func (sc *scratch) cpKey(ranks []rankData, tiles [][]tile, base, tileRank []int32, ts []int32) string {
	calls := sc.calls[:0]
	for _, t := range ts {
		r := tileRank[t]
		tl := tiles[r][t-base[r]]
		for _, e := range ranks[r].ev[tl.start:tl.end] {
			calls = append(calls, uint64(r)<<32|uint64(uint32(e.sym)))
		}
	}
	slices.Sort(calls)
	b := sc.key[:0]
	for _, c := range calls {
		b = binary.LittleEndian.AppendUint64(b, c)
	}
	sc.calls, sc.key = calls, b
	return string(b)
}

func (p *Patterns) newComm(id int, ranks []rankData, tiles [][]tile, base, tileRank []int32, ts []int32, events int) CommPattern {
	c := CommPattern{ID: id, Events: events}
	words := map[int32][]string{}
	var rs []int32
	for _, t := range ts {
		r := tileRank[t]
		pt := &p.Process[tiles[r][t-base[r]].pt]
		c.Process = append(c.Process, pt.ID)
		if _, ok := words[r]; !ok {
			rs = append(rs, r)
		}
		words[r] = append(words[r], pt.Symbols...)
		if pt.Function != "" && !slices.Contains(c.Functions, pt.Function) {
			c.Functions = append(c.Functions, pt.Function)
		}
	}
	slices.Sort(c.Process)
	slices.Sort(rs)
	for _, r := range rs {
		w := words[r]
		more := ""
		if len(w) > maxWord {
			// A real code's pattern can hold thousands of calls a rank:
			// its word is a summary, not a listing.
			w, more = w[:maxWord], "·… (+"+itoa(len(w)-maxWord)+" calls)"
		}
		c.Words = append(c.Words, "P"+itoa(int(r))+":"+strings.Join(w, "·")+more)
	}
	c.Ranks = len(rs)
	return c
}

// scratch holds per-rank accumulators reused across instances.
type scratch struct {
	start, finish []trace.Time
	kind          []trace.Kind // each rank's call that decides lateness (see LastStartOp)
	seen          []bool
	touched       []int32
	calls         []uint64
	key           []byte
}

func newScratch(n int) *scratch {
	return &scratch{start: make([]trace.Time, n), finish: make([]trace.Time, n), kind: make([]trace.Kind, n), seen: make([]bool, n)}
}

// instance summarises the calls of the tiles ts.
func (sc *scratch) instance(ranks []rankData, tiles [][]tile, base, tileRank []int32, ts []int32, timed bool, keys []symKey) Instance {
	var in Instance
	sc.touched = sc.touched[:0]
	firstCall := true
	for _, t := range ts {
		r := tileRank[t]
		tl := tiles[r][t-base[r]]
		for i := tl.start; i < tl.end; i++ {
			e := &ranks[r].ev[i]
			in.Events++
			in.Bytes += e.bytes
			if reg := keys[e.sym].region; !slices.Contains(in.Regions, reg) {
				in.Regions = append(in.Regions, reg)
			}
			if !sc.seen[r] {
				sc.seen[r] = true
				sc.touched = append(sc.touched, r)
				sc.start[r], sc.finish[r], sc.kind[r] = e.enter, e.exit, e.kind
			} else {
				sc.start[r] = min(sc.start[r], e.enter)
				sc.finish[r] = max(sc.finish[r], e.exit)
				if lateRank(e.kind) > lateRank(sc.kind[r]) {
					sc.kind[r] = e.kind
				}
			}
			ref := EventRef{Rank: r, Index: e.index, Kind: e.kind, Op: e.kind.String(), Duration: e.exit - e.enter}
			if firstCall || ref.Duration > in.Slowest.Duration {
				in.Slowest = ref
			}
			if firstCall || ref.Duration < in.Shortest.Duration {
				in.Shortest = ref
			}
			firstCall = false
		}
	}
	slices.Sort(sc.touched)
	in.Ranks = slices.Clone(sc.touched)
	for i, r := range sc.touched {
		sc.seen[r] = false
		if !timed {
			continue
		}
		if i == 0 || sc.start[r] < in.Start {
			in.Start, in.FirstStart = sc.start[r], r
		}
		if i == 0 || sc.start[r] > sc.start[in.LastStart] {
			in.LastStart = r
		}
		if i == 0 || sc.finish[r] > in.Finish {
			in.Finish, in.LastFinish = sc.finish[r], r
		}
		if i == 0 || sc.finish[r] < sc.finish[in.FirstFinish] {
			in.FirstFinish = r
		}
	}
	if timed {
		in.lastKind = sc.kind[in.LastStart]
		in.LastStartOp = in.lastKind.String()
	} else {
		in.Slowest, in.Shortest = EventRef{}, EventRef{}
	}
	return in
}

// lateRank orders the kinds that can decide lateness: collective, then
// send, then receive.
func lateRank(k trace.Kind) int {
	switch {
	case k.IsCollective():
		return 3
	case k.IsSend() || k == trace.SendRecv:
		return 2
	case k.IsRecv():
		return 1
	}
	return 0
}

func itoa(i int) string { return strconv.Itoa(i) }

// ErrUntimed is returned by the steps that need timestamps.
var ErrUntimed = errors.New("the trace has no timestamps: slow instances need a timed trace (OTF2, DUMPI, Alawneh et al.'s text traces, or kairos simulate --timed-trace)")
