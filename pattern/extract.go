package pattern

import (
	"fmt"
	"strconv"
	"strings"

	"kairos/internal/prefault"
	"kairos/trace"
)

// event is one communication call of a rank, as pattern detection sees it.
type event struct {
	// enter is also the happened-before key; an untimed trace's enter is
	// set to a Lamport clock (see lamport).
	enter, exit trace.Time
	bytes       int64 // bytes this call sends
	index       int32 // index in the rank's event stream
	pos         int32 // index among the rank's MPI calls (Table 2's positions)
	sym         int32 // its symbol, which also holds its peers, communicator and region
	tag         int32
	kind        trace.Kind
}

// symKey is what makes two calls the same symbol: the operation, its
// peers, its communicator and the user function it is called from. Tags
// and sizes are left out, so that the iterations of a loop read as the
// same word whatever they carry; the function is kept, so that the same
// exchange in two functions (setup and solve) makes two patterns.
type symKey struct {
	kind          trace.Kind // Send for Send and Isend, Recv for Recv and Irecv
	partner, peer int32
	comm          uint32
	region        uint32
}

// recvSource returns the rank a call of symbol k receives from, or NoRank.
func (k *symKey) recvSource() int32 {
	switch k.kind {
	case trace.Recv:
		return k.partner
	case trace.SendRecv:
		return k.peer
	}
	return trace.NoRank
}

// symbols numbers the distinct symbols of a trace.
type symbols struct {
	ids  map[symKey]int32
	keys []symKey
}

func (s *symbols) id(k symKey) int32 {
	if id, ok := s.ids[k]; ok {
		return id
	}
	id := int32(len(s.keys))
	s.ids[k] = id
	s.keys = append(s.keys, k)
	return id
}

// name is the symbol as the paper writes it: S3 sends to rank 3, R1
// receives from rank 1, SR2/1 sends to 2 and receives from 1, a
// collective is its upper-case name (with @root); a communicator other
// than MPI_COMM_WORLD is appended as #id.
func (k symKey) name() string {
	var s string
	switch k.kind {
	case trace.Send:
		s = "S" + strconv.Itoa(int(k.partner))
	case trace.Recv:
		s = "R" + strconv.Itoa(int(k.partner))
	case trace.SendRecv:
		s = "SR" + strconv.Itoa(int(k.partner)) + "/" + strconv.Itoa(int(k.peer))
	default:
		s = strings.ToUpper(k.kind.String())
		if k.kind.IsRooted() {
			s += "@" + strconv.Itoa(int(k.partner))
		}
	}
	if k.comm != trace.WorldComm {
		s += "#" + strconv.FormatUint(uint64(k.comm), 10)
	}
	return s
}

// rankData is one rank's communication calls cut into contexts.
type rankData struct {
	ev   []event
	segs []int32 // index in ev where each context starts
	// wide is the body, as its least rotation, of the first loop
	// iterationCuts took whole though a loop within it covers over half
	// its calls (nil: none): refine may cut the rank again without it,
	// where its partners iterate at the loop within.
	wide []int32
	// ends are where the program itself ends a context (an MPI_Waitall, a
	// change of user function), the contexts before iterations cut them:
	// the bounds loops are not turned across (align).
	ends  []int32
	timed bool // every communication call has timestamps
	// open[i] is the number of the rank's requests pending when it makes
	// call ev[i], openEnd after its last call.
	open    []int32
	openEnd int32
	// gap[i] is the computation before call ev[i] since the rank's
	// previous MPI call other than a probe (trace.Passive): seconds in a
	// timed trace, else flops (and sleeps' seconds as nanoflops).
	gap []float64
}

// Untimed reports whether rank 0's first call that takes part in
// patterns (or, where none does, its first MPI call) has no timestamps,
// which makes src untimed for the steps that need them (ErrUntimed)
// before its patterns are found; false where it cannot tell, those steps
// then finding out themselves.
func Untimed(src trace.Source) bool {
	if src.NumRanks() == 0 {
		return false
	}
	rd, err := src.OpenRank(0)
	if err != nil {
		return false
	}
	defer rd.Close()
	seen, untimed := false, false // the first MPI call, and whether it has no timestamps
	for rd.Next() {
		e := rd.Event()
		if communicates(e.Kind) {
			return !e.HasTime
		}
		if !seen && e.Kind.IsMPI() {
			seen, untimed = true, !e.HasTime
		}
	}
	return untimed
}

// communicates reports whether a call of kind k takes part in patterns.
func communicates(k trace.Kind) bool {
	return k.IsPointToPoint() || (k.IsCollective() && k != trace.CommSplit && k != trace.CommDup && k != trace.CommCreate)
}

// readRank reads rank r's communication calls. A context ends at every
// MPI_Waitall and wherever the enclosing user function (the event's
// call-path region) changes.
func readRank(src trace.Source, r int, syms *symbols, sizeHint int) (rd rankData, err error) {
	in, err := src.OpenRank(r)
	if err != nil {
		return rd, err
	}
	defer func() {
		if cerr := in.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("rank %d: %w", r, cerr)
		}
	}()
	rd.timed = true
	rd.ev = make([]event, 0, sizeHint)
	rd.open = make([]int32, 0, sizeHint)
	rd.gap = make([]float64, 0, sizeHint)
	if r > 0 {
		// Mapped at once: a fault a page took a fifth of reading the
		// ranks of a large trace (prefault). Rank 0's hint is what the
		// file claims (DetectMethod): left to its faults.
		prefault.Slice(rd.ev)
		prefault.Slice(rd.open)
		prefault.Slice(rd.gap)
	}
	cut := true
	var pos int32
	var region uint32
	pending := map[uint64]int32{} // request -> index in rd.ev
	// work and comp are the computation since the last MPI call a replay
	// acts on: flops (untimed), seconds (timed).
	var work, comp float64
	var lastExit trace.Time
	var firstTimed bool // the rank's first MPI call has timestamps
	for i := int32(0); in.Next(); i++ {
		e := in.Event()
		if !e.Kind.IsMPI() || e.Kind == trace.Local {
			// A local call (MPI_Wtime, which DUMPI records) is
			// computation, as the time around it: the gap before the
			// next call spans it.
			switch e.Kind {
			case trace.Compute:
				work += e.Compute
			case trace.Sleep:
				work += e.Compute * 1e9
			}
			continue
		}
		if e.HasTime {
			if pos > 0 && e.Enter > lastExit {
				comp += (e.Enter - lastExit).Seconds()
			}
			lastExit = e.Exit
		}
		if pos == 0 {
			firstTimed = e.HasTime
		}
		pos++
		if trace.Passive(e.Kind) {
			// A probe: a replay does nothing for it, and the computations
			// around it are one (a TI trace has one line for them).
			continue
		}
		gap := work
		if e.HasTime {
			gap = comp
		}
		work, comp = 0, 0
		switch e.Kind {
		case trace.Waitall:
			complete(&rd, pending, e)
			cut = true
			continue
		case trace.Wait:
			complete(&rd, pending, e)
		}
		if !communicates(e.Kind) {
			continue
		}
		rd.open = append(rd.open, int32(len(pending)))
		rd.gap = append(rd.gap, gap)
		if e.Kind.IsNonBlocking() {
			pending[e.Request] = int32(len(rd.ev))
		}
		if len(rd.ev) > 0 && region != e.Region {
			cut = true
		}
		region = e.Region
		if cut {
			rd.segs = append(rd.segs, int32(len(rd.ev)))
			cut = false
		}
		rd.ev = append(rd.ev, makeEvent(e, i, pos-1, syms))
		rd.timed = rd.timed && e.HasTime
	}
	if len(rd.ev) == 0 && pos > 0 {
		// A rank with no communication call is as timed as its first MPI
		// call (MPI_Init).
		rd.timed = firstTimed
	}
	rd.openEnd = int32(len(pending))
	if err := in.Err(); err != nil {
		return rd, fmt.Errorf("rank %d: %w", r, err)
	}
	return rd, nil
}

// complete ends the non-blocking calls a Wait or Waitall completes at the
// completion's exit, so that a call's span runs to its completion, as the
// paper's Isend..IsendComplete and IrecvRequest..Irecv spans do.
func complete(rd *rankData, pending map[uint64]int32, e *trace.Event) {
	finish := func(req uint64) {
		if i, ok := pending[req]; ok {
			if e.HasTime {
				rd.ev[i].exit = max(rd.ev[i].exit, e.Exit)
			}
			delete(pending, req)
		}
	}
	switch {
	case e.Kind == trace.Wait:
		finish(e.Request)
	case e.Requests == nil:
		for req := range pending {
			finish(req)
		}
	default:
		for _, req := range e.Requests {
			finish(req)
		}
	}
}

func makeEvent(e *trace.Event, index, pos int32, syms *symbols) event {
	k := symKey{kind: e.Kind, partner: e.Partner, peer: trace.NoRank, comm: e.Comm, region: e.Region}
	ev := event{enter: e.Enter, exit: e.Exit, index: index, pos: pos, tag: e.Tag, kind: e.Kind}
	switch {
	case e.Kind.IsSend():
		k.kind = trace.Send
		ev.bytes = e.SendBytes
	case e.Kind.IsRecv():
		k.kind = trace.Recv
	case e.Kind == trace.SendRecv:
		k.peer = e.Source
		ev.bytes = e.SendBytes
	default: // collectives
		if !e.Kind.IsRooted() {
			k.partner = trace.NoRank
		}
		ev.bytes = e.SendBytes
		if len(e.SendCounts) > 0 {
			ev.bytes = 0
			for _, c := range e.SendCounts {
				ev.bytes += max(c, 0)
			}
		}
	}
	ev.bytes = max(ev.bytes, 0)
	ev.sym = syms.id(k)
	return ev
}
