package dumpi

import (
	"errors"
	"fmt"
	"strconv"

	"kairos/trace"
)

// Reader streams one rank's events; it implements trace.Reader and
// trace.Positioner. Call records map to events as the package
// documentation says.
type Reader struct {
	t       *Trace
	rank    int
	f       binFile
	d       *decoder
	ev      trace.Event
	err     error
	handles map[int]uint32 // communicator handle -> global id
	created []uint32       // results of this rank's creating calls
	self    uint32         // its communicator alone (commTable.self)
	nextNew int
	// started holds, per DUMPI request handle, the ids of the requests
	// started under it and not completed yet, oldest first (0 for a
	// start that completes nothing: on MPI_PROC_NULL or an unknown
	// communicator); lastID numbers them.
	started map[int32][]uint64
	lastID  uint64
	// persistent holds the requests of Send_init and Recv_init calls;
	// pending, the events a Startall makes after the current one.
	persistent map[int32]*persistent
	pending    []trace.Event
	nextEv     int // index of the next pending event
	reqs       []uint64
	// unseen counts the calls on handles no call of the trace made
	// (Trace.Warnings); orphan says the current wait or test completed
	// such a request.
	unseen unseen
	orphan bool
	counts [2][]int64
	// wins are the windows the rank created, by DUMPI handle; winSeq
	// counts the windows created on each communicator; epochs are the
	// groups (Meta.Comms ids, 0: unknown) of the rank's post and start
	// calls, from the communicator pass.
	wins      map[int64]window
	winSeq    map[uint32]uint32
	epochs    []uint32
	nextEpoch int
	types     map[int64]int64 // datatype id -> size, as the rank last made it (types.go)
	// files are the files the rank opened, by DUMPI handle; fileSeq
	// counts the files opened on each communicator; ioReqs are the
	// requests of non-blocking I/O not completed yet, with their file
	// (io.go).
	files   map[int64]file
	fileSeq map[uint32]uint32
	ioReqs  map[uint64]file
	// before says that a call came before the current one, lastExit
	// when it ended (an MPI_Init's start: see mapCall).
	before   bool
	lastExit trace.Time
}

// Next decodes the next call record into an event.
func (r *Reader) Next() bool {
	if r.err != nil {
		return false
	}
	if r.nextEv < len(r.pending) {
		r.ev = r.pending[r.nextEv]
		r.nextEv++
		return r.sane(&r.d.c)
	}
	r.pending, r.nextEv = r.pending[:0], 0
	for r.d.next() {
		c := &r.d.c
		if c.label == labelFunctionEnter || c.label == labelFunctionExit {
			continue
		}
		r.ev.Reset()
		if ts, _, ok := c.times(); ok {
			r.ev.HasTime = true
			r.ev.Enter = ts[0].since(r.t.t0)
			r.ev.Exit = ts[1].since(r.t.t0)
		}
		if err := r.mapCall(c); err != nil {
			r.err = err
			return false
		}
		r.before, r.lastExit = true, r.ev.Exit
		return r.sane(c)
	}
	if r.d.err != nil {
		r.err = r.d.err
	} else {
		r.t.readUnseen(r.rank, r.unseen)
	}
	return false
}

// sane reports whether the event of call c has amounts that mean
// something, setting the error if not: a corrupt count (DUMPI's are
// signed) must not become a receive of -1020 bytes.
func (r *Reader) sane(c *call) bool {
	msg := r.ev.Absurd()
	if msg == "" && r.ev.RecvBytes < 0 {
		msg = fmt.Sprintf("%s receiving %d bytes: expected a count of 0 or more", r.ev.Kind, r.ev.RecvBytes)
	}
	if msg != "" {
		r.err = r.fail(c, "%s", msg)
		return false
	}
	return true
}

// Event returns the current event.
func (r *Reader) Event() *trace.Event { return &r.ev }

// Err returns the first error met.
func (r *Reader) Err() error { return r.err }

// Close closes the rank's file.
func (r *Reader) Close() error { return r.f.Close() }

// Position returns "file:offset" of the current record.
func (r *Reader) Position() string {
	return r.d.info.path + ":" + strconv.FormatInt(r.d.c.off, 10)
}

// fail returns a located error about call c.
func (r *Reader) fail(c *call, format string, args ...any) error {
	return formatErr(r.d.info.path, c.off, "%s: %s", layouts[c.label].name, fmt.Sprintf(format, args...))
}

// local makes the event a call that does not communicate.
func (r *Reader) local(c *call) {
	r.ev.Kind = trace.Local
	r.ev.Region = r.t.regions[c.label]
}

// errUnknownComm is comm's answer for a communicator whose members the
// trace does not say; the call is then a deferred event (see comm).
var errUnknownComm = errors.New("unknown communicator")

// comm resolves a communicator handle to its global id; self is true for
// MPI_COMM_SELF. A handle no followed call created on this rank (the
// communicator was created before tracing began, by a call Kairos does
// not follow, or by a Comm_split of a partial trace) makes the call a
// deferred one (MPI time, not computation: the wait for processes of a
// world MPI_Comm_spawn started, say), named "<function> (unknown
// communicator)", and returns errUnknownComm: its partners' world ranks
// are unknown, and its message is not replayed.
func (r *Reader) comm(c *call, h int64) (id uint32, self bool, err error) {
	switch h {
	case commWorld:
		return trace.WorldComm, false, nil
	case commSelf:
		return trace.WorldComm, true, nil
	}
	id, ok := r.handles[int(h)]
	if !ok {
		r.ev.Kind = trace.Deferred
		r.ev.Region = r.t.unknown[c.label]
		return 0, false, errUnknownComm
	}
	if id == selfID { // made from MPI_COMM_SELF
		return trace.WorldComm, true, nil
	}
	return id, false, nil
}

// world translates rank rk of communicator id (or of MPI_COMM_SELF) to a
// world rank.
func (r *Reader) world(c *call, id uint32, self bool, rk int64) (int32, error) {
	if self {
		if rk != 0 {
			return 0, r.fail(c, "rank %d of MPI_COMM_SELF", rk)
		}
		return int32(r.rank), nil
	}
	if id == trace.WorldComm {
		if rk < 0 || rk >= int64(r.t.n) {
			return 0, r.fail(c, "rank %d outside MPI_COMM_WORLD of %d ranks", rk, r.t.n)
		}
		return int32(rk), nil
	}
	m := r.t.comms.members[id-1]
	if rk < 0 || rk >= int64(len(m)) {
		return 0, r.fail(c, "rank %d outside communicator %d of %d ranks", rk, id, len(m))
	}
	return m[rk], nil
}

// bytes returns count elements of DUMPI datatype dt in bytes, and the
// SimGrid datatype to keep.
func (r *Reader) bytes(count, dt int64) (int64, trace.Datatype) {
	size := r.typeSize(dt)
	return count * size, simgridType(dt, size)
}

// dumpiToSimGrid maps DUMPI's built-in datatype ids (constants.h) to
// SimGrid's; -1 where SimGrid has no such type.
var dumpiToSimGrid = [...]trace.Datatype{
	-1, -1, 2, 8, 9, 6, 15, 3, 10, 1, 11, 4, 12, 5, 0, 14, 7, 13, 7, 57, 56, 55, 30, 32, 31, 33, 34, 50,
}

// simgridType returns the SimGrid id of DUMPI datatype dt if it has one of
// the same size as the trace says, else DefaultType: a kept datatype must
// turn the bytes back into the traced count.
func simgridType(dt, size int64) trace.Datatype {
	if dt < 0 || dt >= int64(len(dumpiToSimGrid)) || dumpiToSimGrid[dt] < 0 {
		return trace.DefaultType
	}
	s := dumpiToSimGrid[dt]
	if int64(s.Size(0)) != size || size == 0 {
		return trace.DefaultType
	}
	return s
}
