package otf2

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

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

// AttrDerivedCounts is the Meta.Attrs key that says that some
// v-collectives' count vectors were derived from the members' totals,
// not read.
const AttrDerivedCounts = "derived-counts"

// vnote is one member's v-collective not read exactly, as Open's scan
// notes it: the call's rank in the member's order of calls, the OTF2
// communicator, the kind, and its a and b, the totals the vectors derive
// from (alltoallv: sent and received; allgatherv, reduce_scatter: its own
// block; gatherv: sent; scatterv: received).
type vnote struct {
	seq  uint64
	comm uint32
	kind trace.Kind
	a, b int64
	root bool
}

// vkey names an instance of a v-collective: the OTF2 communicator and its
// rank among the communicator's v-collectives, in call order.
type vkey struct {
	comm uint32
	num  int
}

// vinst is an instance of a v-collective: each member's a and b, and,
// for an alltoallv, the derived matrix's leftovers (computed once).
type vinst struct {
	kind     trace.Kind
	a, b     []int64
	have     []bool
	root     int // member index of the root, -1 if none or unknown
	conflict string

	once       sync.Once
	total      int64   // of the rows, and of the columns where they agree
	rowPre     []int64 // prefix sums of the rows' leftovers
	colPre     []int64
	consistent bool
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
	switch ev.Kind {
	case trace.Alltoallv, trace.Allgatherv, trace.Gatherv, trace.Scatterv:
	case trace.ReduceScatter:
		if e.Op == opReduceScatterBlock {
			spreadCounts(ev, c.size)
			return
		}
	default:
		return
	}
	if m.attrCounts(ev, e, c.size) {
		return
	}
	if c.self || c.size <= 1 {
		spreadCounts(ev, c.size)
		return
	}
	if m.scanning {
		a, b := ev.SendBytes, ev.RecvBytes
		switch ev.Kind {
		case trace.Allgatherv:
			b = 0
		case trace.ReduceScatter:
			a, _ = split(int64(e.Received), c.size, m.src.inPlaceAware)
			b = 0
		case trace.Gatherv:
			b = 0
		case trace.Scatterv:
			a = 0
		}
		m.src.vt.notes[m.rank] = append(m.src.vt.notes[m.rank], vnote{seq: seq, comm: e.Comm, kind: ev.Kind, a: a, b: b,
			root: ev.Kind.IsRooted() && ev.Partner == m.rank})
		spreadCounts(ev, c.size)
		return
	}
	if !m.src.vt.derive(ev, m.rank, seq, m.rankIn(c)) {
		spreadCounts(ev, c.size)
	}
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
	sum := func(v []int64) (t int64) {
		for _, x := range v {
			t += x
		}
		return t
	}
	if send != nil && sum(send) != ev.SendBytes || recv != nil && sum(recv) != ev.RecvBytes {
		m.badCounts++
		return false
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
// members returns the world ranks of an OTF2 communicator.
func (t *vtable) build(members func(uint32) []int32) (defects []string) {
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
				in = &vinst{kind: nt.kind, a: make([]int64, len(mem)), b: make([]int64, len(mem)), have: make([]bool, len(mem)), root: -1}
				t.insts[k] = in
			}
			if nt.kind != in.kind && in.conflict == "" {
				in.conflict = fmt.Sprintf("%s and %s", in.kind, nt.kind)
			}
			in.a[i], in.b[i], in.have[i] = nt.a, nt.b, true
			if nt.root {
				in.root = i
			}
		}
	}
	t.notes = nil
	bad := 0
	for k, in := range t.insts {
		if in.conflict == "" && slices.Contains(in.have, false) {
			in.conflict = "members missing"
		}
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
	if in == nil || in.conflict != "" || in.kind != ev.Kind || me >= len(in.a) {
		return false
	}
	n := len(in.a)
	switch ev.Kind {
	case trace.Alltoallv:
		ev.SendCounts, ev.RecvCounts = in.row(me), in.col(me)
	case trace.Allgatherv, trace.ReduceScatter:
		ev.RecvCounts = slices.Clone(in.a)
	case trace.Gatherv:
		ev.RecvCounts = make([]int64, n)
		if me == in.root {
			copy(ev.RecvCounts, in.a)
			ev.RecvBytes = sum(ev.RecvCounts)
		}
	case trace.Scatterv:
		ev.SendCounts = make([]int64, n)
		if me == in.root {
			copy(ev.SendCounts, in.b)
			ev.SendBytes = sum(ev.SendCounts)
		}
	}
	return true
}

func sum(v []int64) (t int64) {
	for _, x := range v {
		t += x
	}
	return t
}

// share returns s·r/t rounded down (s, r ≤ t < 2^63).
func share(s, r, t int64) int64 {
	hi, lo := bits.Mul64(uint64(s), uint64(r))
	q, _ := bits.Div64(hi, lo, uint64(t))
	return int64(q)
}

// matrix computes, once, the leftovers of the alltoallv's proportional
// matrix: row i's S_i − Σ_j ⌊S_i·R_j/T⌋ and column j's likewise, as prefix
// sums; cell (i, j) gets the overlap of row i's and column j's spans of
// leftovers, so that every row and column adds up to its total.
func (in *vinst) matrix() {
	in.once.Do(func() {
		n := len(in.a)
		st, rt := sum(in.a), sum(in.b)
		in.consistent, in.total = st == rt, st
		if !in.consistent || st == 0 {
			return
		}
		rows, cols := make([]int64, n), make([]int64, n)
		for i := range n {
			for j := range n {
				f := share(in.a[i], in.b[j], st)
				rows[i] += f
				cols[j] += f
			}
		}
		in.rowPre, in.colPre = make([]int64, n+1), make([]int64, n+1)
		for i := range n {
			in.rowPre[i+1] = in.rowPre[i] + in.a[i] - rows[i]
			in.colPre[i+1] = in.colPre[i] + in.b[i] - cols[i]
		}
	})
}

// cell returns the derived bytes member i sends member j.
func (in *vinst) cell(i, j int) int64 {
	f := share(in.a[i], in.b[j], in.total)
	lo, hi := max(in.rowPre[i], in.colPre[j]), min(in.rowPre[i+1], in.colPre[j+1])
	return f + max(0, hi-lo)
}

// row returns what member i sends each member; col what it receives from
// each. Where the totals disagree (the senders' sum is not the
// receivers'), each side spreads its own total in proportion to the
// other side's, and check reports the mismatch.
func (in *vinst) row(i int) []int64 {
	return in.line(in.a[i], in.b, func(j int) int64 { return in.cell(i, j) })
}

func (in *vinst) col(i int) []int64 {
	return in.line(in.b[i], in.a, func(j int) int64 { return in.cell(j, i) })
}

// line returns a row or column of the matrix: cell(j) for each member j,
// or total spread in proportion to the other side's totals, weights.
func (in *vinst) line(total int64, weights []int64, cell func(j int) int64) []int64 {
	in.matrix()
	if !in.consistent {
		return proportional(total, weights)
	}
	v := make([]int64, len(weights))
	if in.total > 0 {
		for j := range v {
			v[j] = cell(j)
		}
	}
	return v
}

// proportional spreads total over the members in proportion to weights
// (evenly if they are all zero), the bytes left over one each to the
// first members.
func proportional(total int64, weights []int64) []int64 {
	w := sum(weights)
	if w == 0 {
		return spread(total, len(weights))
	}
	v := make([]int64, len(weights))
	left := total
	for j, x := range weights {
		v[j] = share(total, x, w)
		left -= v[j]
	}
	for j := 0; left > 0; j = (j + 1) % len(v) {
		v[j]++
		left--
	}
	return v
}
