package otf2

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"kairos/format/scorep"
	"kairos/trace"
)

// The count vectors of v-collectives. OTF2 records a member's totals only
// (the bytes it sends and receives); the model needs one count per
// member. Kairos' tracer carries the vectors as string attributes that
// other readers ignore (kairos:sendcounts, kairos:recvcounts: the bytes
// to or from each member, in communicator rank order), which are read
// exactly. Otherwise the vectors are derived from the totals of every
// member of the instance, which Open's scan gathers: a gatherv's root
// receives from each member what it sends, an allgatherv's and a
// reduce_scatter's members each member's block, a scatterv's members what
// the root sends them; an alltoallv's matrix, of which the totals are the
// rows and columns only, is the one proportional to them (member i sends
// member j S_i·R_j/T bytes, rounded down, the bytes left over given
// along the rows and columns in rank order), so that every member sends
// and receives its totals and the run replays. Meta.Attrs["derived-counts"]
// says so.

// The attributes of Kairos' tracer and writer, which other readers
// ignore: a v-collective's count vectors (strings of the bytes to or
// from each member); a collective's volumes as the model has them, where
// the bytes Score-P counts do not give them back (volumeAttrs).
const (
	attrSendCounts = "kairos:sendcounts"
	attrRecvCounts = "kairos:recvcounts"
	attrSentBytes  = "kairos:sendbytes"
	attrRecvdBytes = "kairos:recvbytes"
)

// volumeAttrs sets ev's volumes from the record's kairos:sendbytes and
// kairos:recvbytes attributes, where it has them: the model's own, which
// Kairos' writer adds where the bytes Score-P counts do not give them
// back (a TI trace's allreduce receives no bytes; Score-P counts the
// whole vector's).
func (m *mapper) volumeAttrs(ev *trace.Event, e *Event) {
	s := m.src
	for _, a := range e.Attrs {
		switch {
		case a.Type != typeUint64 || int64(a.Value) < 0:
		case a.ID == s.attrSent:
			ev.SendBytes = int64(a.Value)
		case a.ID == s.attrRecvd:
			ev.RecvBytes = int64(a.Value)
		}
	}
}

// AttrDerivedCounts is the Meta.Attrs key that says that some
// v-collectives' count vectors were derived from the members' totals,
// not read.
const AttrDerivedCounts = "derived-counts"

// AttrInterCollectives is the Meta.Attrs key that says how many calls of
// collectives on intercommunicators were read as deferred calls.
const AttrInterCollectives = "otf2.intercomm-collectives"

// AttrThreadMPI is the Meta.Attrs key that says how many threads other
// than the ranks' own hold MPI records that were not read.
const AttrThreadMPI = "otf2.thread-mpi"

// AttrNoMPI is the Meta.Attrs key that says that the archive records no
// MPI (a program of threads or devices alone), whose ranks have no events.
const AttrNoMPI = "otf2.no-mpi"

// AttrDevices is the Meta.Attrs key that says how many accelerator
// streams (GPUs, coprocessors) of the ranks' processes the model leaves
// out, and what their time becomes.
const AttrDevices = "otf2.devices"

// AttrSwitchedOff is the Meta.Attrs key that says how often and how long
// the measurement was switched off during the run.
const AttrSwitchedOff = "otf2.switched-off"

// vnote is one member's v-collective not read exactly, as Open's scan
// notes it: the call's rank in the member's order of calls, the OTF2
// communicator, the kind, and its a and b, the totals the vectors derive
// from (scorep.Totals).
type vnote struct {
	seq            uint64
	comm           uint32
	kind           trace.Kind
	a, b           int64
	sent, received int64 // what the record counted
	root           bool
}

// vkey names an instance of a v-collective: the OTF2 communicator and its
// rank among the communicator's v-collectives, in call order.
type vkey struct {
	comm uint32
	num  int
}

// vinst is an instance of a v-collective: each member's totals, which
// members reported theirs, and why the instance cannot derive counts.
type vinst struct {
	*scorep.Instance
	have       []bool
	sent, recv []int64 // what each member's record counted
	conflict   string
}

// vtable is the v-collectives of an archive, built by Open's scan.
type vtable struct {
	notes [][]vnote // per rank, while scanning
	insts map[vkey]*vinst
	seqs  []map[uint64]vkey // per rank: call seq -> instance
	n     int               // instances derived
}

// vcounts gives the v-collective ev (record e, on communicator c, the
// seq'th collective the rank called) its count vectors: from the kairos
// attributes if the record has them, else derived from every member's
// totals (after Open's scan; the scan notes this member's), else spread
// evenly.
func (m *mapper) vcounts(ev *trace.Event, e *Event, c modelComm, seq uint64) {
	if !countedByVectors(ev.Kind) {
		return
	}
	if ev.Kind == trace.ReduceScatter && e.Op == opReduceScatterBlock {
		scorep.SpreadCounts(ev, c.size)
		return
	}
	if m.attrCounts(ev, e, c.size) {
		return
	}
	if c.self || c.size <= 1 {
		scorep.SpreadCounts(ev, c.size)
		return
	}
	if m.scanning {
		a, b := scorep.Totals(ev, int64(e.Bytes), int64(e.Received), c.size, m.src.inPlaceAware)
		m.src.vt.notes[m.rank] = append(m.src.vt.notes[m.rank], vnote{seq: seq, comm: e.Comm, kind: ev.Kind, a: a, b: b,
			sent: int64(e.Bytes), received: int64(e.Received), root: ev.Kind.IsRooted() && ev.Partner == m.rank})
		scorep.SpreadCounts(ev, c.size)
		m.idx.derived = append(m.idx.derived, derivedAt{seq, m.rankIn(c)})
		ev.Handle = uint32(len(m.idx.derived)) // for the kept events' reader (keptReader)
		return
	}
	if !m.src.vt.derive(ev, m.rank, seq, m.rankIn(c)) {
		scorep.SpreadCounts(ev, c.size)
	}
}

// countedByVectors reports whether a collective of kind k has count
// vectors (vcounts).
func countedByVectors(k trace.Kind) bool {
	switch k {
	case trace.Alltoallv, trace.Allgatherv, trace.Gatherv, trace.Scatterv, trace.ReduceScatter:
		return true
	}
	return false
}

// attrCounts sets ev's count vectors from the record's kairos attributes,
// if it has them and they agree with its totals.
func (m *mapper) attrCounts(ev *trace.Event, e *Event, n int) bool {
	s := m.src
	var send, recv []int64
	for _, a := range e.Attrs {
		if a.Type != typeString || (a.ID != s.attrSend && a.ID != s.attrRecv) {
			continue
		}
		v, ok := m.vector(a.Value, n)
		if !ok {
			m.badCounts++
			return false
		}
		if a.ID == s.attrSend {
			send = v
		} else {
			recv = v
		}
	}
	if send == nil && recv == nil {
		// Kairos' tracer writes no vector where MPI ignores it: a
		// gatherv's or scatterv's members but the root.
		if s.attrSend == undefined32 && s.attrRecv == undefined32 || !(ev.Kind == trace.Gatherv || ev.Kind == trace.Scatterv) ||
			ev.Partner == m.rank {
			return false
		}
		if ev.Kind == trace.Gatherv {
			ev.RecvCounts = make([]int64, n)
		} else {
			ev.SendCounts = make([]int64, n)
		}
		return true
	}
	if !sums(send, recv, ev.SendBytes, ev.RecvBytes) {
		// At a gatherv's or scatterv's root, Volumes reads a block of its
		// own of 0 bytes as an in-place call, as Score-P's totals cannot
		// tell them apart; the record's totals, matching the exact
		// vectors, settle it.
		root := (ev.Kind == trace.Gatherv || ev.Kind == trace.Scatterv) && ev.Partner == m.rank
		if !root || !sums(send, recv, int64(e.Bytes), int64(e.Received)) {
			m.badCounts++
			return false
		}
		ev.SendBytes, ev.RecvBytes = int64(e.Bytes), int64(e.Received)
	}
	switch ev.Kind {
	case trace.Alltoallv:
		if send == nil || recv == nil {
			m.badCounts++
			return false
		}
		ev.SendCounts, ev.RecvCounts = slices.Clone(send), slices.Clone(recv)
	case trace.Scatterv:
		ev.SendCounts = slices.Clone(send)
		if send == nil {
			ev.SendCounts = make([]int64, n)
		}
	default:
		ev.RecvCounts = slices.Clone(recv)
		if recv == nil {
			ev.RecvCounts = make([]int64, n)
		}
	}
	return true
}

// sums reports whether the count vectors send and recv (nil where
// absent) add up to sent and recv bytes.
func sums(send, recv []int64, sent, received int64) bool {
	return (send == nil || scorep.Sum(send) == sent) && (recv == nil || scorep.Sum(recv) == received)
}

// vector parses the count vector of string ref (n space-separated byte
// counts), caching it.
func (m *mapper) vector(ref uint64, n int) ([]int64, bool) {
	if v, ok := m.vcache[ref]; ok {
		return v, len(v) == n
	}
	str, ok := m.src.arch.Defs.Strings[uint32(ref)]
	if !ok {
		return nil, false
	}
	f := strings.Fields(str)
	v := make([]int64, 0, len(f))
	for _, x := range f {
		c, err := strconv.ParseInt(x, 10, 64)
		if err != nil || c < 0 {
			return nil, false
		}
		v = append(v, c)
	}
	m.vcache[ref] = v
	return v, len(v) == n
}

// build makes the instances from the notes of every rank: each rank's
// v-collectives on a communicator, in call order, are the instances'.
// members returns the world ranks of an OTF2 communicator; inPlaceAware
// says that the archive's in-place counts leave the member's own block
// out, so that an in-place allgatherv or reduce_scatter shows in all its
// members' counts together (scorep.Instance.ResolveInPlace).
func (t *vtable) build(members func(uint32) []int32, inPlaceAware bool) (defects []string) {
	t.insts = map[vkey]*vinst{}
	t.seqs = make([]map[uint64]vkey, len(t.notes))
	for r, notes := range t.notes {
		sort.Slice(notes, func(i, j int) bool { return notes[i].seq < notes[j].seq })
		nums := map[uint32]int{}
		t.seqs[r] = make(map[uint64]vkey, len(notes))
		for _, nt := range notes {
			k := vkey{nt.comm, nums[nt.comm]}
			nums[nt.comm]++
			t.seqs[r][nt.seq] = k
			mem := members(nt.comm)
			i := slices.Index(mem, int32(r))
			if i < 0 {
				continue
			}
			in := t.insts[k]
			if in == nil {
				in = &vinst{Instance: scorep.NewInstance(nt.kind, len(mem)), have: make([]bool, len(mem)),
					sent: make([]int64, len(mem)), recv: make([]int64, len(mem))}
				t.insts[k] = in
			}
			if nt.kind != in.Kind && in.conflict == "" {
				in.conflict = fmt.Sprintf("%s and %s", in.Kind, nt.kind)
			}
			in.A[i], in.B[i], in.have[i] = nt.a, nt.b, true
			in.sent[i], in.recv[i] = nt.sent, nt.received
			if nt.root {
				in.Root = i
			}
		}
	}
	t.notes = nil
	bad := 0
	for k, in := range t.insts {
		if in.conflict == "" && slices.Contains(in.have, false) {
			in.conflict = "members missing"
		}
		if in.conflict == "" && inPlaceAware {
			in.ResolveInPlace(in.sent, in.recv)
		}
		in.sent, in.recv = nil, nil
		if in.conflict != "" {
			bad++
			if bad <= 3 {
				defects = append(defects, fmt.Sprintf("v-collective #%d on communicator %d: %s (counts spread evenly)", k.num, k.comm, in.conflict))
			}
			continue
		}
		t.n++
	}
	if bad > 3 {
		defects = append(defects, fmt.Sprintf("%d more v-collectives whose members disagree (counts spread evenly)", bad-3))
	}
	return defects
}

// derive sets the count vectors of rank's v-collective ev, its seq'th
// collective call, from the instance's totals; me is the rank's index in
// the communicator. It reports false where the instance is unknown or
// its members disagree.
func (t *vtable) derive(ev *trace.Event, rank int32, seq uint64, me int) bool {
	if t.seqs == nil || int(rank) >= len(t.seqs) || me < 0 {
		return false
	}
	in := t.insts[t.seqs[rank][seq]]
	return in != nil && in.conflict == "" && in.Derive(ev, me)
}
