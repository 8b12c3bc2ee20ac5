package pattern

import "kairos/trace"

// lamport sets every event's enter (its order key) to its Lamport clock, for traces
// without timestamps: one more than the larger of the rank's previous
// clock and, for a receive, its message's send; a collective takes one
// more than the largest clock of its members on entry. Ranks advance
// until they wait for a send or a collective partner not yet reached.
// Calls a cycle leaves unreached (an inconsistent trace) continue their
// rank's clock in program order.
func lamport(ranks []rankData, l *links, keys []symKey) {
	n := len(ranks)
	cursor := make([]int, n)
	clock := make([]int64, n)
	waiting := make([]struct{ rank, idx int32 }, n) // the send each rank waits for
	queued := make([]bool, n)
	arrived := map[collKey][]int32{}
	queue := make([]int32, 0, n)
	for r := range ranks {
		waiting[r].rank = -1
		queue = append(queue, int32(r))
		queued[r] = true
	}
	done := func(r, i int32) bool { return int(i) < cursor[r] }
	wake := func(r int32) {
		if !queued[r] {
			queued[r] = true
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		r := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		queued[r] = false
		ev := ranks[r].ev
	run:
		for cursor[r] < len(ev) {
			i := cursor[r]
			e := &ev[i]
			sk := &keys[e.sym]
			c := clock[r]
			if s := l.sendOf[r][i]; s >= 0 {
				src := sk.recvSource()
				if !done(src, s) {
					waiting[r].rank, waiting[r].idx = src, s
					break run
				}
				c = max(c, int64(ranks[src].ev[s].enter))
			}
			if k := l.coll[r][i]; k >= 0 {
				key := collKey{sk.comm, k}
				members := append(arrived[key], r)
				arrived[key] = members
				if int32(len(members)) < l.collSize.at(key) {
					break run // the rank resumes when the last member arrives
				}
				for _, m := range members {
					c = max(c, clock[m])
				}
				for _, m := range members {
					ranks[m].ev[cursor[m]].enter = trace.Time(c + 1)
					clock[m] = c + 1
					cursor[m]++
					if m != r {
						wake(m)
					}
				}
				delete(arrived, key)
				continue
			}
			e.enter = trace.Time(c + 1)
			clock[r] = c + 1
			cursor[r]++
			if e.kind.IsSend() || e.kind == trace.SendRecv {
				if p := sk.partner; p >= 0 && int(p) < n && waiting[p].rank == r && waiting[p].idx == int32(i) {
					waiting[p].rank = -1
					wake(p)
				}
			}
		}
	}
	for r := range ranks {
		for i := cursor[r]; i < len(ranks[r].ev); i++ {
			clock[r]++
			ranks[r].ev[i].enter = trace.Time(clock[r])
		}
	}
}
