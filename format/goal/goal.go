// Package goal writes traces as GOAL schedules, the text input of
// LogGOPSim (its txt2bin turns them into the binary schedules LogGOPSim
// simulates), so that a Kairos trace can be simulated under the LogGOP
// model and compared with Kairos' own replay.
//
// A GOAL schedule is a dependency graph per rank: "calc", "send" and
// "recv" operations and "requires" (start after the other completes) and
// "irequires" (start after the other starts) edges. The writer turns a
// rank's sequence of MPI calls into that graph as LogGOPSim's Schedgen
// does: a blocking call waits for everything before it; a nonblocking
// send or receive waits for the last blocking call and starts after the
// nonblocking calls posted since; a wait or waitall is a "calc 0" that
// requires the operations of its requests. Collectives become
// point-to-point operations with Schedgen's algorithms for LogGOPSim:
// dissemination for barrier and allreduce, binomial trees for bcast and
// reduce, and linear exchanges for the others.
//
// GOAL cannot express some calls, which are left out: tests (polling),
// probes, communicator management, and one-sided calls (a GOAL message
// needs a receive its target does not make); an MPI-IO call is a "calc"
// of its recorded time. Times are in nanoseconds, the unit
// of LogGOPSim's L, o, g and G parameters: a computation of F flops is a
// "calc" of F/speed seconds.
package goal

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"kairos/format"
	"kairos/internal/fileio"
	"kairos/trace"
)

// DefaultSpeed is the flop rate computations are timed at when Options
// give none: 1 Gflop/s, one nanosecond per flop.
const DefaultSpeed = 1e9

// collectiveTag is the first tag of collectives' messages: MPI tags are
// below 2^31, so the two never match each other. Each collective on a
// communicator takes the next tag.
const collectiveTag = 1 << 31

// Options tune the writer. The zero value gives the defaults.
type Options struct {
	// Speed is the flop rate (flop/s) that turns computations into
	// times; DefaultSpeed if 0.
	Speed float64
}

func init() {
	format.Register(format.Format{
		Name:        "goal",
		Description: "LogGOPSim GOAL schedule (text; written, not read)",
		Hint:        hint,
		Write: func(path string, src trace.Source) error {
			return WriteFile(path, src, Options{})
		},
		Extensions: []string{".goal"},
	})
}

// hint says that a file that starts as Write starts a schedule is one,
// which Kairos does not read.
func hint(_ string, head []byte) string {
	if !bytes.HasPrefix(head, []byte("num_ranks ")) {
		return ""
	}
	return "a LogGOPSim GOAL schedule, which Kairos writes but does not read: convert the trace it was written from"
}

// WriteFile writes src to path as a GOAL schedule, atomically (a failed
// write leaves nothing behind).
func WriteFile(path string, src trace.Source, o Options) error {
	err := fileio.WriteFile(path, func(w io.Writer) error { return Write(w, src, o) })
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Write writes src to w as a GOAL schedule. Ranks are streamed one after
// the other; the writer holds one rank's outstanding requests only.
func Write(w io.Writer, src trace.Source, o Options) error {
	if o.Speed == 0 {
		o.Speed = DefaultSpeed
	}
	if !(o.Speed > 0) || math.IsInf(o.Speed, 0) {
		return fmt.Errorf("goal: speed %g flop/s: want a positive finite rate", o.Speed)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	n := src.NumRanks()
	fmt.Fprintf(bw, "num_ranks %d\n", n)
	for r := 0; r < n; r++ {
		if err := writeRank(bw, src, r, o); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func writeRank(w *bufio.Writer, src trace.Source, r int, o Options) error {
	rd, err := src.OpenRank(r)
	if err != nil {
		return err
	}
	defer rd.Close()
	g := rankWriter{w: w, rank: int32(r), n: int32(src.NumRanks()), meta: src.Meta(), speed: o.Speed,
		reqs: map[uint64]int{}, collSeq: map[uint32]uint32{}}
	fmt.Fprintf(w, "\nrank %d {\n", r)
	i := 0
	for rd.Next() {
		i++
		if err := g.event(rd.Event()); err != nil {
			where := ""
			if p, ok := rd.(trace.Positioner); ok {
				where = " at " + p.Position()
			}
			return fmt.Errorf("rank %d, event %d (%s%s): %w", r, i, rd.Event().Kind, where, err)
		}
	}
	if err := rd.Err(); err != nil {
		return err
	}
	_, err = w.WriteString("}\n")
	return err
}

// rankWriter turns one rank's events into GOAL operations.
type rankWriter struct {
	w     *bufio.Writer
	rank  int32
	n     int32
	meta  *trace.Meta
	speed float64
	next  int // the next label's number
	// after is the label of the last blocking operation (0 if none),
	// started that of the last nonblocking one posted since (0 if none):
	// the next operation requires the first and irequires the second.
	after, started int
	reqs           map[uint64]int    // outstanding requests' labels
	collSeq        map[uint32]uint32 // collectives so far, by communicator
}

// op writes operation text with a new label, with the dependencies of a
// call posted now, and returns the label. The last nonblocking operation
// started after the last blocking one completed, so starting after it
// implies both.
func (g *rankWriter) op(text string) int {
	l := g.label(text)
	if g.started != 0 {
		fmt.Fprintf(g.w, "l%d irequires l%d\n", l, g.started)
	} else if g.after != 0 {
		g.requires(l, g.after)
	}
	return l
}

func (g *rankWriter) label(text string) int {
	g.next++
	fmt.Fprintf(g.w, "l%d: %s\n", g.next, text)
	return g.next
}

func (g *rankWriter) requires(l, on int) { fmt.Fprintf(g.w, "l%d requires l%d\n", l, on) }

// blocking makes l the operation later ones wait for.
func (g *rankWriter) blocking(l int) { g.after, g.started = l, 0 }

func send(bytes int64, to, tag int32) string {
	return "send " + strconv.FormatInt(max(bytes, 0), 10) + "b to " + strconv.Itoa(int(to)) + " tag " + tagText(tag)
}

// recv is a receive; a receive of unknown size (SimGrid's probe-first
// rule) is written as 0 bytes, which in LogGOPSim only drops the
// per-byte receive overhead O (the sender's size decides the protocol).
func recv(bytes int64, from, tag int32) string {
	peer := "-1"
	if from != trace.AnySource {
		peer = strconv.Itoa(int(from))
	}
	return "recv " + strconv.FormatInt(max(bytes, 0), 10) + "b from " + peer + " tag " + tagText(tag)
}

func tagText(tag int32) string {
	if tag == trace.AnyTag {
		return "-1"
	}
	return strconv.FormatUint(uint64(uint32(tag)), 10)
}

// calc writes a computation of d seconds (none if it rounds to 0 ns).
func (g *rankWriter) calc(seconds float64) {
	ns := math.Round(seconds * 1e9)
	if !(ns >= 1) {
		return
	}
	g.blocking(g.op("calc " + strconv.FormatFloat(ns, 'f', 0, 64)))
}

// join writes a "calc 0" that requires every label of ls (not empty),
// and makes it the operation later ones wait for. The dependencies of a
// call posted now are implied by the newest of ls unless that was posted
// before them.
func (g *rankWriter) join(ls []int) {
	l := g.label("calc 0")
	newest := 0
	for _, on := range ls {
		g.requires(l, on)
		newest = max(newest, on)
	}
	if g.started > newest {
		fmt.Fprintf(g.w, "l%d irequires l%d\n", l, g.started)
	} else if g.started == 0 && g.after > newest {
		g.requires(l, g.after)
	}
	g.blocking(l)
}

func (g *rankWriter) peer(p int32) (int32, error) {
	if p < 0 || p >= g.n {
		return 0, fmt.Errorf("partner %d out of range [0,%d)", p, g.n)
	}
	return p, nil
}

func (g *rankWriter) event(e *trace.Event) error {
	switch k := e.Kind; {
	case k == trace.Compute:
		g.calc(e.Compute / g.speed)
	case k == trace.Sleep || k.IsIO():
		g.calc(e.Compute)
	case k == trace.Send || k == trace.Isend:
		p, err := g.peer(e.Partner)
		if err != nil {
			return err
		}
		g.pointToPoint(e, send(e.SendBytes, p, e.Tag))
	case k == trace.Recv || k == trace.Irecv:
		if e.Partner != trace.AnySource {
			if _, err := g.peer(e.Partner); err != nil {
				return err
			}
		}
		g.pointToPoint(e, recv(e.RecvBytes, e.Partner, e.Tag))
	case k == trace.SendRecv:
		return g.sendRecv(e)
	case k == trace.Wait:
		if l, ok := g.reqs[e.Request]; ok {
			delete(g.reqs, e.Request)
			g.join([]int{l})
		}
	case k == trace.Waitall:
		g.waitAll(e.Requests)
	case k.IsCollective():
		return g.collective(e)
	}
	return nil
}

// pointToPoint writes a send or receive; a nonblocking one is kept for
// the wait of its request.
func (g *rankWriter) pointToPoint(e *trace.Event, text string) {
	l := g.op(text)
	if e.Kind.IsNonBlocking() {
		g.reqs[e.Request] = l
		g.started = l
		return
	}
	g.blocking(l)
}

// waitAll joins the operations of reqs, or of every outstanding request
// if reqs is nil, in the order they were posted.
func (g *rankWriter) waitAll(reqs []uint64) {
	var ls []int
	if reqs == nil {
		for q, l := range g.reqs {
			ls = append(ls, l)
			delete(g.reqs, q)
		}
	} else {
		for _, q := range reqs {
			if l, ok := g.reqs[q]; ok {
				ls = append(ls, l)
				delete(g.reqs, q)
			}
		}
	}
	if len(ls) == 0 {
		return
	}
	slices.Sort(ls)
	g.join(ls)
}

func (g *rankWriter) sendRecv(e *trace.Event) error {
	to, err := g.peer(e.Partner)
	if err != nil {
		return err
	}
	from := e.Source
	if from != trace.AnySource {
		if from, err = g.peer(from); err != nil {
			return err
		}
	}
	s := g.op(send(e.SendBytes, to, e.Tag))
	r := g.op(recv(e.RecvBytes, from, e.Tag))
	g.join([]int{s, r})
	return nil
}
