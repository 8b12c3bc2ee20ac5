// Package alawneh reads the text traces of Alawneh et al.'s reproduction
// package (lalawneh/HPC-MPI-Traces, the seed paper 002's authors), so that
// Kairos' pattern analysis can be compared with their results on their own
// data. A trace is a directory of Process<r>.txt files, one per rank, one
// call per line:
//
//	Send|Recv <peer> t1 <start> t2 <end> t <tag> l <bytes> m <match>
//	<COLLECTIVE> <next rank> t1 <start> t2 <end> s <sent> r <received> [m <match>]
//	DEL<n>
//
// A point-to-point call spans t1..t2: Isend to IsendComplete, IrecvRequest
// to Irecv completion, or a blocking call (t1 = t2 when the authors' tool
// did not record its duration). DEL lines delimit calling contexts; they
// become Waitall events, which delimit patterns the same way. m (the
// index of the matching call) and the next rank of a collective are not
// kept: Kairos matches messages itself.
//
// Times are raw OTF2 ticks. The 4-process SMG2000 trace spans 2.57e9
// ticks, which fits nanoseconds, so a tick is read as one nanosecond (the
// paper prints tick counts as µs).
package alawneh

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"kairos/format"
	"kairos/internal/fileio"
	"kairos/trace"
)

func init() {
	format.Register(format.Format{
		Name:        "alawneh",
		Description: "the text traces of Alawneh et al.'s reproduction package (directory of Process<r>.txt)",
		Detect:      Detect,
		Open:        func(path string) (trace.Source, error) { return Open(path) },
	})
}

// tick is the length of one tick of the authors' timestamps.
const tick = trace.Time(1000) // 1 ns in picoseconds

var rankFile = regexp.MustCompile(`^Process(\d+)\.txt$`)

// Detect reports whether path is a directory holding Process0.txt, or a
// file named Process<r>.txt whose first line is a call or a DEL line.
func Detect(path string, head []byte, isDir bool) bool {
	if isDir {
		_, err := os.Stat(filepath.Join(path, "Process0.txt"))
		return err == nil
	}
	if !rankFile.MatchString(filepath.Base(path)) {
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

// Source is an authors' trace directory.
type Source struct {
	dir  string
	n    int
	meta trace.Meta
}

// Open opens the trace in directory path (or the directory of the
// Process<r>.txt file path); ranks are Process0.txt, Process1.txt... up
// to the first missing number.
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
	for ; ; s.n++ {
		if _, err := os.Stat(s.file(s.n)); err != nil {
			break
		}
	}
	if s.n == 0 {
		return nil, fmt.Errorf("%s: no Process0.txt: not a trace of Alawneh et al.'s format", dir)
	}
	s.meta.Attrs["format"] = "alawneh"
	s.meta.Attrs["time-unit"] = "1 tick = 1 ns"
	s.meta.Attrs[trace.AttrNoReplay] = "the format does not say which sends and receives were non-blocking, nor the counts of a collective's members, " +
		"so no replay can follow the run (kairos stats, patterns, phases and slow read it)"
	return s, nil
}

func (s *Source) file(r int) string { return filepath.Join(s.dir, fmt.Sprintf("Process%d.txt", r)) }

// Meta returns the trace's metadata.
func (s *Source) Meta() *trace.Meta { return &s.meta }

// NumRanks returns the number of Process<r>.txt files.
func (s *Source) NumRanks() int { return s.n }

// OpenRank returns a streaming reader of rank r's file.
func (s *Source) OpenRank(r int) (trace.Reader, error) {
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
}

// Next reads the next call or DEL line, skipping blank lines.
func (r *Reader) Next() bool {
	for r.err == nil && r.sc.Scan() {
		r.line++
		f := strings.Fields(r.sc.Text())
		switch {
		case len(f) == 0:
			continue
		case len(f) == 1 && strings.HasPrefix(f[0], "DEL"):
			r.ev = trace.NewEvent(trace.Waitall)
			return true
		}
		ev, err := parseCall(f)
		if err != nil {
			r.err = fmt.Errorf("%s: %w", r.Position(), err)
			return false
		}
		r.ev = ev
		return true
	}
	if r.err == nil && r.sc.Err() != nil {
		r.err = fmt.Errorf("%s: %w", r.Position(), r.sc.Err())
	}
	return false
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
	if err != nil || peer < -1 {
		return e, fmt.Errorf("rank %q is not a rank number", f[1])
	}
	val := map[string]int64{}
	for i := 2; i < len(f); i += 2 {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || v < 0 {
			return e, fmt.Errorf("%s %q is not a non-negative integer", f[i], f[i+1])
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
	if !ok1 || !ok2 || t2 < t1 || t2 > (1<<62)/int64(tick) {
		return e, fmt.Errorf("need times 0 <= t1 <= t2, got t1 %d t2 %d", t1, t2)
	}
	e.Enter, e.Exit, e.HasTime = trace.Time(t1)*tick, trace.Time(t2)*tick, true
	return e, nil
}
