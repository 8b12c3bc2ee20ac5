package check

import (
	"sort"

	"kairos/internal/reqstore"
	"kairos/trace"
)

// SimGrid's replay of a TI trace finds the request of a wait or test by
// its (source, destination, tag) key, not by an id: the oldest request
// stored under the key. A test puts it back at the end of the key's queue,
// as the request itself if it is still pending, as a null request if it
// completed, and a wait or test that pops a null request does nothing.
// The reader cannot know which (it depends on the replay), so the check
// resolves keyed waits and tests itself, with its replay's completions: a
// program that completes its sends by MPI_Test (Ray, task farms) then has
// its requests completed by its tests, as in SimGrid, not left over.

// byKey reports whether a wait or test names its request by key (TI).
func byKey(ev *trace.Event) bool { return ev.Source != trace.NoRank && ev.Partner != trace.NoRank }

// keyOf returns the key a request started by ev on rank r is stored under.
func keyOf(r int, ev *trace.Event) reqstore.Key {
	if ev.Kind == trace.Irecv {
		src := ev.Partner
		if src == trace.AnySource {
			src = reqstore.AnySourceKey
		}
		return reqstore.Key{Src: src, Dst: int32(r), Tag: ev.Tag}
	}
	return reqstore.Key{Src: int32(r), Dst: ev.Partner, Tag: ev.Tag}
}

// byKeys switches rank r to keyed waits at its first: its outstanding
// requests are stored in the order they started.
func (e *engine) byKeys(r int) *waits {
	w := e.ranks[r].waits
	if w.store != nil {
		return w
	}
	w.store = &reqstore.Store[*request]{}
	qs := make([]*request, 0, w.reqs.Len())
	for _, q := range w.reqs.All() {
		qs = append(qs, *q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].index < qs[j].index })
	for _, q := range qs {
		w.store.Push(q.key, q)
	}
	return w
}

// popKey pops the oldest request stored under ev's key (nil for none or a
// null one); it reports a wait on a rank with nothing stored, where
// SimGrid's replay aborts (a test there does nothing): an error, or a
// warning where an earlier test completed a request that the replay may
// not have completed there, so that the replay may still find one.
func (e *engine) popKey(r int, ev *trace.Event) *request {
	w := e.byKeys(r)
	k := reqstore.Key{Src: ev.Source, Dst: ev.Partner, Tag: ev.Tag}
	q, ok := w.store.Pop(k)
	if !ok && ev.Kind == trace.Wait {
		if w.store.Len() == 0 {
			switch {
			case len(w.guessed) == 0:
				e.problem(r, e.ranks[r].index, "%s of %d to %d tag %d with no request outstanding (SimGrid's replay aborts)",
					ev.Kind, ev.Source, ev.Partner, ev.Tag)
			case e.static:
				e.rep.add(Warning, r, e.ranks[r].index, "%s of %d to %d tag %d may find no request outstanding, where SimGrid's replay aborts: "+
					"whether an earlier test of the rank completes a request there depends on the replay's timing",
					ev.Kind, ev.Source, ev.Partner, ev.Tag)
			}
		}
		// Where the replay has one request more under k, this wait takes it.
		if n := w.guessed[k]; n > 1 {
			w.guessed[k] = n - 1
		} else {
			delete(w.guessed, k)
		}
	}
	return q
}

// keyedWait waits for the request of ev's key, if one is stored.
func (e *engine) keyedWait(r int, ev *trace.Event) {
	if q := e.popKey(r, ev); q != nil {
		rs := &e.ranks[r]
		rs.waitReqs = append(rs.waitReqs[:0], q)
		rs.pend = pReqs
	}
}

// keyedTest tests the request of ev's key: complete, it is done and a null
// request takes its place; pending, it goes back, taken as completed by
// the test if nothing waits for it later.
func (e *engine) keyedTest(r int, ev *trace.Event) {
	q := e.popKey(r, ev)
	if q == nil {
		return
	}
	w := e.ranks[r].waits
	if q.complete() {
		if !e.surely(q) {
			if w.guessed == nil {
				w.guessed = map[reqstore.Key]int{}
			}
			w.guessed[q.key]++
		}
		w.forget(q)
		w.store.Push(q.key, nil)
		return
	}
	q.tested = true
	w.store.Push(q.key, q)
}

// surely reports whether a request the static pass completes at a test
// is complete there in a replay with the protocol checked, whatever its
// timing: under SimGrid's, a send below the eager limit (detached) is,
// a larger send waits for its receive, and a receive for its message.
func (e *engine) surely(q *request) bool {
	if !e.static || e.target != SimGrid || q.m == nil {
		return true
	}
	return !q.m.recv && q.m.bytes < e.limit
}
