package clock

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"kairos/trace"
)

// commState is a communicator's collective bookkeeping: its members, how
// many collectives each member has entered, and the open instances.
type commState struct {
	id      uint32
	members []int32       // world ranks in communicator order
	index   map[int32]int // world rank -> communicator rank; nil for the world
	seq     []uint64      // collectives entered, per member
	insts   map[uint64]*collective
	local   bool // every member on one node
}

// collective is one collective call, shared by its members.
type collective struct {
	kind    trace.Kind
	root    int32
	seq     uint64
	size    int
	arrived int
	left    int
	max     []float64 // max over members of the logical entry, per configuration
	waiters []int32
}

// commOf returns the bookkeeping of communicator id.
func (e *engine) commOf(id uint32) *commState {
	if cs := e.comms[id]; cs != nil {
		return cs
	}
	n := len(e.ranks)
	members := e.src.Meta().Members(id, n)
	if len(members) == 0 {
		return nil
	}
	cs := &commState{id: id, members: members, seq: make([]uint64, len(members)), insts: map[uint64]*collective{}, local: true}
	if id != trace.WorldComm {
		cs.index = make(map[int32]int, len(members))
		for i, r := range members {
			if r < 0 || int(r) >= n {
				return nil
			}
			cs.index[r] = i
		}
	}
	for _, r := range members {
		if e.ranks[r].node != e.ranks[members[0]].node {
			cs.local = false
		}
	}
	e.comms[id] = cs
	return cs
}

// member returns r's rank in cs.
func (cs *commState) member(r int32) (int, bool) {
	if cs.index == nil {
		return int(r), int(r) < len(cs.members)
	}
	i, ok := cs.index[r]
	return i, ok
}

// enterCollective replays st's arrival at a collective: the collective
// first synchronises its members (Section III-B), so st blocks until the
// last one has entered.
func (e *engine) enterCollective(st *rankState, ev *trace.Event) bool {
	cs := e.commOf(ev.Comm)
	if cs == nil {
		e.fail(st, "communicator %d is not defined in the trace's metadata", ev.Comm)
		return true
	}
	mi, ok := cs.member(st.id)
	if !ok {
		e.fail(st, "rank %d is not a member of communicator %d", st.id, ev.Comm)
		return true
	}
	if _, ok := cs.member(ev.Partner); ev.Kind.IsRooted() && ev.Partner != trace.NoRank && (ev.Partner < 0 || !ok) {
		e.fail(st, "%s: root %d is not a member of communicator %d", ev.Kind, ev.Partner, ev.Comm)
		return true
	}
	k := cs.seq[mi]
	cs.seq[mi]++
	col := cs.insts[k]
	if col == nil {
		col = &collective{kind: ev.Kind, root: ev.Partner, seq: k, size: len(cs.members), max: e.vector()}
		for c := range col.max {
			col.max[c] = math.Inf(-1)
		}
		cs.insts[k] = col
	} else if col.kind != ev.Kind || ev.Kind.IsRooted() && col.root != ev.Partner {
		e.fail(st, "collective #%d on communicator %d is %s here but %s on another member", k, ev.Comm, describeColl(ev.Kind, ev.Partner), describeColl(col.kind, col.root))
		return true
	}
	mx := col.max
	for c, v := range st.clk.v {
		if t := v + st.lag; t > mx[c] {
			mx[c] = t
		}
	}
	col.arrived++
	st.coll, st.cs = col, cs
	if col.arrived == col.size {
		for _, w := range col.waiters {
			e.wake(w)
		}
		col.waiters = nil
	} else {
		col.waiters = append(col.waiters, st.id)
	}
	return e.block(st)
}

func describeColl(k trace.Kind, root int32) string {
	if k.IsRooted() {
		return fmt.Sprintf("%s root=%d", k, root)
	}
	return k.String()
}

// leaveCollective gives st the collective's exit,
// t_out = max(t_in^c) + model_time(n) (Section III-D): the time from its
// entry to the last member's entry is wait, the model's α terms latency,
// its β terms bandwidth time (Figure 3).
func (e *engine) leaveCollective(st *rankState) {
	col, cs, ev := st.coll, st.cs, st.ev
	cost := collectiveCost(ev, col.size)
	a, b, m := e.aInter, e.bInter, e.inter
	if cs.local {
		a, b, m = e.aIntra, e.bIntra, e.intra
	}
	l0, b0 := m.terms(cost.m)
	kl, kb := cost.kL*l0, cost.kB*b0
	clk, from := e.writeClock(st)
	n := len(clk)
	mx, from, wait, lat, bw, a, b := col.max[:n], from[:n], st.wait[:n], st.lat[:n], st.bw[:n], a[:n], b[:n]
	lag := st.lag
	for c := 0; c < n; c++ {
		t := from[c] + lag
		l, w := a[c]*kl, b[c]*kb
		wait[c] += mx[c] - t
		lat[c] += l
		bw[c] += w
		clk[c] = mx[c] + l + w
	}
	st.lag = 0
	col.left++
	if col.left == col.size {
		e.free(col.max)
		delete(cs.insts, col.seq)
	}
	st.coll, st.cs = nil, nil
	if ev.Kind.HasReduction() && !ev.HasTime {
		e.compute(st, &trace.Event{Kind: trace.Compute, Compute: ev.Compute})
	}
}

// BlockedRank is a rank the replay could not finish: where it stopped and
// what it waits for.
type BlockedRank struct {
	Rank     int
	Event    int64  // index of the blocking event in the rank's stream
	Call     string // the event
	Position string // "file:line" where the reader knows it
	WaitsFor string
}

// DeadlockError reports a trace whose replay cannot finish: every rank
// that has not ended waits for something no rank will produce (an
// unmatched receive, a collective some member never calls, a cycle of
// rendezvous sends).
type DeadlockError struct {
	Blocked []BlockedRank // the first ranks, up to 8
	Total   int           // number of blocked ranks
}

// Error lists the blocked ranks and what each waits for.
func (d *DeadlockError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the replay cannot finish: %d rank(s) wait for what no rank will do", d.Total)
	for _, r := range d.Blocked {
		fmt.Fprintf(&b, "\n  rank %d event %d (%s)", r.Rank, r.Event, r.Call)
		if r.Position != "" {
			fmt.Fprintf(&b, " at %s", r.Position)
		}
		fmt.Fprintf(&b, ": waits for %s", r.WaitsFor)
	}
	if d.Total > len(d.Blocked) {
		fmt.Fprintf(&b, "\n  ... and %d more", d.Total-len(d.Blocked))
	}
	return b.String()
}

// UnmatchedError reports messages whose send or receive has no partner
// at the end of the replay.
type UnmatchedError struct {
	Messages []string `json:"messages"` // the first ones, up to 8
	Total    int      `json:"total"`
}

// Error lists the unmatched messages.
func (u *UnmatchedError) Error() string {
	s := fmt.Sprintf("%d unmatched message(s):\n  %s", u.Total, strings.Join(u.Messages, "\n  "))
	if u.Total > len(u.Messages) {
		s += fmt.Sprintf("\n  ... and %d more", u.Total-len(u.Messages))
	}
	return s
}

// finish checks that every rank ended and every message was received.
func (e *engine) finish() error {
	d := &DeadlockError{}
	for i := range e.ranks {
		st := &e.ranks[i]
		if st.state == done {
			continue
		}
		d.Total++
		if len(d.Blocked) < maxReported {
			d.Blocked = append(d.Blocked, BlockedRank{Rank: i, Event: st.idx, Call: st.ev.String(), Position: strings.TrimPrefix(position(st.rd), " at "), WaitsFor: e.waitsFor(st)})
		}
	}
	if d.Total > 0 {
		return d
	}
	u := &UnmatchedError{}
	note := func(s string) {
		u.Total++
		if len(u.Messages) < maxReported {
			u.Messages = append(u.Messages, s)
		}
	}
	for i := range e.ranks {
		st := &e.ranks[i]
		srcs := make([]int32, 0, st.inbox.Len())
		for s := range st.inbox.All() {
			srcs = append(srcs, s)
		}
		sort.Slice(srcs, func(a, b int) bool { return srcs[a] < srcs[b] })
		for _, s := range srcs {
			q := st.inbox.Get(s)
			for _, m := range q.sends {
				note(fmt.Sprintf("rank %d event %d sends %d bytes to rank %d with tag %d, which never receives it", m.src, m.sendIdx, m.n, m.dst, m.tag))
			}
			for _, rq := range q.recvs {
				note(fmt.Sprintf("rank %d event %d receives from rank %d with tag %d, which never sends it", rq.owner, rq.idx, rq.src, rq.tag))
			}
		}
		for _, rq := range st.anyRecv {
			note(fmt.Sprintf("rank %d event %d receives from any rank with tag %d, and no message comes", rq.owner, rq.idx, rq.tag))
		}
	}
	if u.Total > 0 {
		return u
	}
	return nil
}

// waitsFor describes what blocked rank st waits for.
func (e *engine) waitsFor(st *rankState) string {
	if col := st.coll; col != nil {
		var missing []string
		for i, r := range st.cs.members {
			if st.cs.seq[i] <= col.seq {
				missing = append(missing, fmt.Sprint(r))
				if len(missing) == maxReported {
					missing = append(missing, "...")
					break
				}
			}
		}
		return fmt.Sprintf("collective #%d (%s) on communicator %d: %d of %d members entered; not entered: rank(s) %s",
			col.seq, col.kind, st.cs.id, col.arrived, col.size, strings.Join(missing, ", "))
	}
	for _, rq := range st.pending {
		if rq.ready() {
			continue
		}
		if rq.send {
			return fmt.Sprintf("rank %d to post the receive of its %d-byte rendezvous message (tag %d); rank %d %s",
				rq.m.dst, rq.m.n, rq.m.tag, rq.m.dst, e.status(rq.m.dst))
		}
		if rq.src == trace.AnySource {
			return fmt.Sprintf("a message from any rank with tag %d", rq.tag)
		}
		return fmt.Sprintf("a message from rank %d with tag %d; rank %d %s", rq.src, rq.tag, rq.src, e.status(rq.src))
	}
	return "nothing (internal error)"
}

// status says where rank r stands.
func (e *engine) status(r int32) string {
	st := &e.ranks[r]
	switch st.state {
	case done:
		return "has finished"
	case blocked:
		return fmt.Sprintf("is blocked at its event %d (%s)", st.idx, st.ev.String())
	}
	return "has not blocked"
}
