package report

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"kairos/trace"
	"kairos/waitstate"
)

// State is what a rank is doing at a point of the timeline.
type State uint8

// The states of the timeline, each drawn in its colour of meaning.
const (
	Computation  State = iota // application code, and the time between MPI calls
	PointToPoint              // sends, receives, probes and their completions; one-sided transfers and their epochs
	Collective                // collective operations
	OtherMPI                  // initialisation, communicators, local calls
	Waiting                   // blocked in MPI for a late partner
	numStates
)

var stateNames = [numStates]string{"computation", "point-to-point", "collective", "other MPI", "waiting"}

func (s State) String() string { return stateNames[s] }

// stateOf returns the state of a call of kind k.
func stateOf(k trace.Kind) State {
	switch {
	case k == trace.Compute || k == trace.Sleep:
		return Computation
	case k == trace.WinCreate || k == trace.WinFree || k == trace.WinFence:
		return Collective
	case k >= trace.Send && k <= trace.SendRecv || k == trace.Probe || k == trace.Iprobe || k.IsWindow():
		return PointToPoint
	case k >= trace.Barrier && k <= trace.Exscan:
		return Collective
	}
	return OtherMPI
}

// A segment's code is one byte: the kind of its call (below 64), plus
// codeWaiting for the part of the call spent waiting, plus codeMerged for
// a segment that merges spans shorter than the timeline's resolution
// (its code is then the dominant one's).
const (
	codeWaiting = 64
	codeMerged  = 128
	kindMask    = 63
	numCodes    = 128
)

// Every kind fits a code's kind bits (a compile-time check).
var _ [kindMask + 1 - trace.NumKinds]struct{}

func codeState(c byte) State {
	if c&codeWaiting != 0 {
		return Waiting
	}
	return stateOf(trace.Kind(c & kindMask))
}

// Span is a span of time.
type Span struct{ Start, End trace.Time }

// Waits are each rank's spans of waiting for a late partner, sorted by
// start: the wait states a wait-state analysis finds (a late sender, the
// last member of a collective...). The timeline draws the part of an MPI
// call inside one as waiting.
type Waits [][]WaitSpan

// WaitSpan is a wait state's span, the rank it waited for and its kind:
// what the page needs of a wait state, in a third of its size.
type WaitSpan struct {
	Start, End trace.Time
	Causer     int32
	Kind       waitstate.Kind
}

// Timeline is every rank's states over time, encoded for the page: each
// lane is a sequence of contiguous segments, each a varint duration in
// ticks and a code byte. Spans shorter than Resolution are merged into
// segments of at least that length, drawn in their dominant state, so
// that the page stays small at any number of events; Totals are exact.
type Timeline struct {
	Start, End trace.Time // the earliest entry and the latest exit, over all ranks
	Tick       trace.Time // picoseconds per tick
	Resolution trace.Time // shortest span kept apart; 0 when nothing is merged
	Lanes      []Lane
	// Totals are each rank's time in each state, exact.
	Totals [][numStates]trace.Time
	// Calls are, for each code that occurs (a kind, or the waiting part
	// of a kind's calls), each rank's time in it, exact: the function
	// summary Vampir users read first.
	Calls [numCodes][]trace.Time
	// Named are, of the local, deferred and MPI-IO calls' time in Calls
	// (trace.Kind.NamedByRegion), each rank's in each MPI function the
	// trace names (their region: an archive's MPI_Testany, MPI_Iprobe,
	// MPI_Comm_rank, MPI_File_write_at_all), which are not kinds of their
	// own.
	Named map[string]*NamedCalls
}

// NamedCalls is the time in one MPI function a trace names: each rank's,
// and its waiting part over all ranks.
type NamedCalls struct {
	Ranks   []trace.Time
	Waiting trace.Time
}

// Lane is one rank's segments.
type Lane struct {
	Start    int64  // ticks from Timeline.Start to the first segment
	Data     []byte // the segments
	Segments int
}

// Bytes returns the size of the lanes' data.
func (tl *Timeline) Bytes() int {
	n := 0
	for _, l := range tl.Lanes {
		n += len(l.Data)
	}
	return n
}

// BuildTimeline reads every rank of the timed trace src and encodes its
// states in at most about budget bytes: at full detail if they fit, else
// merging the spans shorter than the finest resolution that fits.
func BuildTimeline(src trace.Source, waits Waits, budget int) (*Timeline, error) {
	start, end, events, err := timeSpan(src)
	if err != nil {
		return nil, err
	}
	if end <= start {
		return nil, fmt.Errorf("the trace has no timed event")
	}
	span := end - start
	var res trace.Time
	if events*3 > int64(budget) {
		// An average segment takes about two bytes once merged.
		res = max(1, span*trace.Time(src.NumRanks())*2/trace.Time(budget))
	}
	for {
		tl, err := buildTimeline(src, waits, start, end, res)
		if err != nil {
			return nil, err
		}
		if tl.Bytes() <= budget {
			return tl, nil
		}
		if res >= span {
			return tl, nil // one segment a rank: as small as it gets
		}
		grow := math.Max(1.25, float64(tl.Bytes())/float64(budget))
		res = max(res+1, min(span, trace.Time(float64(max(res, span/1e6))*grow)))
	}
}

// timeSpan returns the earliest entry, the latest exit and the number of
// timed events of src.
func timeSpan(src trace.Source) (start, end trace.Time, events int64, err error) {
	start, end = math.MaxInt64, math.MinInt64
	for r := range src.NumRanks() {
		rd, err := src.OpenRank(r)
		if err != nil {
			return 0, 0, 0, err
		}
		for rd.Next() {
			e := rd.Event()
			if !e.HasTime {
				continue
			}
			start, end = min(start, e.Enter), max(end, e.Exit)
			events++
		}
		err = rd.Err()
		rd.Close()
		if err != nil {
			return 0, 0, 0, fmt.Errorf("rank %d: %w", r, err)
		}
	}
	return start, end, events, nil
}

func buildTimeline(src trace.Source, waits Waits, start, end, res trace.Time) (*Timeline, error) {
	tick := max(1, (end-start)>>30)
	if res > 0 {
		tick = max(1, res/16)
	}
	tl := &Timeline{Start: start, End: end, Tick: tick, Resolution: res,
		Lanes: make([]Lane, src.NumRanks()), Totals: make([][numStates]trace.Time, src.NumRanks()), Named: map[string]*NamedCalls{}}
	for r := range src.NumRanks() {
		rd, err := src.OpenRank(r)
		if err != nil {
			return nil, err
		}
		l := &lane{tl: tl, meta: src.Meta(), rank: r, totals: &tl.Totals[r], enc: encoder{tick: tick, start: start}}
		if r < len(waits) {
			l.waits = waits[r]
		}
		l.sampler.res = res
		for rd.Next() {
			if e := rd.Event(); e.HasTime {
				l.event(e)
			}
		}
		err = rd.Err()
		rd.Close()
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		l.flush()
		tl.Lanes[r] = Lane{Start: l.enc.first, Data: l.enc.data, Segments: l.enc.segments}
	}
	return tl, nil
}

// lane turns one rank's events into segments.
type lane struct {
	tl   *Timeline
	meta *trace.Meta
	// lastRegion and lastNamed are the region named last and its time
	// (nil: a region the trace does not name as an MPI function), so that
	// a polling loop's millions of calls look it up once.
	lastRegion uint32
	lastNamed  *NamedCalls
	haveLast   bool
	rank       int
	totals     *[numStates]trace.Time
	waits      []WaitSpan // the rank's spans of waiting not yet passed
	started    bool
	last       trace.Time // the end of the last span
	sampler    sampler
	enc        encoder
}

func (l *lane) event(e *trace.Event) {
	enter, exit := e.Enter, e.Exit
	if !l.started {
		l.started, l.last = true, enter
		l.enc.begin(enter)
	}
	if enter > l.last {
		// The time between MPI calls is the application's.
		l.span(l.last, enter, byte(trace.Compute))
	}
	enter = max(enter, l.last)
	if exit <= enter {
		return
	}
	code := byte(e.Kind) & kindMask
	var n *NamedCalls
	if e.Kind.NamedByRegion() {
		if n = l.named(e); n == nil && e.Kind.MPIName() != "" {
			// An MPI-IO call whose region is no MPI function (a .ktr
			// converted before readers gave it its call's): its kind's.
			n = l.namedCalls(e.Kind.MPIName())
		}
		if n != nil {
			n.Ranks[l.rank] += exit - enter
		}
	}
	if e.Kind.IsMPI() {
		// The parts of the call inside spans of waiting are waiting.
		for len(l.waits) > 0 && l.waits[0].Start < exit {
			w := l.waits[0]
			if w.End <= enter {
				l.waits = l.waits[1:]
				continue
			}
			from, to := max(w.Start, enter), min(w.End, exit)
			l.span(enter, from, code)
			l.span(from, to, code|codeWaiting)
			if n != nil && to > from {
				n.Waiting += to - from
			}
			enter = to
			if w.End > exit {
				break
			}
			l.waits = l.waits[1:]
		}
	}
	l.span(enter, exit, code)
}

// named returns the time in the MPI function call e is (a local,
// deferred or MPI-IO call), nil if the trace does not name it.
func (l *lane) named(e *trace.Event) *NamedCalls {
	if l.haveLast && e.Region == l.lastRegion {
		return l.lastNamed
	}
	var n *NamedCalls
	if name := l.meta.RegionName(e.Region); strings.HasPrefix(name, "MPI_") {
		n = l.namedCalls(name)
	}
	l.lastRegion, l.lastNamed, l.haveLast = e.Region, n, true
	return n
}

// namedCalls returns the time in MPI function name, made on first use.
func (l *lane) namedCalls(name string) *NamedCalls {
	n := l.tl.Named[name]
	if n == nil {
		n = &NamedCalls{Ranks: make([]trace.Time, len(l.tl.Lanes))}
		l.tl.Named[name] = n
	}
	return n
}

func (l *lane) span(a, b trace.Time, code byte) {
	if b <= a {
		return
	}
	l.totals[codeState(code)] += b - a
	if l.tl.Calls[code] == nil {
		l.tl.Calls[code] = make([]trace.Time, len(l.tl.Lanes))
	}
	l.tl.Calls[code][l.rank] += b - a
	l.last = b
	l.sampler.add(a, b, code, &l.enc)
}

func (l *lane) flush() { l.sampler.flush(&l.enc); l.enc.flush() }

// sampler merges consecutive spans shorter than res into segments of
// about res, each in its dominant state (the state with the most time,
// then its code with the most time).
type sampler struct {
	res        trace.Time
	from, to   trace.Time
	pending    bool
	codes      [numCodes]trace.Time
	used       []byte
	singleCode bool
}

func (s *sampler) add(a, b trace.Time, code byte, enc *encoder) {
	if b-a >= s.res {
		s.flush(enc)
		enc.put(b, code)
		return
	}
	if !s.pending {
		s.pending, s.from, s.singleCode = true, a, true
	} else if code != s.used[0] {
		s.singleCode = false
	}
	if s.codes[code] == 0 {
		s.used = append(s.used, code)
	}
	s.codes[code] += b - a
	s.to = b
	if s.to-s.from >= s.res {
		s.flush(enc)
	}
}

func (s *sampler) flush(enc *encoder) {
	if !s.pending {
		return
	}
	var byState [numStates]trace.Time
	for _, c := range s.used {
		byState[codeState(c)] += s.codes[c]
	}
	best := State(0)
	for st := range numStates {
		if byState[st] > byState[best] {
			best = st
		}
	}
	var code byte
	var most trace.Time = -1
	for _, c := range s.used {
		if codeState(c) == best && s.codes[c] > most {
			code, most = c, s.codes[c]
		}
		s.codes[c] = 0
	}
	if !s.singleCode {
		code |= codeMerged
	}
	enc.put(s.to, code)
	s.pending, s.used = false, s.used[:0]
}

// encoder writes contiguous segments: each ends where the next starts, so
// only durations are written, in ticks from rounded absolute times (no
// drift). A segment shorter than a tick is dropped; consecutive segments
// of one code are written as one.
type encoder struct {
	tick, start trace.Time
	first       int64 // tick of the lane's first segment
	end         int64 // tick where the last written segment ends
	open        bool  // a segment is held back to merge with the next
	heldEnd     int64
	heldCode    byte
	data        []byte
	segments    int
}

func (e *encoder) ticks(t trace.Time) int64 {
	return int64((t - e.start + e.tick/2) / e.tick)
}

func (e *encoder) begin(t trace.Time) {
	e.first = e.ticks(t)
	e.end, e.heldEnd = e.first, e.first
}

// put ends a segment of code at t.
func (e *encoder) put(t trace.Time, code byte) {
	end := e.ticks(t)
	if end <= e.heldEnd {
		return
	}
	if e.open && code == e.heldCode {
		e.heldEnd = end
		return
	}
	e.flush()
	e.open, e.heldEnd, e.heldCode = true, end, code
}

func (e *encoder) flush() {
	if !e.open || e.heldEnd <= e.end {
		return
	}
	e.data = binary.AppendUvarint(e.data, uint64(e.heldEnd-e.end))
	e.data = append(e.data, e.heldCode)
	e.end = e.heldEnd
	e.open = false
	e.segments++
}
