package trace

import (
	"fmt"
	"math"
	"strconv"
	"sync"
)

// Untimed returns src as a time-independent trace, the form SimGrid
// replays: the time a rank spends outside MPI becomes computation at speed
// flop/s, and timestamps are dropped.
//
//   - The gap between an event's Exit and the next event's Enter becomes
//     a Compute event of gap x speed flops, placed before the next event.
//   - Local MPI calls (MPI_Comm_rank, MPI_Wtime...) and timed Compute
//     events are dropped and their duration is added to that computation,
//     since a time-independent replay only sees computation between
//     communications. Consecutive gaps and dropped events make one
//     Compute event; the computations kept (UntimedAbove) on either side
//     of calls a replay does nothing for (probes, communicators' creation:
//     see Passive) are summed into one, after them, as Kairos' tracer
//     writes them in TI: a program polling with MPI_Iprobe has one
//     computation between two messages, not one between two probes.
//   - Every other event keeps its fields, timestamps aside; a timed Sleep
//     or I/O call without an amount gets its duration in seconds (I/O is
//     replayed as it was measured).
//   - Untimed events pass through unchanged, and no gap is counted across
//     them.
//
// The first event's entry has no previous exit, so the time before it is
// not counted; neither is the time before MPI_Init (calls such as
// MPI_Initialized before it, and the gaps between them), since a replay
// starts where MPI_Init returns. speed must be positive and finite;
// OpenRank fails otherwise.
func Untimed(src Source, speed float64) Source { return UntimedAbove(src, speed, 0) }

// UntimedAbove is Untimed, except that a computation shorter than
// shortest is dropped, as SMPI drops the bursts of real code shorter than
// smpi/cpu-threshold: a replay of the trace then sees the computation
// SimGrid would have simulated. A shortest of 0 or less keeps every
// computation.
func UntimedAbove(src Source, speed float64, shortest Time) *UntimedSource {
	m := cloneMeta(src.Meta())
	m.Attrs["untimed-speed"] = strconv.FormatFloat(speed, 'g', -1, 64)
	return &UntimedSource{src: src, speed: speed, shortest: shortest, meta: m}
}

// UntimedSource is a timed trace read as a time-independent one. It
// remembers how long the recorded run lasted, to compare a replay with.
type UntimedSource struct {
	src      Source
	speed    float64
	shortest Time
	meta     Meta
	drop     bool // DropUnreplayed

	mu          sync.Mutex
	first, last Time // the ranks' earliest start and latest end
	spanned     bool
	// passive is, for each rank read to its end, the time its calls of
	// Passive kinds took (Unreplayed).
	passive map[int]Time
}

// Meta returns the trace's metadata, with the speed it is untimed at.
func (s *UntimedSource) Meta() *Meta { return &s.meta }

// NumRanks returns the number of ranks.
func (s *UntimedSource) NumRanks() int { return s.src.NumRanks() }

// OpenRank opens rank r's events, untimed.
func (s *UntimedSource) OpenRank(r int) (Reader, error) {
	if !(s.speed > 0) || math.IsInf(s.speed, 0) {
		return nil, fmt.Errorf("untimed: speed %v flop/s is not a positive number", s.speed)
	}
	in, err := s.src.OpenRank(r)
	if err != nil {
		return nil, err
	}
	if s.drop {
		Skim(in, SkipUnreplayed)
	}
	return &untimedReader{in: in, rank: r, speed: s.speed, shortest: max(s.shortest, 1), src: s, drop: s.drop}, nil
}

// DropUnreplayed makes the ranks opened after it leave out the events of
// Passive kinds, which a replay does nothing for (SimGrid's replay has
// none: TI has no action for them), reading them with SkipUnreplayed:
// for a replay that observes no action (its timelines list them).
func (s *UntimedSource) DropUnreplayed() { s.drop = true }

// Speed returns the speed (flop/s) the computation is untimed at.
func (s *UntimedSource) Speed() float64 { return s.speed }

// Recorded returns how long the recorded run lasted, from the earliest
// start of a rank's first call to the latest end of its last, over the
// ranks read to their end so far; false if none had a timed event. As a
// replay times neither, the run starts when MPI_Init returns and ends
// when MPI_Finalize is entered.
func (s *UntimedSource) Recorded() (Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last - s.first, s.spanned
}

// Unreplayed returns the time the ranks read to their end so far spent,
// summed over them, in calls a replay gives no time (Passive: probes,
// flushes with nothing to complete and other Deferred calls,
// communicators' creation), between MPI_Init's return and MPI_Finalize's
// entry, and how many ranks that is of. It is recorded time that neither
// computation nor communication of the replay stands for: a program
// polling with MPI_Iprobe or MPI_Win_flush_all, or creating many
// communicators, on oversubscribed cores, spends much of its run there,
// and so runs longer than any replay of it. A rank read again counts
// once.
func (s *UntimedSource) Unreplayed() (Time, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum Time
	for _, d := range s.passive {
		sum += d
	}
	return sum, len(s.passive)
}

// span adds a rank's first entry and last exit to the recorded run, and
// the time it spent in calls a replay gives no time.
func (s *UntimedSource) span(rank int, first, last, passive Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.passive == nil {
		s.passive = map[int]Time{}
	}
	s.passive[rank] = passive
	if !s.spanned || first < s.first {
		s.first = first
	}
	if !s.spanned || last > s.last {
		s.last = last
	}
	s.spanned = true
}

// untimedReader turns one rank's timed events into untimed ones.
type untimedReader struct {
	in       Reader
	rank     int
	speed    float64
	shortest Time // the shortest computation returned (at least 1)
	drop     bool // DropUnreplayed
	ev       Event
	held     bool // in.Event() is the next event to return
	busy     Time // computation time since the last call
	kept     Time // computation time kept (settle), not yet returned
	lastExit Time
	hasLast  bool
	// When the rank's first call started and its last ended, for
	// src.Recorded.
	src         *UntimedSource
	first, last Time
	timed       bool
	// passive is the time spent in calls of Passive kinds since MPI_Init
	// returned, for src.Unreplayed.
	passive Time
}

func (r *untimedReader) Next() bool {
	if r.held {
		r.held = false
		r.emit(r.in.Event())
		return true
	}
	for r.in.Next() {
		e := r.in.Event()
		r.account(e)
		if e.HasTime && (e.Kind == Local || e.Kind == Compute) {
			r.busy += max(e.Duration(), 0)
			continue
		}
		pass := Passive(e.Kind)
		if e.Kind == Init {
			r.busy, r.kept = 0, 0 // a replay starts where MPI_Init returns
			r.passive = 0
		} else if e.HasTime && pass {
			r.passive += max(e.Duration(), 0)
		}
		if e.Kind != Location {
			r.settle()
		}
		if pass && r.drop {
			continue
		}
		if r.kept > 0 && e.Kind != Location && !pass {
			r.compute(e.Region)
			r.held = true
			return true
		}
		r.emit(e)
		return true
	}
	if r.settle(); r.kept > 0 {
		r.compute(0)
		return true
	}
	if r.timed && r.in.Err() == nil {
		r.src.span(r.rank, r.first, r.last, r.passive)
		r.timed = false
	}
	return false
}

// Passive reports whether a replay does nothing for calls of kind k, so
// that the computation around them is one and their time none: probes (TI
// has no action for them; the message is the receive's), the calls of
// non-blocking collectives and others replayed where they complete
// (Deferred: an OTF2 reader's probes too) and the calls that make
// communicators (SimGrid's replay does not replay them). Kairos' tracer
// writes none of them in TI, and one computation around them.
func Passive(k Kind) bool { return passive[k] }

// Unreplayed reports whether a replay of untimed events does nothing for
// an event of kind k, timed or not: a Passive call, or a timed local call
// or computation, whose time untiming makes computation
// (SkipUnreplayed).
func Unreplayed(k Kind, timed bool) bool {
	return passive[k] || timed && (k == Local || k == Compute)
}

// passive is Passive's table, by kind: a switch took 3.5% of the
// instructions of an analytic replay of HPCC (millions of polls).
var passive = [256]bool{Probe: true, Iprobe: true, Deferred: true, CommSplit: true, CommDup: true, CommCreate: true, CommFree: true}

// account adds the gap before e to the computation.
func (r *untimedReader) account(e *Event) {
	if !e.HasTime {
		r.hasLast = false
		return
	}
	if r.hasLast && e.Enter > r.lastExit {
		r.busy += e.Enter - r.lastExit
	}
	r.lastExit, r.hasLast = e.Exit, true
	// MPI_Init and MPI_Finalize (starting and stopping the processes)
	// are not timed by a replay.
	first, last := e.Enter, e.Exit
	if e.Kind == Init {
		first = e.Exit
	} else if e.Kind == Finalize {
		last = e.Enter
	}
	if !r.timed {
		r.last = last
	}
	if !r.timed || e.Kind == Init {
		r.first = first
	}
	r.last = max(r.last, last)
	r.timed = true
}

// settle keeps the computation since the last call if it is at least
// the shortest one kept.
func (r *untimedReader) settle() {
	if r.busy >= r.shortest {
		r.kept += r.busy
	}
	r.busy = 0
}

func (r *untimedReader) compute(region uint32) {
	r.ev.Reset()
	r.ev.Kind = Compute
	// One multiplication of the exact integer time, then one exact
	// division, so that round numbers stay round (1.5 us at 1 Gf/s is
	// 1500 flops, not 1499.9999999999998).
	r.ev.Compute = float64(r.kept) * r.speed / 1e12
	r.ev.Region = region
	r.kept = 0
}

func (r *untimedReader) emit(e *Event) {
	r.ev = *e
	if (e.Kind == Sleep || e.Kind.IsIO()) && e.HasTime && e.Compute == 0 {
		r.ev.Compute = e.Duration().Seconds()
	}
	r.ev.HasTime, r.ev.Enter, r.ev.Exit = false, 0, 0
}

func (r *untimedReader) Event() *Event { return &r.ev }
func (r *untimedReader) Err() error    { return r.in.Err() }
func (r *untimedReader) Close() error  { return r.in.Close() }

// Position returns the position of the underlying event when the
// underlying reader knows it, so that problems found in an untimed trace
// still point into the timed input.
func (r *untimedReader) Position() string {
	if p, ok := r.in.(Positioner); ok {
		return p.Position()
	}
	return ""
}
