package trace

import (
	"math"
	"strconv"
)

// Time is a point or span of time in picoseconds. Integer picoseconds keep
// timestamps exact through delta encoding and cover 106 days.
type Time int64

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) * 1e-12 }

// FromSeconds converts seconds to a Time, rounding to the nearest
// picosecond.
func FromSeconds(s float64) Time { return Time(math.Round(s * 1e12)) }

// Rank numbers. Every rank in the model (partners, roots, communicator
// members) is a rank of MPI_COMM_WORLD.
const (
	NoRank    int32 = -1 // no partner or root applies
	AnySource int32 = -2 // MPI_ANY_SOURCE
	AnyTag    int32 = -1 // MPI_ANY_TAG
)

// WorldComm is the id of MPI_COMM_WORLD.
const WorldComm uint32 = 0

// Event is one MPI call, computation or marker on one rank. A field that
// does not apply to the event's kind is zero. Sizes are in bytes: a reader
// of a format that counts elements multiplies by the datatype size and keeps
// the datatype id so that the count can be recovered.
//
// An Event returned by a reader is valid until the reader's next call to
// Next; its slices are reused.
type Event struct {
	Kind     Kind
	SendType Datatype // datatype of the send side, or DefaultType
	RecvType Datatype // datatype of the receive side, or DefaultType

	// Partner is the destination of a send, the source of a receive, probe
	// or wait, the root of a rooted collective, and the destination of a
	// SendRecv (Source is its source). World rank.
	Partner int32
	// Source is the source of a SendRecv. World rank.
	Source int32
	Tag    int32
	// Comm is the communicator the call is made on; NewComm the one a
	// CommSplit, CommDup or CommCreate creates (an id of Meta.Comms).
	Comm    uint32
	NewComm uint32
	// Handle is the window of a one-sided event or the file of an I/O
	// event: the trace's number for it, the same on every member, unique
	// among the windows (files) alive at once.
	Handle uint32

	// SendBytes and RecvBytes are the bytes sent and received: the message
	// of a point-to-point call; for collectives the per-member (or, for
	// alltoallv, whole-buffer) volumes SimGrid's actions carry. A Recv
	// or Irecv with RecvBytes < 0 takes the size of the matching message
	// (SimGrid's probe-first rule).
	SendBytes int64
	RecvBytes int64
	// SendCounts and RecvCounts are the per-member bytes of v-collectives,
	// indexed by rank in Comm.
	SendCounts []int64
	RecvCounts []int64

	// Request identifies the request an Isend or Irecv starts and a Wait
	// or Test completes; on a collective, that of the non-blocking
	// collective it was (MPI_Ibarrier...), read as the blocking one where
	// it completed: its Enter is then the completing call's, not the
	// collective's. Requests lists those a Waitall completes; nil
	// means every request the rank still has outstanding. A Test is a TI
	// trace's test, which may or may not complete its request: the
	// readers of traces that say (OTF2, DUMPI) have a test that completed
	// a request as a Wait, and one that did not as a Deferred call, as
	// Kairos' tracer writes them.
	Request  uint64
	Requests []uint64

	// Compute is the flops of a Compute event and of the local reduction
	// after a reduction collective, or the seconds of a Sleep.
	Compute float64
	// Op is a reduction collective's operation (OpNone where unknown).
	Op Op

	// Enter and Exit are when the call began and ended, if HasTime.
	Enter, Exit Time
	HasTime     bool

	// CallSite is a 64-bit signature of the call stack that issued the
	// event (0 if unknown); Region is the enclosing user function, an
	// index of Meta.Regions (0 is the unknown region).
	CallSite uint64
	Region   uint32
}

// The largest amounts an event read from a file may carry: beyond them,
// or negative, infinite or not a number, an amount means nothing (a
// corrupt count, a unit slip) and the readers refuse it where they read
// it, as SimGrid aborts on a negative computation. MaxFlops is a million
// seconds of a whole exaflop machine; MaxSleep the longest Time, 106 days.
const (
	MaxFlops = 1e24
	MaxSleep = float64(math.MaxInt64) * 1e-12
)

// Absurd returns what makes e's amounts mean nothing, "" if none does:
// flops or seconds negative, not finite or beyond MaxFlops or MaxSleep,
// negative byte counts (but a Recv's or Irecv's, SimGrid's probe-first
// form). It costs a few comparisons for the common events, so that
// binary readers can check every event.
func (e *Event) Absurd() string {
	if e.Sane() {
		return ""
	}
	return e.absurd()
}

// Sane reports, in a few comparisons, that e has none of Absurd's faults
// (false: Absurd says whether it has one). It is inlined where readers
// check every event, which Absurd is not.
func (e *Event) Sane() bool {
	// MaxSleep is below MaxFlops, and two counts are not negative if
	// their bitwise or is not.
	return SaneCompute(e.Kind, e.Compute) && e.SendBytes|e.RecvBytes >= 0 && e.SendCounts == nil && e.RecvCounts == nil
}

// SaneCompute reports whether c is, for Sane, a Compute an event of kind
// k may have.
func SaneCompute(k Kind, c float64) bool {
	return c >= 0 && c <= MaxFlops && (c <= MaxSleep || k != Sleep)
}

func (e *Event) absurd() string {
	what, limit := "flops", MaxFlops
	if e.Kind == Sleep {
		what, limit = "seconds", MaxSleep
	}
	switch c := e.Compute; {
	case c < 0 || math.IsNaN(c):
		return e.Kind.String() + " of " + strconv.FormatFloat(c, 'g', -1, 64) + " " + what + ": expected 0 or more"
	case c > limit:
		return e.Kind.String() + " of " + strconv.FormatFloat(c, 'g', -1, 64) + " " + what + ": expected at most " + strconv.FormatFloat(limit, 'g', 3, 64)
	case e.SendBytes < 0:
		return e.Kind.String() + " sending " + strconv.FormatInt(e.SendBytes, 10) + " bytes: expected 0 or more"
	case e.RecvBytes < 0 && e.Kind != Recv && e.Kind != Irecv:
		return e.Kind.String() + " receiving " + strconv.FormatInt(e.RecvBytes, 10) + " bytes: expected 0 or more"
	}
	for _, v := range [2][]int64{e.SendCounts, e.RecvCounts} {
		for i, c := range v {
			if c < 0 {
				return e.Kind.String() + " with " + strconv.FormatInt(c, 10) + " bytes for member " + strconv.Itoa(i) + ": expected 0 or more"
			}
		}
	}
	return ""
}

// Reset makes e an event of no kind with every field zero, both datatypes
// DefaultType and Partner and Source NoRank.
func (e *Event) Reset() {
	*e = Event{SendType: DefaultType, RecvType: DefaultType, Partner: NoRank, Source: NoRank}
}

// NewEvent returns an event of kind k with every other field as Reset
// leaves it.
func NewEvent(k Kind) Event {
	var e Event
	e.Reset()
	e.Kind = k
	return e
}

// Clone returns a copy of e that shares no memory with it.
func (e *Event) Clone() Event {
	c := *e
	c.SendCounts = cloneInts(e.SendCounts)
	c.RecvCounts = cloneInts(e.RecvCounts)
	if e.Requests != nil {
		c.Requests = append([]uint64{}, e.Requests...)
	}
	return c
}

func cloneInts(s []int64) []int64 {
	if s == nil {
		return nil
	}
	return append([]int64{}, s...)
}

// Duration returns Exit - Enter, or 0 for an untimed event.
func (e *Event) Duration() Time {
	if !e.HasTime {
		return 0
	}
	return e.Exit - e.Enter
}

// String returns a short human-readable form of e, for messages.
func (e *Event) String() string {
	s := e.Kind.String()
	switch {
	case e.Kind.IsPointToPoint() || e.Kind == Probe || e.Kind == Iprobe:
		s += " peer=" + strconv.Itoa(int(e.Partner)) + " tag=" + strconv.Itoa(int(e.Tag))
	case e.Kind.IsRooted():
		s += " root=" + strconv.Itoa(int(e.Partner))
	case e.Kind.IsWindow() && e.Partner != NoRank:
		s += " target=" + strconv.Itoa(int(e.Partner))
	}
	if e.Kind.IsWindow() || e.Kind.IsIO() {
		s += " handle=" + strconv.FormatUint(uint64(e.Handle), 10)
	}
	switch {
	case e.Kind == WinLock && e.Tag == LockExclusive:
		s += " exclusive"
	case e.Kind == WinLock && e.Tag == LockShared:
		s += " shared"
	case (e.Kind == WinPost || e.Kind == WinStart) && e.NewComm != 0:
		s += " group=" + strconv.FormatUint(uint64(e.NewComm), 10)
	case e.Kind == FileRead || e.Kind == FileWrite:
		if e.Tag&IOCollective != 0 {
			s += " collective"
		}
		if e.Tag&IONonBlocking != 0 {
			s += " nonblocking"
		}
	}
	if e.Comm != WorldComm {
		s += " comm=" + strconv.FormatUint(uint64(e.Comm), 10)
	}
	if e.SendBytes != 0 {
		s += " send=" + strconv.FormatInt(e.SendBytes, 10)
	}
	if e.RecvBytes != 0 {
		s += " recv=" + strconv.FormatInt(e.RecvBytes, 10)
	}
	if e.Kind.IsNonBlocking() || e.Kind == Wait || e.Kind == Test || e.Request != 0 && (e.Kind.IsWindow() || e.Kind.IsIO()) {
		s += " req=" + strconv.FormatUint(e.Request, 10)
	}
	if e.Compute != 0 {
		s += " compute=" + strconv.FormatFloat(e.Compute, 'g', -1, 64)
	}
	return s
}
