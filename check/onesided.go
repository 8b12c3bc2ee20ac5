package check

import (
	"fmt"
	"sort"

	"kairos/trace"
)

// One-sided communication and MPI-IO.
//
// Window creation and release, fences, and the opening and closing of a
// file are collectives of the window's (file's) communicator, checked as
// the others. Every rank's epochs on each window are followed: a
// transfer (put, get, accumulate, atomics) must be in an access epoch
// that covers its target (between fences, in a lock or lock_all epoch,
// or a start..complete epoch whose group holds the target); a
// request-based one (MPI_Rput...) only in a passive-target (lock) epoch,
// and its request is completed as a point-to-point one's. Locks are not
// taken twice nor released unheld, flushes only in passive-target
// epochs, a start or post epoch closed before the next, a fence never
// inside a lock or start/post epoch. A window is freed with no epoch
// open and every transfer completed by the synchronisation that closes
// its epoch (a fence after the last fence epoch's transfers, unlock,
// complete). At the end, windows still open are warnings, epochs still
// open errors. Across ranks, each start of an origin naming a target
// must meet a post of that target naming the origin, as many of one as
// of the other; in the deadlock replay a start waits for the posts it
// needs and a wait for the completes of its group.

// winKey names one rank's instance of a window.
type winKey struct {
	rank   int32
	handle uint32
}

// winState is one rank's epochs on one window.
type winState struct {
	index    int // the event that created it
	comm     uint32
	fenced   bool            // a fence opened a fence epoch
	fenceOps int             // transfers since the last fence
	lockAll  bool            // in a lock_all epoch
	locks    map[int32]int32 // held locks by target: their type
	access   []int32         // the group of an open start epoch (world ranks), nil if none
	started  bool
	exposure []int32 // the group of an open post epoch
	posted   bool
}

// pscwPair counts the starts of an origin naming a target and the posts
// of the target naming the origin, and their completes and waits.
type pscwPair struct {
	starts, posts, completes, waits int
	startIndex, postIndex           int // the origin's first start, the target's first post
}

// oneSidedState is the engine's state for windows and files.
type oneSidedState struct {
	wins  map[winKey]*winState
	files map[winKey]int // the event that opened each rank's file
	pairs map[[2]int32]*pscwPair
	// blocking: a start or wait was met, which the deadlock replay
	// blocks and the static pass does not.
	blocking bool
}

func (e *engine) sideState() *oneSidedState {
	if e.side == nil {
		e.side = &oneSidedState{wins: map[winKey]*winState{}, files: map[winKey]int{}, pairs: map[[2]int32]*pscwPair{}}
	}
	return e.side
}

// oneSided applies a one-sided or I/O event of rank r.
func (e *engine) oneSided(r int, ev *trace.Event) {
	if ev.Kind.IsIO() {
		e.file(r, ev)
		return
	}
	st := e.sideState()
	rs := &e.ranks[r]
	key := winKey{int32(r), ev.Handle}
	w := st.wins[key]
	if ev.Kind == trace.WinCreate {
		if w != nil && e.static {
			e.problem(r, rs.index, "win_create of window %d, which its event %d created and no win_free released", ev.Handle, w.index)
		}
		st.wins[key] = &winState{index: rs.index, comm: ev.Comm}
		e.collective(r, ev)
		return
	}
	if w == nil {
		if e.static {
			e.problem(r, rs.index, "%s on window %d, which this rank has not created (or has freed)", ev.Kind, ev.Handle)
		}
		if ev.Kind == trace.WinFence || ev.Kind == trace.WinFree {
			e.collective(r, ev)
		}
		return
	}
	if !e.static {
		e.replayWindow(r, ev, w)
		return
	}
	switch {
	case ev.Kind.IsOneSided():
		e.transfer(r, ev, w)
	case ev.Kind == trace.WinFence:
		if w.lockAll || len(w.locks) > 0 || w.started || w.posted {
			e.problem(r, rs.index, "win_fence on window %d inside a lock or start/post epoch", ev.Handle)
		}
		w.fenced, w.fenceOps = true, 0
		e.collective(r, ev)
	case ev.Kind == trace.WinFree:
		e.freeWindow(r, ev, w)
		delete(st.wins, key)
		e.collective(r, ev)
	default:
		e.epoch(r, ev, w)
	}
}

// transfer checks a put, get, accumulate or atomic of rank r on w.
func (e *engine) transfer(r int, ev *trace.Event, w *winState) {
	rs := &e.ranks[r]
	if !e.peerOK(r, &trace.Event{Kind: ev.Kind, Comm: w.comm}, ev.Partner, "target", false) {
		return
	}
	passive := w.lockAll || w.locks[ev.Partner] != 0
	switch {
	case ev.Request != 0 && !passive:
		e.problem(r, rs.index, "%s to %d on window %d has a request but is not in a lock or lock_all epoch of its target (MPI allows request-based operations only there)",
			ev.Kind, ev.Partner, ev.Handle)
	case !passive && !w.fenced && !contains(w.access, ev.Partner):
		e.problem(r, rs.index, "%s to %d on window %d outside any access epoch to its target (no fence, lock or start)", ev.Kind, ev.Partner, ev.Handle)
	}
	if !passive && !w.started && w.fenced {
		w.fenceOps++
	}
	if ev.Request != 0 {
		e.start(r, ev, nil, true)
	}
}

// epoch checks the locks, flushes and post/start/complete/wait of rank r.
func (e *engine) epoch(r int, ev *trace.Event, w *winState) {
	rs := &e.ranks[r]
	i := rs.index
	switch ev.Kind {
	case trace.WinLock:
		switch {
		case w.lockAll:
			e.problem(r, i, "win_lock of %d on window %d inside a lock_all epoch", ev.Partner, ev.Handle)
		case w.locks[ev.Partner] != 0:
			e.problem(r, i, "win_lock of %d on window %d, which this rank already holds", ev.Partner, ev.Handle)
		case ev.Tag != trace.LockShared && ev.Tag != trace.LockExclusive:
			e.problem(r, i, "win_lock of %d on window %d has lock type %d (want %d, shared, or %d, exclusive)", ev.Partner, ev.Handle, ev.Tag, trace.LockShared, trace.LockExclusive)
		}
		if e.peerOK(r, &trace.Event{Kind: ev.Kind, Comm: w.comm}, ev.Partner, "target", false) {
			if w.locks == nil {
				w.locks = map[int32]int32{}
			}
			w.locks[ev.Partner] = max(ev.Tag, 1)
		}
	case trace.WinUnlock:
		if w.locks[ev.Partner] == 0 {
			e.problem(r, i, "win_unlock of %d on window %d, which this rank does not hold", ev.Partner, ev.Handle)
		}
		delete(w.locks, ev.Partner)
	case trace.WinLockAll:
		if w.lockAll || len(w.locks) > 0 {
			e.problem(r, i, "win_lock_all on window %d inside a lock epoch", ev.Handle)
		}
		w.lockAll = true
	case trace.WinUnlockAll:
		if !w.lockAll {
			e.problem(r, i, "win_unlock_all on window %d without win_lock_all", ev.Handle)
		}
		w.lockAll = false
	case trace.WinFlush, trace.WinFlushLocal, trace.WinFlushAll, trace.WinFlushLocalAll:
		target := ev.Kind == trace.WinFlush || ev.Kind == trace.WinFlushLocal
		if !w.lockAll && (target && ev.Partner != trace.NoRank && w.locks[ev.Partner] == 0 || !target && len(w.locks) == 0) {
			e.problem(r, i, "%s on window %d outside a passive-target (lock) epoch", ev.Kind, ev.Handle)
		}
	case trace.WinStart:
		e.side.blocking = true
		if w.started {
			e.problem(r, i, "win_start on window %d inside a start epoch (no win_complete since the last)", ev.Handle)
		}
		w.started, w.access = true, e.groupOf(r, ev)
		e.pscw(r, w.access, func(p *pscwPair) { opened(&p.starts, &p.startIndex, i) }, false)
	case trace.WinComplete:
		if !w.started {
			e.problem(r, i, "win_complete on window %d without win_start", ev.Handle)
		}
		e.pscw(r, w.access, func(p *pscwPair) { p.completes++ }, false)
		w.started, w.access = false, nil
	case trace.WinPost:
		if w.posted {
			e.problem(r, i, "win_post on window %d inside a post epoch (no win_wait since the last)", ev.Handle)
		}
		w.posted, w.exposure = true, e.groupOf(r, ev)
		e.pscw(r, w.exposure, func(p *pscwPair) { opened(&p.posts, &p.postIndex, i) }, true)
	case trace.WinWait:
		e.side.blocking = true
		if !w.posted {
			e.problem(r, i, "win_wait on window %d without win_post", ev.Handle)
		}
		e.pscw(r, w.exposure, func(p *pscwPair) { p.waits++ }, true)
		w.posted, w.exposure = false, nil
	}
}

// groupOf returns the world ranks of the group of a post or start.
func (e *engine) groupOf(r int, ev *trace.Event) []int32 {
	if ev.NewComm == 0 {
		return nil
	}
	m := e.meta.Members(ev.NewComm, e.n)
	if m == nil {
		e.problem(r, e.ranks[r].index, "%s names group %d, which the trace does not define", ev.Kind, ev.NewComm)
	}
	return m
}

// opened counts an epoch opened at event i (an origin's start, a target's
// post) and keeps the index of the first.
func opened(count, first *int, i int) {
	if *count == 0 {
		*first = i
	}
	*count++
}

// pscw counts rank r's start or post (target side) with each member of
// group.
func (e *engine) pscw(r int, group []int32, f func(*pscwPair), target bool) {
	st := e.sideState()
	for _, g := range group {
		k := [2]int32{int32(r), g} // (origin, target)
		if target {
			k = [2]int32{g, int32(r)}
		}
		p := st.pairs[k]
		if p == nil {
			p = &pscwPair{}
			st.pairs[k] = p
		}
		f(p)
	}
}

// freeWindow checks that rank r frees w with no epoch open and every
// transfer completed.
func (e *engine) freeWindow(r int, ev *trace.Event, w *winState) {
	i := e.ranks[r].index
	if w.lockAll || len(w.locks) > 0 || w.started || w.posted {
		e.problem(r, i, "win_free of window %d with an epoch still open (%s)", ev.Handle, w.openEpochs())
	}
	if w.fenceOps > 0 {
		e.problem(r, i, "win_free of window %d: %d transfer(s) since the last fence, which no fence completes", ev.Handle, w.fenceOps)
	}
}

// openEpochs describes w's open epochs.
func (w *winState) openEpochs() string {
	var s []string
	if w.lockAll {
		s = append(s, "lock_all")
	}
	targets := make([]int32, 0, len(w.locks))
	for t := range w.locks {
		targets = append(targets, t)
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i] < targets[j] })
	for _, t := range targets {
		s = append(s, fmt.Sprintf("lock of %d", t))
	}
	if w.started {
		s = append(s, "start")
	}
	if w.posted {
		s = append(s, "post")
	}
	return fmt.Sprint(s)
}

// file applies an MPI-IO event of rank r.
func (e *engine) file(r int, ev *trace.Event) {
	st := e.sideState()
	rs := &e.ranks[r]
	key := winKey{int32(r), ev.Handle}
	switch ev.Kind {
	case trace.FileOpen:
		if _, ok := st.files[key]; ok && ev.Handle != 0 && e.static {
			e.problem(r, rs.index, "file_open of file %d, which is already open", ev.Handle)
		}
		st.files[key] = rs.index
		e.collective(r, ev)
		return
	case trace.FileClose:
		delete(st.files, key)
		e.collective(r, ev)
		return
	}
	if _, ok := st.files[key]; !ok && ev.Handle != 0 && e.static {
		e.problem(r, rs.index, "%s on file %d, which is not open", ev.Kind, ev.Handle)
	}
	switch {
	case ev.Kind == trace.FileWait && ev.Request != 0:
		e.wait(r, ev)
	case ev.Request != 0 && (ev.Kind == trace.FileRead || ev.Kind == trace.FileWrite):
		e.start(r, ev, nil, true)
	}
}

// replayWindow is the deadlock pass's part: a start waits until every
// target of its group has posted for it, a wait until every origin of
// its group has completed (SMPI's blocking start and wait); fences and
// releases are collectives.
func (e *engine) replayWindow(r int, ev *trace.Event, w *winState) {
	st := e.sideState()
	switch ev.Kind {
	case trace.WinFence:
		e.collective(r, ev)
	case trace.WinFree:
		delete(st.wins, winKey{int32(r), ev.Handle})
		e.collective(r, ev)
	case trace.WinStart:
		w.access = e.meta.Members(ev.NewComm, e.n)
		e.pscw(r, w.access, func(p *pscwPair) { p.starts++ }, false)
		e.blockOn(r, w.access, func(p *pscwPair) bool { return p.posts >= p.starts }, false, "the win_post of")
	case trace.WinComplete:
		e.pscw(r, w.access, func(p *pscwPair) { p.completes++ }, false)
		e.wakeGroup(w.access)
	case trace.WinPost:
		w.exposure = e.meta.Members(ev.NewComm, e.n)
		e.pscw(r, w.exposure, func(p *pscwPair) { p.posts++ }, true)
		e.wakeGroup(w.exposure)
	case trace.WinWait:
		e.pscw(r, w.exposure, func(p *pscwPair) { p.waits++ }, true)
		e.blockOn(r, w.exposure, func(p *pscwPair) bool { return p.completes >= p.waits }, true, "the win_complete of")
	default:
		if ev.Request != 0 && ev.Kind.IsOneSided() {
			e.start(r, ev, nil, true)
		}
	}
}

// blockOn blocks rank r until ok holds for its pair with every member of
// group.
func (e *engine) blockOn(r int, group []int32, ok func(*pscwPair) bool, target bool, what string) {
	st := e.sideState()
	rs := &e.ranks[r]
	rs.pend = pSync
	rs.sync = func() bool {
		for _, g := range group {
			k := [2]int32{int32(r), g}
			if target {
				k = [2]int32{g, int32(r)}
			}
			if p := st.pairs[k]; p == nil || !ok(p) {
				return false
			}
		}
		return true
	}
	rs.syncWhat = fmt.Sprintf("waits for %s ranks %v", what, group)
}

// wakeGroup wakes the members of group blocked in a start or wait.
func (e *engine) wakeGroup(group []int32) {
	for _, g := range group {
		if g >= 0 && int(g) < e.n {
			e.wake(g)
		}
	}
}

// finishOneSided reports, at the end of the static pass, the windows and
// files left open and the starts and posts that do not pair.
func (e *engine) finishOneSided() {
	st := e.side
	if st == nil {
		return
	}
	keys := make([]winKey, 0, len(st.wins))
	for k := range st.wins {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].rank < keys[j].rank || keys[i].rank == keys[j].rank && keys[i].handle < keys[j].handle
	})
	for _, k := range keys {
		w := st.wins[k]
		if w.lockAll || len(w.locks) > 0 || w.started || w.posted {
			e.problem(int(k.rank), w.index, "window %d ends the trace with an epoch still open (%s): its transfers are never completed", k.handle, w.openEpochs())
		} else {
			e.rep.add(Warning, int(k.rank), w.index, "window %d is never freed", k.handle)
		}
	}
	pairs := make([][2]int32, 0, len(st.pairs))
	for k := range st.pairs {
		pairs = append(pairs, k)
	}
	sort.Slice(pairs, func(i, j int) bool {
		return pairs[i][0] < pairs[j][0] || pairs[i][0] == pairs[j][0] && pairs[i][1] < pairs[j][1]
	})
	for _, k := range pairs {
		p := st.pairs[k]
		switch {
		case p.starts > p.posts:
			e.problem(int(k[0]), p.startIndex, "win_start: rank %d starts %d access epoch(s) to rank %d, which posts %d exposure epoch(s) to it", k[0], p.starts, k[1], p.posts)
		case p.posts > p.starts:
			e.problem(int(k[1]), p.postIndex, "win_post: rank %d posts %d exposure epoch(s) to rank %d, which starts %d access epoch(s) to it", k[1], p.posts, k[0], p.starts)
		}
	}
}

func contains(s []int32, x int32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
