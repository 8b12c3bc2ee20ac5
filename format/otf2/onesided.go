package otf2

import (
	"strings"

	"kairos/trace"
)

// One-sided communication and MPI-IO, as Score-P records them.
//
// Score-P writes the RMA records of an MPI call between its Enter and
// Leave: RmaCollectiveBegin/End around window creation and release (with
// RmaWinCreate and RmaWinDestroy) and fences; RmaPut, RmaGet and RmaAtomic
// for the transfers, with a matching id per (window, target) until they
// complete (a new one for each request-based call); RmaRequestLock and
// RmaReleaseLock for the passive-target epochs (remote all ones for
// lock_all); RmaGroupSync for post, start, complete and wait (the region
// tells which); and RmaOpCompleteNonBlocking and RmaOpCompleteRemote
// where the operations complete: in the synchronisation that completes
// them, or in MPI_Wait and MPI_Test for the request-based ones. Flushes
// write nothing but those completions. The I/O records name an I/O
// handle: IoCreateHandle in MPI_File_open, IoDestroyHandle in
// MPI_File_close, IoOperationBegin (read, write or flush, blocking or
// not, collective or not) and IoOperationComplete in the call or in the
// MPI_Wait or split collective's end that completes it, IoSeek.
//
// Windows and files become Event.Handle (their OTF2 id plus one, 0 being
// none); targets, resolved through the window's communicator, world
// ranks; the groups of post and start, Meta.Comms entries.

// sideState is a rank mapper's state for one-sided and I/O calls.
type sideState struct {
	// target is the world rank and window of the operations of each
	// matching id not yet completed, so that a flush, which writes only
	// completions, names its target.
	target map[uint64]rmaOp
	// done holds the matching ids the current call completes, in order;
	// rmaWin is the window its records name (0 if none).
	done   []uint64
	rmaWin uint32
	// ioBegun maps the matching ids of the current call's I/O operations
	// to their index in the call's events.
	ioBegun map[uint64]int
	// ioOpen holds the non-blocking I/O operations not completed, by
	// matching id: their handle and communicator.
	ioOpen map[uint64]ioOp
}

type rmaOp struct {
	target int32
	win    uint32
}

type ioOp struct {
	handle, comm uint32
	write        bool
}

func newSideState() *sideState {
	return &sideState{target: map[uint64]rmaOp{}, ioBegun: map[uint64]int{}, ioOpen: map[uint64]ioOp{}}
}

// reset forgets the previous call's records.
func (st *sideState) reset() {
	st.done, st.rmaWin = st.done[:0], 0
	clear(st.ioBegun)
}

// isSideRecord reports whether t is an RMA or I/O event record.
func isSideRecord(t uint8) bool {
	return t >= EvRmaWinCreate && t <= EvRmaOpCompleteRemote || t >= evIoCreateHandle && t <= evIoTryLock
}

// sideEvent handles an RMA or I/O record. Records outside an MPI call
// (POSIX I/O, SHMEM) are not MPI's and are left out.
func (m *mapper) sideEvent(e *Event) {
	if m.call != nil {
		m.sideRecord(e)
	}
}

// Score-P's values for "every target" and "no root".
const allTargets = undefined32

// OTF2 enum values the mapping needs.
const (
	collCreateHandle         = 17
	collDestroyHandle        = 18
	collCreateAndAllocate    = 21
	collDestroyAndDeallocate = 22
	rmaAtomicAccumulate      = 0
	rmaAtomicIncrement       = 1
	rmaAtomicTestAndSet      = 2
	rmaAtomicCompareAndSwap  = 3
	lockExclusive            = 0
	ioModeRead               = 0
	ioModeWrite              = 1
	ioFlagNonBlocking        = 1
	ioFlagCollective         = 2
	rmaSyncLevelNone         = 0
)

func (m *mapper) sideRecord(e *Event) {
	c, st := m.call, m.side
	win := e.Ref
	switch e.Type {
	case EvRmaWinCreate, EvRmaWinDestroy:
		k := trace.WinCreate
		if e.Type == EvRmaWinDestroy {
			k = trace.WinFree
		}
		c.ops = append(c.ops, m.windowEvent(k, win))
	case EvRmaCollectiveEnd:
		switch e.Op {
		case collCreateHandle, collCreateAndAllocate, collDestroyHandle, collDestroyAndDeallocate:
			if !m.hasWindowOp(win) {
				k := trace.WinCreate
				if e.Op == collDestroyHandle || e.Op == collDestroyAndDeallocate {
					k = trace.WinFree
				}
				c.ops = append(c.ops, m.windowEvent(k, win))
			}
		default: // a fence (Score-P's barrier)
			c.ops = append(c.ops, m.windowEvent(trace.WinFence, win))
		}
	case EvRmaGroupSync:
		m.groupSync(e)
	case EvRmaRequestLock, EvRmaAcquireLock, EvRmaTryLock:
		if m.hasWindowOp(win) {
			return // the request and the acquisition of one lock
		}
		ev := m.windowEvent(trace.WinLockAll, win)
		if e.Peer != allTargets {
			ev.Kind, ev.Partner, ev.Tag = trace.WinLock, m.peer(m.winComm(win), e.Peer), trace.LockShared
			if e.Op == lockExclusive {
				ev.Tag = trace.LockExclusive
			}
		}
		c.ops = append(c.ops, ev)
	case EvRmaReleaseLock:
		ev := m.windowEvent(trace.WinUnlockAll, win)
		if e.Peer != allTargets {
			ev.Kind, ev.Partner = trace.WinUnlock, m.peer(m.winComm(win), e.Peer)
		}
		c.ops = append(c.ops, ev)
	case EvRmaSync:
		ev := m.windowEvent(trace.WinFlushAll, win)
		if e.Peer != allTargets {
			ev.Kind, ev.Partner = trace.WinFlush, m.peer(m.winComm(win), e.Peer)
		}
		c.ops = append(c.ops, ev)
	case EvRmaPut, EvRmaGet, EvRmaAtomic:
		m.transfer(e)
	case EvRmaOpCompleteBlocking, EvRmaOpCompleteNonBlocking, EvRmaOpCompleteRemote:
		if st.rmaWin == 0 {
			st.rmaWin = win + 1
		}
		for _, id := range st.done {
			if id == e.Value {
				return
			}
		}
		st.done = append(st.done, e.Value)
	case EvRmaOpTest:
		c.deferred = true
	case evIoCreateHandle, evIoDestroyHandle:
		k := trace.FileOpen
		if e.Type == evIoDestroyHandle {
			k = trace.FileClose
		}
		p := e.payload
		c.ops = append(c.ops, m.fileEvent(k, e.mapped(MapIoHandle, p.u32())))
	case evIoOperationBegin:
		m.ioBegin(e)
	case evIoOperationComplete:
		m.ioComplete(e)
	case evIoSeek, evIoDeleteFile, evIoChangeStatusFlags, evIoDuplicateHandle:
		p := e.payload
		h := uint32(undefined32)
		if e.Type != evIoDeleteFile {
			h = e.mapped(MapIoHandle, p.u32())
		}
		c.ops = append(c.ops, m.fileEvent(trace.File, h))
	}
}

// hasWindowOp reports whether the current call already has an event of
// window win (Score-P writes both RmaWinCreate and RmaCollectiveEnd, and
// other tools both the request and the acquisition of a lock).
func (m *mapper) hasWindowOp(win uint32) bool {
	for _, ev := range m.call.ops {
		if ev.Kind.IsWindow() && ev.Handle == win+1 {
			return true
		}
	}
	return false
}

// winComm returns the OTF2 communicator of window win.
func (m *mapper) winComm(win uint32) uint32 {
	if w, ok := m.src.arch.Defs.RmaWins[win]; ok {
		return w.Parent
	}
	return undefined32
}

// windowEvent returns an event of kind k on window win.
func (m *mapper) windowEvent(k trace.Kind, win uint32) trace.Event {
	ev := trace.NewEvent(k)
	ev.Handle = win + 1
	if c := m.winComm(win); c != undefined32 {
		ev.Comm = m.comm(c).id
	}
	return ev
}

// fileEvent returns an event of kind k on I/O handle h.
func (m *mapper) fileEvent(k trace.Kind, h uint32) trace.Event {
	ev := trace.NewEvent(k)
	if h == undefined32 {
		return ev
	}
	ev.Handle = h + 1
	if hd, ok := m.src.arch.Defs.IoHandles[h]; ok && hd.Comm != undefined32 {
		ev.Comm = m.comm(hd.Comm).id
	}
	return ev
}

// transfer reads an RmaPut, RmaGet or RmaAtomic.
func (m *mapper) transfer(e *Event) {
	c := m.call
	ev := m.windowEvent(trace.Put, e.Ref)
	ev.Partner = m.peer(m.winComm(e.Ref), e.Peer)
	switch e.Type {
	case EvRmaPut:
		ev.SendBytes = int64(e.Bytes)
	case EvRmaGet:
		ev.Kind, ev.RecvBytes = trace.Get, int64(e.Bytes)
	default:
		ev.Kind, ev.SendBytes, ev.RecvBytes = atomicKind(e.Op), int64(e.Bytes), int64(e.Received)
	}
	if strings.HasPrefix(c.name, "MPI_R") { // MPI_Rput, MPI_Rget, MPI_Raccumulate...
		ev.Request = e.Value
	}
	m.side.target[e.Value] = rmaOp{target: ev.Partner, win: e.Ref + 1}
	c.ops = append(c.ops, ev)
}

// atomicKind returns the kind of an RmaAtomic of OTF2 type t.
func atomicKind(t uint8) trace.Kind {
	switch t {
	case rmaAtomicAccumulate, rmaAtomicIncrement:
		return trace.Accumulate
	case rmaAtomicCompareAndSwap, rmaAtomicTestAndSet:
		return trace.CompareAndSwap
	}
	return trace.GetAccumulate // swap, fetch-and-add, -increment, -accumulate
}

// groupSync reads an RmaGroupSync: post, start, complete or wait, as its
// region says (a successful MPI_Win_test is a wait; one that fails,
// level NONE, completes nothing).
func (m *mapper) groupSync(e *Event) {
	c := m.call
	var k trace.Kind
	switch c.name {
	case "MPI_Win_post":
		k = trace.WinPost
	case "MPI_Win_start":
		k = trace.WinStart
	case "MPI_Win_complete":
		k = trace.WinComplete
	case "MPI_Win_wait", "MPI_Win_test":
		k = trace.WinWait
	default:
		return
	}
	if e.Value2 == rmaSyncLevelNone {
		return
	}
	ev := m.windowEvent(k, e.Ref)
	if k == trace.WinPost || k == trace.WinStart {
		ev.NewComm = m.groupComm(uint32(e.Value))
	}
	c.ops = append(c.ops, ev)
}

// ioBegin reads an IoOperationBegin.
func (m *mapper) ioBegin(e *Event) {
	p := e.payload
	h := e.mapped(MapIoHandle, p.u32())
	mode, flags, bytes, id := p.u8(), p.u32(), int64(p.u64()), p.u64()
	ev := m.fileEvent(trace.File, h)
	switch mode {
	case ioModeRead:
		ev.Kind, ev.RecvBytes = trace.FileRead, bytes
	case ioModeWrite:
		ev.Kind, ev.SendBytes = trace.FileWrite, bytes
	}
	if flags&ioFlagCollective != 0 && ev.Kind != trace.File {
		ev.Tag |= trace.IOCollective
	}
	if flags&ioFlagNonBlocking != 0 {
		if ev.Kind != trace.File {
			ev.Tag |= trace.IONonBlocking
		}
		ev.Request = id
		m.side.ioOpen[id] = ioOp{handle: ev.Handle, comm: ev.Comm, write: ev.Kind == trace.FileWrite}
	}
	m.side.ioBegun[id] = len(m.call.ops)
	m.call.ops = append(m.call.ops, ev)
}

// ioComplete reads an IoOperationComplete: the bytes transferred, in the
// call that began the operation; else the FileWait that completes it.
func (m *mapper) ioComplete(e *Event) {
	p := e.payload
	h := e.mapped(MapIoHandle, p.u32())
	bytes, id := int64(p.u64()), p.u64()
	st := m.side
	if i, ok := st.ioBegun[id]; ok {
		if ev := &m.call.ops[i]; ev.Request == 0 || ev.Tag&trace.IONonBlocking == 0 {
			if ev.Kind == trace.FileRead {
				ev.RecvBytes = bytes
			} else if ev.Kind == trace.FileWrite {
				ev.SendBytes = bytes
			}
			return
		}
	}
	ev := m.fileEvent(trace.FileWait, h)
	if op, ok := st.ioOpen[id]; ok {
		ev.Handle, ev.Comm = op.handle, op.comm
		delete(st.ioOpen, id)
	}
	ev.Request = id
	m.call.ops = append(m.call.ops, ev)
}

// sideKinds are the one-sided and I/O calls whose kind only their region
// tells (Score-P writes no record for them, or only completions).
var sideKinds = map[string]trace.Kind{
	"MPI_Win_flush": trace.WinFlush, "MPI_Win_flush_all": trace.WinFlushAll,
	"MPI_Win_flush_local": trace.WinFlushLocal, "MPI_Win_flush_local_all": trace.WinFlushLocalAll,
	"MPI_Win_fence": trace.WinFence, "MPI_Win_unlock_all": trace.WinUnlockAll, "MPI_Win_lock_all": trace.WinLockAll,
	"MPI_Win_complete": trace.WinComplete, "MPI_Win_wait": trace.WinWait,
}

// finishSide completes the current call's one-sided events before it is
// queued: a flush (or another synchronisation written without records of
// its own) becomes its event, on the window and target of the operations
// it completes; MPI_Wait, MPI_Test and their variants complete the
// request-based operations they name.
func (m *mapper) finishSide(c *mpiCall) {
	st := m.side
	if len(st.done) == 0 && !c.class.side {
		return // most calls: nothing one-sided completed, nothing to become
	}
	defer func() {
		for _, id := range st.done {
			delete(st.target, id)
		}
	}()
	if strings.HasPrefix(c.name, "MPI_Wait") || strings.HasPrefix(c.name, "MPI_Test") {
		c.completed = append(c.completed, st.done...)
		return
	}
	k, ok := sideKinds[c.name]
	if !ok || len(c.ops) > 0 {
		return
	}
	ev := trace.NewEvent(k)
	ev.Handle = st.rmaWin
	for _, id := range st.done {
		if op, ok := st.target[id]; ok {
			ev.Handle = op.win
			if k == trace.WinFlush || k == trace.WinFlushLocal {
				ev.Partner = op.target
			}
			break
		}
	}
	if ev.Handle == 0 {
		// No record names the window: a flush with nothing to complete
		// (Score-P writes only completions), which takes no time in a
		// replay and is not computation.
		ev.Kind = trace.Deferred
	} else if cm := m.winComm(ev.Handle - 1); cm != undefined32 {
		ev.Comm = m.comm(cm).id
	}
	c.ops = append(c.ops, ev)
}

// groupComm returns the model communicator of OTF2 group id (a group of
// MPI_COMM_WORLD ranks, as Score-P defines the groups of post and start),
// defining it on first use (while Open scans); 0 if it cannot be
// resolved.
func (s *Source) groupComm(id uint32) uint32 {
	if c, ok := s.groupComms[id]; ok {
		return c
	}
	members := s.rmaGroupMembers(id)
	if members == nil {
		return 0
	}
	c := uint32(len(s.meta.Comms) + 1)
	s.meta.Comms = append(s.meta.Comms, trace.Comm{ID: c, Members: members})
	s.groupComms[id] = c
	return c
}

// rmaGroupMembers returns the world ranks of OTF2 group id (of
// MPI_COMM_WORLD ranks, or of locations), nil if they cannot be resolved.
func (s *Source) rmaGroupMembers(id uint32) []int32 {
	d := s.arch.Defs
	g := d.Groups[id]
	locs := d.commLocs[ParadigmMPI]
	if g == nil || locs == nil {
		return nil
	}
	members := []int32{}
	for _, idx := range g.Members {
		loc := idx
		if g.Type == GroupCommGroup {
			if idx >= uint64(len(locs.Members)) {
				return nil
			}
			loc = locs.Members[idx]
		}
		r, ok := s.worldRank[loc]
		if !ok {
			return nil
		}
		members = append(members, r)
	}
	return members
}
