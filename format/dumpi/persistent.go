package dumpi

import "kairos/trace"

// Persistent requests. Send_init (and its Bsend, Ssend, Rsend forms) and
// Recv_init record a request that each Start or Startall of it starts as
// an Isend or Irecv; a completion makes it inactive again, and a later
// completion of the inactive request completes nothing (MPI returns at
// once). Request_free forgets it.

// Labels of the persistent-request calls (sst-dumpi funclabels.h).
const (
	lRequestFree                                  = 15
	lSendInit, lBsendInit, lSsendInit, lRsendInit = 26, 27, 28, 29
	lRecvInit, lStart, lStartall                  = 30, 31, 32
	persistentFields                              = 6 // count datatype peer tag comm request
)

// persistent is a request Send_init or Recv_init made.
type persistent struct {
	label  int // lIsend or lIrecv: the call each Start makes
	v      [persistentFields]int64
	active bool // started and not completed yet
}

// initPersistent records the request of a Send_init or Recv_init call c,
// whose fields are in the order of Isend's and Irecv's.
func (r *Reader) initPersistent(c *call) {
	p := &persistent{label: lIsend}
	if c.label == lRecvInit {
		p.label = lIrecv
	}
	copy(p.v[:], c.v[:persistentFields])
	if r.persistent == nil {
		r.persistent = map[int32]*persistent{}
	}
	r.persistent[int32(p.v[p2p()[p.label].rq])] = p
	r.local(c)
}

// requestFree forgets a persistent request, or the active request a
// program leaves to complete on its own (no wait will name it).
func (r *Reader) requestFree(c *call) {
	h := int32(c.v[programs()[lRequestFree].idx[fRequest]])
	if _, ok := r.persistent[h]; ok {
		delete(r.persistent, h)
	} else {
		r.take(h)
	}
	r.local(c)
}

// start maps Start and Startall: one Isend or Irecv for each persistent
// request they start, sharing the call's times (trace.ShareCallTime); the
// first is the current event and the others follow it (Reader.pending). A call that starts
// nothing Kairos follows (requests of calls on MPI_PROC_NULL among them)
// is Local.
func (r *Reader) start(c *call) error {
	var handles []int32
	if c.label == lStart {
		handles = []int32{int32(c.v[programs()[lStart].idx[fRequest]])}
	} else {
		handles = c.arr[programs()[lStartall].idx[fRequests]]
	}
	base := r.ev // the call's times
	var first trace.Event
	n := 0
	for _, h := range handles {
		p := r.persistent[h]
		if p == nil {
			continue
		}
		p.active = true
		sc := *c
		sc.label, sc.statuses = p.label, nil
		copy(sc.v[:], p.v[:])
		r.ev = base
		if err := r.pointToPoint(&sc, p2p()[p.label]); err != nil {
			return err
		}
		switch {
		case r.ev.Kind == trace.Local || r.ev.Kind == trace.Deferred: // MPI_PROC_NULL, an unknown communicator
		case n == 0:
			first, n = r.ev, 1
		default:
			r.pending, n = append(r.pending, r.ev), n+1
		}
	}
	if n == 0 {
		r.ev = base
		r.local(c)
		return nil
	}
	if n > 1 {
		trace.ShareCallTime(r.pending, base.Enter, base.Exit)
		first.Exit = first.Enter
	}
	r.ev = first
	return nil
}

// live reports whether a completion of handle h may complete a request:
// not for an inactive persistent request (MPI returns at once).
func (r *Reader) live(h int32) bool {
	p := r.persistent[h]
	return p == nil || p.active
}

// completes reports whether a completion of handle h completes a
// request, and makes a persistent request inactive.
func (r *Reader) completes(h int32) bool {
	if !r.live(h) {
		return false
	}
	if p := r.persistent[h]; p != nil {
		p.active = false
	}
	return true
}

// startsAgain reports whether call c starts request req (a look-ahead
// must stop there).
func startsAgain(c *call, req int64) bool {
	if f := p2pOf(c.label); f != nil && f.rq >= 0 {
		return c.v[f.rq] == req
	}
	switch c.label {
	case lStart:
		return c.v[programs()[lStart].idx[fRequest]] == req
	case lStartall:
		for _, h := range c.arr[programs()[lStartall].idx[fRequests]] {
			if int64(h) == req {
				return true
			}
		}
	}
	return false
}
