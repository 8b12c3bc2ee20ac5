package pattern

import (
	"fmt"
	"strconv"
	"strings"

	"kairos/trace"
)

// event is one communication call of a rank, as pattern detection sees it.
type event struct {
	enter, exit trace.Time
	order       int64 // happened-before key: Enter, or a Lamport clock
	bytes       int64 // bytes this call sends
	index       int32 // index in the rank's event stream
	pos         int32 // index among the rank's MPI calls (Table 2's positions)
	sym         int32
	partner     int32
	source      int32 // SendRecv's source
	tag         int32
	comm        uint32
	region      uint32
	kind        trace.Kind
}

// symKey is what makes two calls the same symbol: the operation, its
// peers and its communicator. Tags and sizes are left out, so that the
// iterations of a loop read as the same word whatever they carry.
type symKey struct {
	kind          trace.Kind // Send for Send and Isend, Recv for Recv and Irecv
	partner, peer int32
	comm          uint32
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
	ev    []event
	segs  []int32 // index in ev where each context starts
	timed bool    // every communication call has timestamps
}

// communicates reports whether a call of kind k takes part in patterns.
func communicates(k trace.Kind) bool {
	return k.IsPointToPoint() || (k.IsCollective() && k != trace.CommSplit && k != trace.CommDup && k != trace.CommCreate)
}

// readRank reads rank r's communication calls. A context ends at every
// MPI_Waitall and wherever the enclosing user function (the event's
// call-path region) changes.
func readRank(src trace.Source, r int, syms *symbols) (rd rankData, err error) {
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
	cut := true
	var pos int32
	for i := int32(0); in.Next(); i++ {
		e := in.Event()
		if !e.Kind.IsMPI() {
			continue
		}
		pos++
		if e.Kind == trace.Waitall {
			cut = true
			continue
		}
		if !communicates(e.Kind) {
			continue
		}
		if n := len(rd.ev); n > 0 && rd.ev[n-1].region != e.Region {
			cut = true
		}
		if cut {
			rd.segs = append(rd.segs, int32(len(rd.ev)))
			cut = false
		}
		rd.ev = append(rd.ev, makeEvent(e, i, pos-1, syms))
		rd.timed = rd.timed && e.HasTime
	}
	if err := in.Err(); err != nil {
		return rd, fmt.Errorf("rank %d: %w", r, err)
	}
	return rd, nil
}

func makeEvent(e *trace.Event, index, pos int32, syms *symbols) event {
	k := symKey{kind: e.Kind, partner: e.Partner, peer: trace.NoRank, comm: e.Comm}
	ev := event{enter: e.Enter, exit: e.Exit, order: int64(e.Enter), index: index, pos: pos,
		partner: e.Partner, source: e.Source, tag: e.Tag, comm: e.Comm, region: e.Region, kind: e.Kind}
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
