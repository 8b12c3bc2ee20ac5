package otf2

import (
	"slices"
	"strings"

	"kairos/trace"
)

// One-sided calls, written as Score-P records them (onesided.go reads
// them): window creation and release as an RMA collective around
// RmaWinCreate or RmaWinDestroy, a fence as an RMA collective, the
// transfers as RmaPut, RmaGet and RmaAtomic with a matching id, the
// passive-target epochs as RmaRequestLock and RmaReleaseLock, post,
// start, complete and wait as RmaGroupSync, and the completions of the
// transfers (RmaOpComplete*) in the synchronisation or the wait that
// completes them. A window is OTF2's window Handle-1, on the OTF2
// communicator of its events' Comm.

// Values of OTF2's enums the one-sided records take.
const (
	rmaSyncLevelAll     = 3 // process and memory
	rmaSyncTypeMemory   = 0
	lockShared          = 1
	rmaAtomicFetchAccum = 7
	collBarrier         = 0
	// rmaMatchBase numbers the matching ids of transfers without a
	// request, apart from the requests' ids.
	rmaMatchBase = 1 << 62
)

// rmaOut is a transfer not completed yet: its window and target.
type rmaOut struct {
	win    uint32 // OTF2 window
	target int32  // world rank
}

// rmaName returns the MPI function a request-based transfer (Request
// set) is written as: MPI_Rput, MPI_Rget, MPI_Raccumulate,
// MPI_Rget_accumulate, which the reader knows by their "MPI_R".
func rmaName(e *trace.Event, name string) string {
	if e.Request == 0 || !e.Kind.IsOneSided() || e.Kind == trace.CompareAndSwap {
		return name
	}
	f := strings.TrimPrefix(e.Kind.MPIName(), "MPI_")
	return "MPI_R" + strings.ToLower(f[:1]) + f[1:]
}

// handles are the windows or the files of an archive: each one's OTF2
// communicator, and the order they were met in, that of their
// definitions.
type handles struct {
	comm  map[uint32]uint32
	order []uint32
}

// handle returns the OTF2 window or I/O handle (in hs) of one-sided or
// MPI-IO event e, Handle-1, noting its communicator for its definition.
func (w *archiveWriter) handle(hs *handles, e *trace.Event) (uint32, error) {
	h := e.Handle - 1
	if _, ok := hs.comm[h]; !ok {
		c, err := w.otf2Comm(e.Comm)
		if err != nil {
			return 0, err
		}
		if hs.comm == nil {
			hs.comm = map[uint32]uint32{}
		}
		hs.comm[h] = c
		hs.order = append(hs.order, h)
	}
	return h, nil
}

// oneSided writes the records of one-sided event e, from enter to exit.
func (rw *rankWriter) oneSided(e *trace.Event, enter, exit uint64) error {
	if e.Handle == 0 {
		return nil // no window: a call of nothing to synchronise
	}
	win, err := rw.w.handle(&rw.w.wins, e)
	if err != nil {
		return err
	}
	target := rw.w.commRank(e.Comm, e.Partner)
	switch k := e.Kind; {
	case k == trace.WinCreate || k == trace.WinFree:
		typ, op := uint8(EvRmaWinCreate), uint8(collCreateHandle)
		if k == trace.WinFree {
			typ, op = EvRmaWinDestroy, collDestroyHandle
		}
		return rw.rmaCollective(enter, exit, op, 0, win, func() error { return rw.rmaWin(typ, enter, win) })
	case k == trace.WinFence:
		return rw.rmaCollective(enter, exit, collBarrier, rmaSyncLevelAll, win, func() error {
			return rw.rmaComplete(EvRmaOpCompleteRemote, exit, win, trace.NoRank)
		})
	case k.IsOneSided():
		return rw.transfer(e, enter, win, target)
	case k == trace.WinLock || k == trace.WinLockAll:
		lock := uint8(lockShared)
		if e.Tag == trace.LockExclusive {
			lock = lockExclusive
		}
		if k == trace.WinLockAll {
			target = allTargets
		}
		r := rw.begin(EvRmaRequestLock)
		r.u32(win)
		r.u32(target)
		r.u64(0) // lock id
		r.u8(lock)
		return rw.end(enter)
	case k == trace.WinUnlock || k == trace.WinUnlockAll:
		peer := e.Partner
		if k == trace.WinUnlockAll {
			target, peer = allTargets, trace.NoRank
		}
		if err := rw.rmaComplete(EvRmaOpCompleteRemote, exit, win, peer); err != nil {
			return err
		}
		r := rw.begin(EvRmaReleaseLock)
		r.u32(win)
		r.u32(target)
		r.u64(0)
		return rw.end(exit)
	case k >= trace.WinFlush && k <= trace.WinFlushLocalAll:
		return rw.flush(e, exit, win, target)
	case k == trace.WinPost || k == trace.WinStart || k == trace.WinComplete || k == trace.WinWait:
		if k == trace.WinComplete {
			if err := rw.rmaComplete(EvRmaOpCompleteRemote, exit, win, trace.NoRank); err != nil {
				return err
			}
		}
		group := uint32(undefined32)
		if k == trace.WinPost || k == trace.WinStart {
			group = rw.w.groupOf(e.NewComm)
		}
		r := rw.begin(EvRmaGroupSync)
		r.u32(rmaSyncLevelAll)
		r.u32(win)
		r.u32(group)
		return rw.end(exit)
	}
	return nil
}

// rmaCollective writes an RMA collective on window win: its begin, the
// records inside, its end with operation op.
func (rw *rankWriter) rmaCollective(enter, exit uint64, op uint8, level, win uint32, inside func() error) error {
	if err := rw.u64Record(EvRmaCollectiveBegin, enter, undefined64); err != nil {
		return err
	}
	if err := inside(); err != nil {
		return err
	}
	r := rw.begin(EvRmaCollectiveEnd)
	r.u8(op)
	r.u32(level)
	r.u32(win)
	r.u32(undefined32) // no root
	r.u64(0)
	r.u64(0)
	return rw.end(exit)
}

// rmaWin writes an RmaWinCreate or RmaWinDestroy.
func (rw *rankWriter) rmaWin(typ uint8, t uint64, win uint32) error {
	r := rw.begin(typ)
	r.u32(win)
	return rw.end(t)
}

// transfer writes a put, get or atomic operation; a request-based one's
// matching id is its request, which a wait completes, another's one of
// the rank's own, which a synchronisation completes.
func (rw *rankWriter) transfer(e *trace.Event, t uint64, win, target uint32) error {
	id := e.Request
	if id == 0 || e.Kind == trace.CompareAndSwap {
		rw.rmaSeq++
		id = rmaMatchBase + rw.rmaSeq
		rw.rma[id] = rmaOut{win, e.Partner}
	} else {
		rw.start(id, pending{rma: true, comm: win})
	}
	var r *enc
	switch e.Kind {
	case trace.Put, trace.Get:
		typ, size := uint8(EvRmaPut), e.SendBytes
		if e.Kind == trace.Get {
			typ, size = EvRmaGet, e.RecvBytes
		}
		r = rw.begin(typ)
		r.u32(win)
		r.u32(target)
		r.u64(uint64(size))
	default:
		op := uint8(rmaAtomicAccumulate)
		switch e.Kind {
		case trace.GetAccumulate:
			op = rmaAtomicFetchAccum
		case trace.CompareAndSwap:
			op = rmaAtomicCompareAndSwap
		}
		r = rw.begin(EvRmaAtomic)
		r.u32(win)
		r.u32(target)
		r.u8(op)
		r.u64(uint64(e.SendBytes))
		r.u64(uint64(e.RecvBytes))
	}
	r.u64(id)
	return rw.end(t)
}

// flush writes a flush: the completions of the operations it completes
// (to target, or to all for the _all forms); where there are none, a
// flush of the memory (RmaSync), which the reader reads as one. A local
// flush that completes nothing has no record of its own.
func (rw *rankWriter) flush(e *trace.Event, t uint64, win, target uint32) error {
	all := e.Kind == trace.WinFlushAll || e.Kind == trace.WinFlushLocalAll
	peer := e.Partner
	if all {
		target, peer = allTargets, trace.NoRank
	}
	typ := uint8(EvRmaOpCompleteRemote)
	if e.Kind == trace.WinFlushLocal || e.Kind == trace.WinFlushLocalAll {
		typ = EvRmaOpCompleteNonBlocking
	}
	n := len(rw.rma)
	if err := rw.rmaComplete(typ, t, win, peer); err != nil || len(rw.rma) < n || typ != EvRmaOpCompleteRemote {
		return err
	}
	r := rw.begin(EvRmaSync)
	r.u32(win)
	r.u32(target)
	r.u8(rmaSyncTypeMemory)
	return rw.end(t)
}

// rmaComplete writes the completions of the transfers on window win not
// completed yet (to peer, or all for trace.NoRank), in the order of
// their ids, and forgets them.
func (rw *rankWriter) rmaComplete(typ uint8, t uint64, win uint32, peer int32) error {
	var ids []uint64
	for id, op := range rw.rma {
		if op.win == win && (peer == trace.NoRank || op.target == peer) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		delete(rw.rma, id)
		if err := rw.rmaDone(typ, t, win, id); err != nil {
			return err
		}
	}
	return nil
}

// rmaDone writes the completion of transfer id on window win.
func (rw *rankWriter) rmaDone(typ uint8, t uint64, win uint32, id uint64) error {
	r := rw.begin(typ)
	r.u32(win)
	r.u64(id)
	return rw.end(t)
}

// groupOf returns the OTF2 group of model communicator c, the group of a
// post or a start: a group only, not a communicator, if no call is made
// on it (the reader makes such groups communicators of their own).
func (w *archiveWriter) groupOf(c uint32) uint32 {
	oc, ok := w.comms[c]
	if !ok {
		return undefined32
	}
	w.groups[c] = true
	return oc + 1
}
