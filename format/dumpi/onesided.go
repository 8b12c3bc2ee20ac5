package dumpi

import "kairos/trace"

// Labels of DUMPI's one-sided calls (MPI-2's: DUMPI records no MPI-3
// window call).
const (
	lAccumulate, lGet, lPut, lWinComplete = 141, 142, 143, 144
	lWinCreate, lWinFence, lWinFree       = 145, 146, 147
	lWinGetGroup, lWinLock, lWinPost      = 148, 149, 150
	lWinStart, lWinTest, lWinUnlock       = 151, 152, 153
	lWinWait                              = 154
)

// window is a window a rank created: the trace's number for it and its
// communicator.
type window struct {
	handle, comm uint32
}

// windowHandle numbers the seq-th window (from 1) created on
// communicator comm: creation is collective, so every member numbers it
// alike; windows alive at once on one communicator differ unless 65,536
// others were created between them.
func windowHandle(comm, seq uint32) uint32 { return comm<<16 | seq&0xffff }

// numbered returns the handle of the next window (or file) created on
// communicator id, seq counting those created on each communicator.
func numbered(seq *map[uint32]uint32, id uint32) uint32 {
	if *seq == nil {
		*seq = map[uint32]uint32{}
	}
	(*seq)[id]++
	return windowHandle(id, (*seq)[id])
}

// oneSided maps a one-sided call: window creation and release, fences,
// locks and post/start/complete/wait epochs, puts, gets and accumulates on
// the window's communicator. Calls on a window Kairos does not follow (on
// MPI_COMM_SELF, or created before the trace) are deferred: MPI time, not
// computation. It reports whether c was one.
func (r *Reader) oneSided(c *call) (bool, error) {
	if c.label < lAccumulate || c.label > lWinWait {
		return false, nil
	}
	get := func(name string) int64 { return c.v[field(c.label, name)] }
	e := &r.ev
	e.Kind, e.Region = trace.Deferred, r.t.regions[c.label]
	if c.label == lWinCreate {
		return true, r.winCreate(c, get("comm"), get("win"), get("size"))
	}
	w, ok := r.wins[get("win")]
	if !ok {
		r.unseen.windows++
		return true, nil
	}
	e.Handle, e.Comm = w.handle, w.comm
	switch c.label {
	case lWinFree:
		e.Kind = trace.WinFree
		delete(r.wins, get("win"))
	case lWinFence:
		e.Kind = trace.WinFence
	case lWinComplete:
		e.Kind = trace.WinComplete
	case lWinWait:
		e.Kind = trace.WinWait
	case lWinTest:
		if get("flag") != 0 {
			e.Kind = trace.WinWait
		}
	case lWinPost, lWinStart:
		if r.nextEpoch < len(r.epochs) {
			e.NewComm = r.epochs[r.nextEpoch]
		}
		r.nextEpoch++
		if e.NewComm != 0 {
			e.Kind = map[int]trace.Kind{lWinPost: trace.WinPost, lWinStart: trace.WinStart}[c.label]
		}
	case lWinLock, lWinUnlock:
		p, err := r.world(c, w.comm, false, get("winrank"))
		if err != nil {
			return true, err
		}
		e.Kind, e.Partner = trace.WinUnlock, p
		if c.label == lWinLock {
			// DUMPI's lock types are Kairos' (1 shared, 2 exclusive).
			e.Kind, e.Tag = trace.WinLock, int32(get("locktype"))
		}
	case lPut, lGet, lAccumulate:
		return true, r.transfer(c, w, get)
	}
	return true, nil
}

// winCreate maps an MPI_Win_create on communicator handle comm.
func (r *Reader) winCreate(c *call, comm, win, size int64) error {
	id, self, err := r.comm(c, comm)
	if err != nil || self {
		return err // a window of MPI_COMM_SELF moves nothing between ranks
	}
	if r.wins == nil {
		r.wins = map[int64]window{}
	}
	w := window{handle: numbered(&r.winSeq, id), comm: id}
	r.wins[win] = w
	e := &r.ev
	e.Kind, e.Handle, e.Comm, e.SendBytes = trace.WinCreate, w.handle, id, size
	return nil
}

// transfer maps a put, get or accumulate to its target's world rank with
// the origin buffer's bytes; to MPI_PROC_NULL it moves nothing.
func (r *Reader) transfer(c *call, w window, get func(string) int64) error {
	target := get("targetrank")
	if target < 0 {
		return nil
	}
	p, err := r.world(c, w.comm, false, target)
	if err != nil {
		return err
	}
	e := &r.ev
	b, _ := r.bytes(get("origincount"), get("origintype"))
	e.Partner = p
	switch c.label {
	case lPut:
		e.Kind, e.SendBytes = trace.Put, b
	case lGet:
		e.Kind, e.RecvBytes = trace.Get, b
	default:
		e.Kind, e.SendBytes = trace.Accumulate, b
	}
	return nil
}
