package waitstate

import (
	"slices"

	"kairos/trace"
)

// entry is one synchronization point of a rank: a call where it
// synchronized with other ranks, waiting (a wait state) or being waited
// for (the causer's end).
type entry struct {
	wait       trace.Time // waiting time; 0 at a causer's end
	completion trace.Time // time in the call after the first synchronizing rank left it
	cost       float64    // seconds of later waiting this wait state caused (long-term)
	call       int32
	peer       int32 // the rank it synchronized with, or -1
	group      int32 // index of the set of ranks it synchronized with, or -1
	causer     int32 // wait states: the rank that caused it
	causerCall int32 // and that rank's call
	kind       Kind  // of the wait state
}

// with reports whether the synchronization point includes rank r.
func (d *detector) with(e *entry, r int32) bool {
	if e.peer == r {
		return true
	}
	if e.group < 0 {
		return false
	}
	g := d.groups[e.group]
	return int(r>>6) < len(g) && g[r>>6]&(1<<(r&63)) != 0
}

// detector finds the wait states and synchronization points.
type detector struct {
	ranks   []rankData
	entries [][]entry
	groups  [][]uint64       // sets of world ranks
	byComm  map[uint32]int32 // the group of all the members of a communicator
	// violations counts the receives that ended before their send
	// began and the collective calls that ended before their latest
	// member entered: clock-condition violations.
	violations int
}

// newDetector makes a detector of ranks.
func newDetector(ranks []rankData) *detector {
	return &detector{ranks: ranks, entries: make([][]entry, len(ranks)), byComm: map[uint32]int32{}}
}

func (d *detector) span(r, i int32) *span { return &d.ranks[r].spans[i] }

// timed reports whether span i of rank r has times.
func (d *detector) timed(r, i int32) bool { return d.span(r, i).flags&untimed == 0 }

func (d *detector) add(r int32, e entry) { d.entries[r] = append(d.entries[r], e) }

// group returns the index of a new set holding ranks.
func (d *detector) group(ranks []int32) int32 {
	g := make([]uint64, (len(d.ranks)+63)/64)
	for _, r := range ranks {
		g[r>>6] |= 1 << (r & 63)
	}
	d.groups = append(d.groups, g)
	return int32(len(d.groups) - 1)
}

// commGroup returns the set of all the members of c.
func (d *detector) commGroup(c *collective) int32 {
	k := c.comm
	if c.kind == trace.Init || c.kind == trace.Finalize {
		k = initComm(c.kind)
	}
	if g, ok := d.byComm[k]; ok {
		return g
	}
	g := d.group(c.members)
	d.byComm[k] = g
	return g
}

// candidate is the longest wait of a completion call so far: MPI_Waitall
// counts the message that arrived last (Scalasca's rule).
type candidate struct {
	wait trace.Time
	msg  int
}

// messages finds the late senders and then the late receivers of the
// matched messages, with both ends' synchronization points.
func (d *detector) messages(msgs []message) {
	late := make([]map[int32]candidate, len(d.ranks)) // per receiver: completion call -> late sender
	for i, m := range msgs {
		s, v := &d.ranks[m.src].sends[m.send], &d.ranks[m.dst].recvs[m.recv]
		if v.done < 0 || !d.timed(m.src, s.post) || !d.timed(m.dst, v.done) {
			continue
		}
		post, done := d.span(m.src, s.post), d.span(m.dst, v.done)
		if post.enter > d.ranks[m.dst].exit(v) {
			d.violations++
		}
		if idle := min(post.enter, d.ranks[m.dst].exit(v)) - done.enter; idle > 0 {
			keep(&late[m.dst], v.done, candidate{idle, i})
		}
	}
	blocked := make([]map[int32]candidate, len(d.ranks)) // per sender: completion call -> late receiver
	for i, m := range msgs {
		s, v := &d.ranks[m.src].sends[m.send], &d.ranks[m.dst].recvs[m.recv]
		if s.done < 0 || !d.timed(m.src, s.done) || !d.timed(m.dst, v.post) {
			continue
		}
		if _, ok := late[m.src][s.done]; ok {
			continue
		}
		done, post := d.span(m.src, s.done), d.span(m.dst, v.post)
		if idle := post.enter - done.enter; d.ranks[m.src].exit(s) > post.enter && idle > 0 {
			keep(&blocked[m.src], s.done, candidate{idle, i})
		}
	}
	d.reserve(msgs, late, blocked)
	for r := range late {
		for call, c := range late[r] {
			m := msgs[c.msg]
			d.pair(LateSender, m.dst, call, c.wait, m.src, d.ranks[m.src].sends[m.send].post)
		}
		for call, c := range blocked[r] {
			m := msgs[c.msg]
			d.pair(LateReceiver, m.src, call, c.wait, m.dst, d.ranks[m.dst].recvs[m.recv].post)
		}
	}
}

// reserve makes each rank's entries for its point-to-point wait states
// (late and blocked), as the waiting rank and as the causer, and for one
// a collective call: a run of tens of millions of messages grows no list
// by copies, and holds no room for the messages nobody waited for.
func (d *detector) reserve(msgs []message, late, blocked []map[int32]candidate) {
	n := make([]int, len(d.ranks))
	for r := range late {
		for _, c := range late[r] {
			n[r]++
			n[msgs[c.msg].src]++
		}
		for _, c := range blocked[r] {
			n[r]++
			n[msgs[c.msg].dst]++
		}
	}
	for r := range d.entries {
		d.entries[r] = slices.Grow(d.entries[r], n[r]+len(d.ranks[r].colls)+1)
	}
}

func keep(m *map[int32]candidate, call int32, c candidate) {
	if *m == nil {
		*m = map[int32]candidate{}
	}
	if old, ok := (*m)[call]; !ok || c.wait > old.wait {
		(*m)[call] = c
	}
}

// pair records a point-to-point wait state of rank w at call, caused by
// rank c at call cc, and both ends' synchronization points. Each end's
// completion time is its time in the call after the other end left.
func (d *detector) pair(k Kind, w, call int32, wait trace.Time, c, cc int32) {
	ws, cs := d.span(w, call), d.span(c, cc)
	d.add(w, entry{call: call, wait: wait, completion: max(ws.exit-cs.exit, 0), peer: c, group: -1,
		kind: k, causer: c, causerCall: cc})
	d.add(c, entry{call: cc, completion: max(cs.exit-ws.exit, 0), peer: w, group: -1, causer: -1})
}

// collective finds the wait states of one collective instance.
func (d *detector) collective(c *collective) {
	n := len(c.members)
	enter, exit := make([]trace.Time, n), make([]trace.Time, n)
	payload := false
	for i, r := range c.members {
		if !d.timed(r, c.calls[i]) || d.span(r, c.calls[i]).flags&completed != 0 {
			return
		}
		s := d.span(r, c.calls[i])
		enter[i], exit[i] = s.enter, s.exit
		payload = payload || c.data[i] != 0
	}
	if n < 2 {
		return
	}
	root := slices.Index(c.members, c.root)
	d.violations += violations(c, enter, exit, root)
	switch c.kind {
	case trace.Init:
		if slices.Min(exit) > slices.Max(enter) { // no wait state, and a synchronization only if all overlapped
			d.all(c, enter, exit, -1, 0)
		}
	case trace.Barrier:
		d.all(c, enter, exit, latest(enter, nil), WaitBarrier)
	case trace.Finalize:
		d.all(c, enter, exit, latest(enter, nil), WaitFinalize)
	case trace.Allreduce, trace.Allgather, trace.Allgatherv, trace.Alltoall, trace.ReduceScatter:
		if payload {
			d.nxn(c, enter, exit)
		}
	case trace.Bcast, trace.Scatter, trace.Scatterv:
		if payload && root >= 0 {
			d.oneToN(c, enter, exit, root)
		}
	case trace.Reduce, trace.Gather, trace.Gatherv:
		if payload && root >= 0 {
			if l := latest(enter, c.data); l >= 0 && l != root && enter[root] < enter[l] {
				d.waitFor(c, EarlyReduce, []int{root}, l, enter, exit)
			}
		}
	case trace.Scan, trace.Exscan:
		if payload {
			d.scan(c, enter, exit)
		}
	}
}

// violations counts the members of collective c that left it before a
// member whose data they receive entered (clock-condition violations):
// any member of a barrier before the last; a receiving member of an N×N
// before the latest sending one; a 1×N's receiving member before the
// root; an N×1's root before the latest sending member; a scan's
// receiving member before the latest sending one up to it (before it, an
// exscan's). A broadcast's root, a reduction's senders, a scan's first
// members may leave before the last member enters.
func violations(c *collective, enter, exit []trace.Time, root int) int {
	n := 0
	count := func(i int, by trace.Time, waits bool) {
		if waits && exit[i] < by {
			n++
		}
	}
	gets := func(i int) bool { return c.data[i]&receives != 0 }
	switch c.kind {
	case trace.Barrier:
		last := slices.Max(enter)
		for i := range exit {
			count(i, last, true)
		}
	case trace.Allreduce, trace.Allgather, trace.Allgatherv, trace.Alltoall, trace.ReduceScatter:
		if l := latest(enter, c.data); l >= 0 {
			for i := range exit {
				count(i, enter[l], gets(i))
			}
		}
	case trace.Bcast, trace.Scatter, trace.Scatterv:
		if root >= 0 {
			for i := range exit {
				count(i, enter[root], i != root && gets(i))
			}
		}
	case trace.Reduce, trace.Gather, trace.Gatherv:
		if l := latest(enter, c.data); root >= 0 && l >= 0 {
			count(root, enter[l], gets(root))
		}
	case trace.Scan, trace.Exscan:
		// The latest sending member up to each (before it, an exscan's),
		// kept as the members go: one pass.
		var last trace.Time
		seen := false
		for i := range exit {
			if c.kind == trace.Scan && c.data[i]&sends != 0 {
				last, seen = latestOf(last, seen, enter[i]), true
			}
			count(i, last, seen && gets(i))
			if c.kind == trace.Exscan && c.data[i]&sends != 0 {
				last, seen = latestOf(last, seen, enter[i]), true
			}
		}
	}
	return n
}

// latestOf is the later of last (if seen) and t.
func latestOf(last trace.Time, seen bool, t trace.Time) trace.Time {
	if !seen {
		return t
	}
	return max(last, t)
}

// latest returns the member that entered last among those that send
// (all when data is nil), the first of equals; -1 if none sends.
func latest(enter []trace.Time, data []dataFlags) int {
	l := -1
	for i := range enter {
		if (data == nil || data[i]&sends != 0) && (l < 0 || enter[i] > enter[l]) {
			l = i
		}
	}
	return l
}

// all records a collective where every member synchronizes with every
// other (a barrier, MPI_Init, MPI_Finalize): the members that entered
// before member l waited for it (no wait state when l is -1).
func (d *detector) all(c *collective, enter, exit []trace.Time, l int, k Kind) {
	g := d.commGroup(c)
	first := slices.Min(exit)
	lastIn := slices.Max(enter)
	for i, r := range c.members {
		e := entry{call: c.calls[i], completion: max(exit[i]-max(first, lastIn), 0), peer: -1, group: g, causer: -1}
		if l >= 0 && i != l {
			if w := min(enter[l], exit[i]) - enter[i]; w > 0 {
				e.wait, e.kind, e.causer, e.causerCall = w, k, c.members[l], c.calls[l]
			}
		}
		d.add(r, e)
	}
}

// nxn records an N×N collective: members wait for the latest; when all
// overlapped (the first to leave left after the last entered), all
// synchronized, else the waiting ones and the latest.
func (d *detector) nxn(c *collective, enter, exit []trace.Time) {
	if slices.Min(exit) > slices.Max(enter) {
		d.all(c, enter, exit, latest(enter, nil), WaitNxN)
		return
	}
	l := latest(enter, c.data)
	if l < 0 {
		return
	}
	var waiting []int
	for i := range c.members {
		if i != l && enter[i] < enter[l] {
			waiting = append(waiting, i)
		}
	}
	d.waitFor(c, WaitNxN, waiting, l, enter, exit)
}

// oneToN records a 1×N collective: members that entered before the root
// wait for it.
func (d *detector) oneToN(c *collective, enter, exit []trace.Time, root int) {
	var waiting []int
	for i := range c.members {
		if i != root && enter[i] < enter[root] {
			waiting = append(waiting, i)
		}
	}
	d.waitFor(c, LateBroadcast, waiting, root, enter, exit)
}

// scan records a prefix reduction: each member waits for the latest of
// the members up to it.
func (d *detector) scan(c *collective, enter, exit []trace.Time) {
	l := -1
	for i := range c.members {
		if c.data[i]&sends != 0 && (l < 0 || enter[i] > enter[l]) {
			l = i
		}
		if l >= 0 && l != i && enter[i] < enter[l] {
			d.waitFor(c, EarlyScan, []int{i}, l, enter, exit)
		}
	}
}

// waitFor records members waiting waiting for member l, and l's end,
// synchronized with them.
func (d *detector) waitFor(c *collective, k Kind, waiting []int, l int, enter, exit []trace.Time) {
	if len(waiting) == 0 {
		return
	}
	first := exit[l]
	ranks := make([]int32, 0, len(waiting))
	for _, i := range waiting {
		first = min(first, exit[i])
		ranks = append(ranks, c.members[i])
	}
	first = max(first, enter[l])
	lr := c.members[l]
	for _, i := range waiting {
		e := entry{call: c.calls[i], completion: max(exit[i]-first, 0), peer: lr, group: -1, causer: -1}
		if w := min(enter[l], exit[i]) - enter[i]; w > 0 {
			e.wait, e.kind, e.causer, e.causerCall = w, k, lr, c.calls[l]
		}
		d.add(c.members[i], e)
	}
	end := entry{call: c.calls[l], completion: max(exit[l]-first, 0), peer: -1, group: -1, causer: -1}
	if len(ranks) == 1 {
		end.peer = ranks[0]
	} else {
		end.group = d.group(ranks)
	}
	d.add(lr, end)
}

// sortEntries orders each rank's synchronization points by call.
func (d *detector) sortEntries() {
	for r := range d.entries {
		slices.SortFunc(d.entries[r], func(a, b entry) int {
			for _, c := range [...]int64{int64(a.call - b.call), int64(a.peer - b.peer), int64(a.group - b.group),
				int64(a.causer - b.causer), int64(a.causerCall - b.causerCall), int64(a.kind) - int64(b.kind), int64(a.wait - b.wait)} {
				if c != 0 {
					return int(max(min(c, 1), -1))
				}
			}
			return 0
		})
	}
}
