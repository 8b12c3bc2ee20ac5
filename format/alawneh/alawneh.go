// Package alawneh reads the text traces of Alawneh et al.'s reproduction
// package (lalawneh/HPC-MPI-Traces, the seed paper 002's authors), so that
// Kairos' pattern analysis can be compared with their results on their own
// data, and the run checked, replayed and classified. A trace is a
// directory of Process<r>.txt files, one per rank, one call per line:
//
//	Send|Recv <peer> t1 <start> t2 <end> t <tag> l <bytes> m <match>
//	<COLLECTIVE> <next rank> t1 <start> t2 <end> s <sent> r <received> [m <match>]
//	DEL<n>
//
// A point-to-point call with t1 < t2 is non-blocking: an Isend from t1 to
// its completion at t2 (IsendComplete), an Irecv posted at t1
// (IrecvRequest) and completed at t2; it is read as the Isend or Irecv at
// t1, completed by the next Waitall. With t1 = t2 it is a blocking call
// whose duration the authors' tool did not record. DEL lines delimit
// calling contexts (the program's MPI_Waitall ends each); each becomes a
// Waitall of the requests still pending, from the first of their
// completions (or the last call's end) to the last, so that the contexts
// delimit patterns as in the authors' analysis and the requests complete
// when the run completed them. m (the index of the matching call) and the
// next rank of a collective are not kept: Kairos matches messages itself.
//
// The traces were written from Score-P's OTF2 archives, so a collective's
// s and r are the bytes Score-P counts (format/scorep), read back as the
// per-member volumes. Every collective is MPI_COMM_WORLD's (the format
// names no communicator): Open scans the collective lines of every rank,
// so that the k-th collective of every rank is one instance, whose root
// (not in the format) is the member Score-P counts every member's bytes
// at, and whose v-collective count vectors derive from the members'
// totals. A trace whose ranks' collectives disagree is read, but not
// replayed (trace.AttrNoReplay says why).
//
// Times are raw OTF2 ticks. The 4-process SMG2000 trace spans 2.57e9
// ticks, which fits nanoseconds, so a tick is read as one nanosecond (the
// paper prints tick counts as µs).
package alawneh

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"kairos/format"
	"kairos/format/scorep"
	"kairos/internal/fileio"
	"kairos/trace"
)

func init() {
	format.Register(format.Format{
		Name:        "alawneh",
		Description: "the text traces of Alawneh et al.'s reproduction package (directory of Process<r>.txt)",
		Detect:      Detect,
		Hint:        hint,
		Starts:      `a line "OPERATION RANK t1 T1 t2 T2 ..." or "DEL<n>" (a file Process<r>.txt)`,
		Dir:         "Process0.txt, Process1.txt ...",
		Open:        func(path string) (trace.Source, error) { return Open(path) },
	})
}

// tick is the length of one tick of the authors' timestamps.
const tick = trace.Time(1000) // 1 ns in picoseconds

// maxTicks is the latest time a call may end at, in ticks: 2^62 ps.
const maxTicks = (1 << 62) / int64(tick)

// isRankFile reports whether name is Process<r>.txt, r in decimal digits.
// (Not a regular expression compiled when the package loads: with
// GODEBUG=inittrace, this package's initialisation, that alone, was the
// largest of Kairos' own at every run's start.)
func isRankFile(name string) bool {
	r, okP := strings.CutPrefix(name, "Process")
	r, okS := strings.CutSuffix(r, ".txt")
	return okP && okS && r != "" && strings.Trim(r, "0123456789") == ""
}

// Detect reports whether path is a directory holding Process0.txt, or a
// file named Process<r>.txt whose first line is a call or a DEL line.
func Detect(path string, head []byte, isDir bool) bool {
	if isDir {
		_, err := os.Stat(filepath.Join(path, "Process0.txt"))
		return err == nil
	}
	if !isRankFile(filepath.Base(path)) {
		return false
	}
	line, _, _ := strings.Cut(string(head), "\n")
	f := strings.Fields(line)
	if len(f) == 1 {
		return strings.HasPrefix(f[0], "DEL")
	}
	_, err := parseCall(f)
	return err == nil
}

// hint says why a file named as a rank's, which Detect rejected, is not
// one: what is wrong with its first line.
func hint(path string, head []byte) string {
	if head == nil || !isRankFile(filepath.Base(path)) {
		return ""
	}
	line, _, _ := strings.Cut(string(head), "\n")
	if _, err := parseCall(strings.Fields(line)); err != nil {
		return fmt.Sprintf("named as a rank's file of an alawneh trace (Process<r>.txt), but line 1: %v", err)
	}
	return ""
}

// Source is an authors' trace directory.
type Source struct {
	dir   string
	n     int
	meta  trace.Meta
	colls []collective // every rank's k-th collective is colls[k]
	first []trace.Time // each rank's first call's start
}

// collective is an instance of a collective, as Open's scan finds it.
type collective struct {
	kind trace.Kind
	root int32            // the root of a rooted collective, trace.NoRank if none
	v    *scorep.Instance // a v-collective's members' totals
}

// Open opens the trace in directory path (or the directory of the
// Process<r>.txt file path); ranks are Process0.txt, Process1.txt... up
// to the first missing number. It reads every rank's collective lines
// (see the package comment).
func Open(path string) (*Source, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	dir := path
	if !st.IsDir() {
		dir = filepath.Dir(path)
	}
	s := &Source{dir: dir, meta: trace.NewMeta()}
	for ; s.n < trace.MaxRanks; s.n++ {
		st, err := os.Stat(s.file(s.n))
		if err != nil {
			break
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", s.file(s.n))
		}
	}
	if s.n == 0 {
		return nil, fmt.Errorf("%s: no Process0.txt: not a trace of Alawneh et al.'s format", dir)
	}
	if err := s.gap(); err != nil {
		return nil, err
	}
	s.meta.Attrs["format"] = "alawneh"
	s.meta.Attrs["time-unit"] = "1 tick = 1 ns"
	if why := s.scan(); why != "" {
		s.meta.Attrs[trace.AttrNoReplay] = why + " (kairos stats, patterns, phases and slow read it)"
	}
	return s, nil
}

// gap returns an error naming a rank file of the directory beyond the
// ranks Open counted (Process3.txt where Process2.txt is missing), which
// the trace would otherwise leave out.
func (s *Source) gap() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !isRankFile(e.Name()) {
			continue
		}
		r, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(e.Name(), "Process"), ".txt"))
		if err != nil || r >= s.n {
			return fmt.Errorf("%s: there is no %s: expected the ranks' files numbered from Process0.txt without a gap (up to Process%d.txt)",
				filepath.Join(s.dir, e.Name()), filepath.Base(s.file(s.n)), trace.MaxRanks-1)
		}
	}
	return nil
}

// scan reads the collective lines of every rank and makes the instances;
// it returns why the collectives cannot be replayed, "" if they can.
func (s *Source) scan() string {
	var sent, recv [][]int64 // per instance, per member: what Score-P counted
	s.first = make([]trace.Time, s.n)
	for r := range s.n {
		rd, err := s.open(r)
		if err != nil {
			return err.Error()
		}
		k := 0
		for seen := false; rd.Next(); {
			ev := rd.Event()
			if ev.HasTime && !seen {
				s.first[r], seen = ev.Enter, true
			}
			if !ev.Kind.IsCollective() {
				continue
			}
			if k == len(s.colls) && r > 0 {
				rd.Close()
				return fmt.Sprintf("%s: collective #%d, when %s has %d: the ranks' collectives do not match", rd.Position(), k+1, s.file(0), k)
			}
			if k == len(s.colls) {
				s.colls = append(s.colls, collective{kind: ev.Kind, root: trace.NoRank})
				sent, recv = append(sent, make([]int64, s.n)), append(recv, make([]int64, s.n))
			}
			if c := s.colls[k]; c.kind != ev.Kind {
				rd.Close()
				return fmt.Sprintf("%s: collective #%d is %s, rank 0's %s: the ranks' collectives do not match", rd.Position(), k+1, ev.Kind, c.kind)
			}
			sent[k][r], recv[k][r] = ev.SendBytes, ev.RecvBytes
			k++
		}
		rd.Close()
		if err := rd.Err(); err != nil {
			return err.Error()
		}
		if k != len(s.colls) && r > 0 {
			return fmt.Sprintf("%s has %d collectives, %s %d: the ranks' collectives do not match", s.file(r), k, s.file(0), len(s.colls))
		}
	}
	for k := range s.colls {
		if why := s.colls[k].make(k, sent[k], recv[k]); why != "" {
			return why
		}
	}
	return ""
}

// make finds the root of instance k (the one member Score-P counts every
// member's bytes at: a broadcast's or scatter's largest sender, a gather's
// or reduce's largest receiver) and a v-collective's members' totals.
func (c *collective) make(k int, sent, recv []int64) string {
	n := len(sent)
	switch c.kind {
	case trace.Bcast, trace.Scatter, trace.Scatterv:
		c.root = largest(sent)
	case trace.Gather, trace.Gatherv, trace.Reduce:
		c.root = largest(recv)
	}
	if c.kind.IsRooted() && c.root == trace.NoRank {
		return fmt.Sprintf("collective #%d (%s): no member's bytes tell the root", k+1, c.kind)
	}
	if !scorep.IsV(c.kind) {
		return ""
	}
	c.v = scorep.NewInstance(c.kind, n)
	c.v.Root = int(c.root)
	for m := range n {
		ev := c.volumes(int32(m), n, sent[m], recv[m])
		c.v.A[m], c.v.B[m] = scorep.Totals(&ev, sent[m], recv[m], n, false)
	}
	return ""
}

// largest returns the index of the one largest of v, trace.NoRank if
// several are.
func largest(v []int64) int32 {
	best, tie := 0, false
	for i := 1; i < len(v); i++ {
		switch {
		case v[i] > v[best]:
			best, tie = i, false
		case v[i] == v[best]:
			tie = true
		}
	}
	if tie && len(v) > 1 || len(v) == 0 {
		return trace.NoRank
	}
	return int32(best)
}

// volumes returns member me's event of the collective (of n members)
// from the bytes its line counts: its root and the model's volumes.
func (c *collective) volumes(me int32, n int, sent, recv int64) trace.Event {
	ev := trace.NewEvent(c.kind)
	if c.kind.IsRooted() {
		ev.Partner = c.root
	}
	if c.kind != trace.Barrier {
		ev.SendBytes, ev.RecvBytes = scorep.Volumes(c.kind, scorep.Counted{Sent: sent, Recv: recv, Root: me == c.root, Me: int(me), N: n})
	}
	return ev
}

func (s *Source) file(r int) string { return filepath.Join(s.dir, fmt.Sprintf("Process%d.txt", r)) }

// Meta returns the trace's metadata.
func (s *Source) Meta() *trace.Meta { return &s.meta }

// NumRanks returns the number of Process<r>.txt files.
func (s *Source) NumRanks() int { return s.n }

// OpenRank returns a streaming reader of rank r's file.
func (s *Source) OpenRank(r int) (trace.Reader, error) {
	rd, err := s.open(r)
	if err != nil {
		return nil, err
	}
	rd.src, rd.rank = s, int32(r)
	if r < len(s.first) {
		rd.last = s.first[r] // the contexts before the first call
	}
	return rd, nil
}

// open returns a reader of rank r's lines as they are written, for scan.
func (s *Source) open(r int) (*Reader, error) {
	if r < 0 || r >= s.n {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", r, s.n)
	}
	name := s.file(r)
	f, err := fileio.Open(name)
	if err != nil {
		return nil, err
	}
	size := 64 << 10 // grown to 1 MiB for longer lines; no more than the file needs
	if h, ok := f.(*fileio.Handle); ok {
		size = int(min(int64(size), h.Size()+1))
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, size), 1<<20)
	return &Reader{name: name, f: f, sc: sc}, nil
}

// Reader streams one rank's calls. It implements trace.Reader and
// trace.Positioner.
type Reader struct {
	name string
	f    interface{ Close() error }
	sc   *bufio.Scanner
	line int
	ev   trace.Event
	err  error

	// src is the trace whose collectives the reader completes (nil: the
	// lines as written, for Source.scan).
	src     *Source
	rank    int32
	colls   int          // collectives read
	pending []trace.Time // completions of the requests not waited for
	nextReq uint64
	last    trace.Time // the end of the last event
	done    bool
}

// Next reads the next call or DEL line, skipping blank lines; at the end
// of the file, requests still pending are waited for.
func (r *Reader) Next() bool {
	for r.err == nil && !r.done && r.sc.Scan() {
		r.line++
		f := strings.Fields(r.sc.Text())
		switch {
		case len(f) == 0:
			continue
		case len(f) == 1 && strings.HasPrefix(f[0], "DEL"):
			r.waitall()
			return true
		}
		ev, err := parseCall(f)
		if err != nil {
			r.err = fmt.Errorf("%s: %w", r.Position(), err)
			return false
		}
		r.ev = ev
		if r.src != nil {
			r.complete()
		}
		return true
	}
	if r.err == nil && r.sc.Err() != nil {
		r.err = fmt.Errorf("%s: %w", r.Position(), r.sc.Err())
	}
	if r.err != nil || r.done || len(r.pending) == 0 {
		return false
	}
	r.done = true
	r.waitall()
	return true
}

// waitall makes the current event a Waitall of the pending requests.
func (r *Reader) waitall() {
	r.ev = trace.NewEvent(trace.Waitall)
	if r.src == nil {
		return
	}
	enter, exit := r.last, r.last
	if len(r.pending) > 0 {
		enter = max(r.last, slices.Min(r.pending))
		exit = max(r.last, slices.Max(r.pending))
	}
	r.ev.Enter, r.ev.Exit, r.ev.HasTime = enter, exit, true
	r.pending, r.last = r.pending[:0], exit
}

// complete gives the current call what the line leaves implicit: a
// non-blocking call's request, a collective's root, volumes and counts.
func (r *Reader) complete() {
	e := &r.ev
	switch {
	case e.Kind.IsPointToPoint() && e.Exit > e.Enter:
		r.nextReq++
		r.pending = append(r.pending, e.Exit)
		e.Request, e.Exit = r.nextReq, e.Enter
		if e.Kind == trace.Send {
			e.Kind = trace.Isend
		} else {
			e.Kind = trace.Irecv
		}
	case e.Kind.IsCollective() && r.colls < len(r.src.colls):
		c := &r.src.colls[r.colls]
		ev := c.volumes(r.rank, r.src.n, e.SendBytes, e.RecvBytes)
		if c.v != nil {
			c.v.Derive(&ev, int(r.rank))
		}
		ev.Enter, ev.Exit, ev.HasTime = e.Enter, e.Exit, true
		r.ev = ev
	}
	if e.Kind.IsCollective() {
		r.colls++
	}
	r.last = max(r.last, r.ev.Exit)
}

// Event returns the current event.
func (r *Reader) Event() *trace.Event { return &r.ev }

// Err returns the first error.
func (r *Reader) Err() error { return r.err }

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// Position returns "file:line" of the current line.
func (r *Reader) Position() string { return r.name + ":" + strconv.Itoa(r.line) }

// parseCall converts the fields of one call line.
func parseCall(f []string) (trace.Event, error) {
	var e trace.Event
	if len(f) < 6 || len(f)%2 != 0 {
		return e, fmt.Errorf("expected an operation, a rank and key-value pairs, got %d fields", len(f))
	}
	peer, err := strconv.ParseInt(f[1], 10, 32)
	if err != nil || peer < -1 || peer >= trace.MaxRanks {
		return e, fmt.Errorf("expected a rank (-1, or 0 to %d), got %q", trace.MaxRanks-1, f[1])
	}
	val := map[string]int64{}
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || v < 0 {
			return e, fmt.Errorf("expected %s an integer from 0 to %d, got %q", f[i], int64(math.MaxInt64), f[i+1])
		}
		val[f[i]] = v
	}
	switch f[0] {
	case "Send":
		e = trace.NewEvent(trace.Send)
		e.SendBytes = val["l"]
	case "Recv":
		e = trace.NewEvent(trace.Recv)
		e.RecvBytes = val["l"]
	default:
		k, ok := trace.KindByName(strings.ToLower(f[0]))
		if !ok || !k.IsCollective() {
			return e, fmt.Errorf("unknown operation %q (want Send, Recv, a collective or DEL<n>)", f[0])
		}
		e = trace.NewEvent(k)
		e.SendBytes, e.RecvBytes = val["s"], val["r"]
	}
	if e.Kind.IsPointToPoint() {
		if peer < 0 {
			return e, fmt.Errorf("%s needs a peer rank, got %d", f[0], peer)
		}
		e.Partner, e.Tag = int32(peer), int32(val["t"])
	}
	t1, ok1 := val["t1"]
	t2, ok2 := val["t2"]
	switch {
	case !ok1 || !ok2:
		return e, errors.New("expected the keys t1 and t2 (the call's start and end, in ns)")
	case t2 < t1 || t2 > maxTicks:
		return e, fmt.Errorf("expected times 0 <= t1 <= t2 <= %d ns, got t1 %d t2 %d", maxTicks, t1, t2)
	}
	e.Enter, e.Exit, e.HasTime = trace.Time(t1)*tick, trace.Time(t2)*tick, true
	return e, nil
}
