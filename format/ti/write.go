package ti

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"kairos/internal/fileio"
	"kairos/internal/reqstore"
	"kairos/trace"
)

// WriteOptions choose the layout of a written trace.
type WriteOptions struct {
	// Layout is Shared (one file holding every rank, rank after rank) or
	// PerRank (a description file NAME listing NAME_files/rank-<r>.ti).
	Layout Layout
}

// WriteStats says what a write did.
type WriteStats struct {
	Lines int // action lines written
	// Dropped counts, by kind, the events TI cannot express: CommCreate,
	// CommFree, Probe, Iprobe and Local calls, one-sided and MPI-IO calls,
	// collectives on a
	// communicator other than MPI_COMM_WORLD (SimGrid replays every
	// collective on MPI_COMM_WORLD), v-collectives whose count vectors do
	// not have one entry per rank, waits and tests on a request the rank
	// never started, and location markers without a file name.
	Dropped [trace.NumKinds]int
	// DroppedCalls counts, by MPI function, the dropped events whose kind
	// stands for several and whose region names the function
	// (trace.Meta.MPIFunction: "MPI_File_set_view" rather than "file");
	// Dropped does not count them.
	DroppedCalls map[string]int
	// Inits counts the ranks given an init before their first MPI
	// action, which came before any init: SimGrid's replay sets its
	// default datatype in init and crashes on an action that needs it
	// before (computations, sleeps and locations do not). Those ranks
	// are given a finalize at their end too, where they have none, as
	// are all where the source's writer stopped measuring before it
	// (trace.AttrNoFinalize, which TI cannot carry).
	Inits int
}

// DroppedTotal returns the number of events left out.
func (s *WriteStats) DroppedTotal() int {
	n := 0
	for _, d := range s.Dropped {
		n += d
	}
	for _, d := range s.DroppedCalls {
		n += d
	}
	return n
}

// String summarises the dropped events and added inits, "" if there were
// none.
func (s *WriteStats) String() string {
	var parts []string
	for k, d := range s.Dropped {
		if d > 0 {
			parts = append(parts, trace.Kind(k).String()+" "+strconv.Itoa(d))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.DroppedCalls)) {
		parts = append(parts, name+" "+strconv.Itoa(s.DroppedCalls[name]))
	}
	var notes []string
	if len(parts) > 0 {
		notes = append(notes, fmt.Sprintf("%d events TI cannot express were left out (%s)", s.DroppedTotal(), strings.Join(parts, ", ")))
	}
	if s.Inits > 0 {
		notes = append(notes, fmt.Sprintf("%d ranks without init were given one, and a finalize where they had none (SimGrid's replay crashes without an init)", s.Inits))
	}
	return strings.Join(notes, "; ")
}

// LayoutFor returns the layout Kairos writes for an output name: Shared
// if the name (without .gz or .zst) ends in ".ti" or is "-" (standard
// output, one stream), PerRank otherwise, the way SimGrid's own -trace-ti
// names its description file.
func LayoutFor(path string) Layout {
	if path == "-" || strings.HasSuffix(trimCompression(path), ".ti") {
		return Shared
	}
	return PerRank
}

func trimCompression(path string) string {
	return strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".zst")
}

// WriteFile writes src to path as SimGrid 3.32 reads it, atomically: in
// the Shared layout a single file; in the PerRank layout the per-rank
// files first, NAME_files/rank-<r>.ti next to NAME (in NAME's directory,
// made if need be), then the description NAME, which lists them relative
// to its own directory (run smpirun from that directory, as SimGrid
// resolves them against its working directory). A ".gz" or ".zst" name
// compresses every file (SimGrid cannot read those; Kairos can).
func WriteFile(path string, src trace.Source, opt WriteOptions) (WriteStats, error) {
	var st WriteStats
	if opt.Layout == Shared {
		err := fileio.WriteFile(path, func(w io.Writer) error { return WriteShared(w, src, &st) })
		return st, err
	}
	return st, writePerRank(path, src, &st)
}

// WriteShared writes every rank of src into w, rank after rank.
func WriteShared(w io.Writer, src trace.Source, st *WriteStats) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	world := worldAliases(src.Meta(), src.NumRanks())
	for r := 0; r < src.NumRanks(); r++ {
		if err := writeRank(bw, src, r, r == src.NumRanks()-1, world, st); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writePerRank writes the per-rank files into a fresh directory, swaps it
// in place of NAME_files, then writes the description.
func writePerRank(path string, src trace.Source, st *WriteStats) error {
	base := filepath.Base(path)
	ext := strings.TrimPrefix(base, trimCompression(base))
	dirName := base + "_files"
	dir := filepath.Join(filepath.Dir(path), dirName)
	// The description and its files are a directory's worth: the
	// directory they go in is made if need be (run-ti/index.txt).
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := fileio.MkdirTemp(filepath.Dir(path), "."+dirName+".tmp*")
	if err != nil {
		return err
	}
	defer fileio.RemoveTemp(tmp)
	var desc strings.Builder
	world := worldAliases(src.Meta(), src.NumRanks())
	for r := 0; r < src.NumRanks(); r++ {
		name := "rank-" + strconv.Itoa(r) + ".ti" + ext
		err := fileio.WriteFileIn(filepath.Join(tmp, name), func(w io.Writer) error {
			bw := bufio.NewWriterSize(w, 1<<16)
			if err := writeRank(bw, src, r, false, world, st); err != nil {
				return err
			}
			return bw.Flush()
		})
		if err != nil {
			return err
		}
		desc.WriteString(dirName + "/" + name + "\n")
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := fileio.ReplaceDir(tmp, dir, kairosFile); err != nil {
		return err
	}
	return fileio.WriteFile(path, func(w io.Writer) error {
		_, err := io.WriteString(w, desc.String())
		return err
	})
}

// kairosFile reports whether e, in a directory of per-rank files, is one
// Kairos writes, so that replacing the directory removes nothing else.
func kairosFile(e os.DirEntry) bool {
	return !e.IsDir() && strings.HasPrefix(e.Name(), "rank-") && strings.Contains(e.Name(), ".ti")
}

// rankWriter writes the events of one rank as TI lines.
type rankWriter struct {
	w     *bufio.Writer
	meta  *trace.Meta
	n     int
	rank  int
	buf   []byte
	st    *WriteStats
	reqs  map[uint64]reqKey // outstanding requests
	world map[uint32]bool   // communicators that are MPI_COMM_WORLD
	zeros []int64
	// omitDefault is whether DefaultType may be left unwritten: the
	// trace's default is one "init" can select (BYTE or DOUBLE).
	omitDefault bool
	inited      bool // an init was written
	// given is set when the init was given, the source having none, and
	// finalized when a finalize was written: a rank given its init is
	// given its finalize too, where it has none, since a source that
	// records neither is no run cut short (check tells those by an init
	// without finalize).
	given, finalized bool
}

// worldAliases returns the communicators of meta that are MPI_COMM_WORLD
// under another id: every rank, in world order (a Comm_dup of world, a
// Comm_split of one colour, a Comm_create of world's group: PETSc's and
// Quantum ESPRESSO's collectives). Their collectives are world's in TI,
// as Kairos' tracer writes them.
func worldAliases(meta *trace.Meta, n int) map[uint32]bool {
	var world map[uint32]bool
	for _, c := range meta.Comms {
		if len(c.Members) != n {
			continue
		}
		same := true
		for i, m := range c.Members {
			same = same && m == int32(i)
		}
		if same {
			if world == nil {
				world = map[uint32]bool{}
			}
			world[c.ID] = true
		}
	}
	return world
}

// writeRank writes rank r's lines; last says that it is the last rank of
// a shared file; world holds the communicators that are MPI_COMM_WORLD.
func writeRank(w *bufio.Writer, src trace.Source, r int, last bool, world map[uint32]bool, st *WriteStats) (err error) {
	rd, err := src.OpenRank(r)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := rd.Close(); err == nil {
			err = cerr
		}
	}()
	meta := src.Meta()
	rw := &rankWriter{w: w, meta: meta, n: src.NumRanks(), rank: r, st: st, reqs: map[uint64]reqKey{}, world: world,
		omitDefault: meta.DefaultType == trace.TypeByte || meta.DefaultType == trace.TypeDouble}
	lines := st.Lines
	for rd.Next() {
		if err := rw.event(rd.Event()); err != nil {
			return err
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("rank %d: %w", r, err)
	}
	if last && st.Lines == lines {
		// The last rank of a shared file has nothing TI expresses: an
		// init keeps it, as SimGrid's tracer writes one for every rank;
		// without, the file would have fewer ranks (or no line, which is
		// no trace).
		if err := rw.init(); err != nil {
			return err
		}
	}
	if _, early := meta.Attrs[trace.AttrNoFinalize]; (rw.given || early) && !rw.finalized {
		return rw.whole(" finalize")
	}
	return nil
}

// event writes one event, or counts it as dropped.
func (rw *rankWriter) event(e *trace.Event) error {
	if e.Kind == trace.Deferred {
		return nil // its communication is written at another event
	}
	rw.buf = strconv.AppendInt(rw.buf[:0], int64(rw.rank), 10)
	rw.buf = append(rw.buf, ' ')
	if !rw.format(e) {
		rw.drop(e)
		return nil
	}
	rw.finalized = rw.finalized || e.Kind == trace.Finalize
	if !rw.inited {
		switch e.Kind {
		case trace.Init:
			rw.inited = true
		case trace.Compute, trace.Sleep, trace.Location:
		default:
			if err := rw.init(); err != nil {
				return err
			}
			rw.inited = true
		}
	}
	rw.buf = append(rw.buf, '\n')
	rw.st.Lines++
	_, err := rw.w.Write(rw.buf)
	return err
}

// drop counts e as dropped, by its MPI function where its kind stands for
// several.
func (rw *rankWriter) drop(e *trace.Event) {
	name := rw.meta.MPIFunction(e)
	if name == "" {
		rw.st.Dropped[e.Kind]++
		return
	}
	if rw.st.DroppedCalls == nil {
		rw.st.DroppedCalls = make(map[string]int)
	}
	rw.st.DroppedCalls[name]++
}

// init writes the init line a rank's first MPI action needs, ahead of
// the action in rw.buf.
func (rw *rankWriter) init() error {
	rw.st.Inits++
	rw.given = true
	if rw.meta.DefaultType == trace.TypeDouble {
		return rw.whole(" init 1")
	}
	return rw.whole(" init")
}

// whole writes the rank's action text (" init") as a line of its own.
func (rw *rankWriter) whole(text string) error {
	line := strconv.AppendInt(nil, int64(rw.rank), 10)
	line = append(line, text...)
	line = append(line, '\n')
	rw.st.Lines++
	_, err := rw.w.Write(line)
	return err
}

func (rw *rankWriter) word(s string) { rw.buf = append(rw.buf, s...) }

func (rw *rankWriter) int(v int64) {
	rw.buf = append(rw.buf, ' ')
	rw.buf = strconv.AppendInt(rw.buf, v, 10)
}

// real writes v in the shortest form that reads back to the same float64
// (SimGrid writes 6 significant digits, which loses flops); a whole
// number below 2^53 as an integer, as SimGrid's tracer writes flops
// (558812423, not 5.58812423e+08).
func (rw *rankWriter) real(v float64) {
	rw.buf = append(rw.buf, ' ')
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		rw.buf = strconv.AppendInt(rw.buf, int64(v), 10)
		return
	}
	rw.buf = strconv.AppendFloat(rw.buf, v, 'g', -1, 64)
}

// format appends the action of e to rw.buf; false if TI cannot express it.
func (rw *rankWriter) format(e *trace.Event) bool {
	if e.Kind.IsCollective() && e.Comm != trace.WorldComm && !rw.world[e.Comm] || e.Kind.IsRooted() && e.Partner < 0 {
		return false
	}
	switch e.Kind {
	case trace.Init:
		rw.word("init")
		if rw.meta.DefaultType == trace.TypeDouble {
			rw.word(" 1")
		}
	case trace.Finalize, trace.Barrier, trace.CommSplit, trace.CommDup:
		rw.word(e.Kind.String())
	case trace.CommSize:
		rw.word("comm_size")
		rw.int(int64(rw.n))
	case trace.Compute, trace.Sleep:
		rw.word(e.Kind.String())
		rw.real(e.Compute)
	case trace.Location:
		return rw.location(e)
	case trace.Send, trace.Isend, trace.Recv, trace.Irecv:
		rw.pointToPoint(e)
	case trace.Wait, trace.Test:
		return rw.waitTest(e)
	case trace.Waitall:
		rw.waitall(e)
	case trace.SendRecv:
		rw.sendRecv(e)
	case trace.Bcast:
		rw.word("bcast")
		c, dt := rw.count(oneSize(e))
		rw.int(c)
		rw.int(int64(e.Partner))
		rw.types(dt)
	case trace.Reduce, trace.Allreduce, trace.Scan, trace.Exscan:
		rw.word(e.Kind.String())
		c, dt := rw.count(oneSize(e))
		rw.int(c)
		rw.real(e.Compute)
		if e.Kind == trace.Reduce {
			rw.int(int64(e.Partner))
		}
		rw.types(dt)
	case trace.Alltoall, trace.Allgather, trace.Gather, trace.Scatter:
		rw.word(e.Kind.String())
		sc, sdt := rw.count(e.SendBytes, e.SendType)
		rc, rdt := rw.count(e.RecvBytes, e.RecvType)
		rw.int(sc)
		rw.int(rc)
		if e.Kind.IsRooted() {
			rw.int(int64(e.Partner))
		}
		rw.types(sdt, rdt)
	default:
		return rw.vcollective(e)
	}
	return true
}

// oneSize returns the size and datatype of a collective TI gives one
// size to (bcast, reduce, allreduce, scan, exscan): SendBytes, or, for
// readers that put it on the receive side (a bcast's non-roots),
// RecvBytes.
func oneSize(e *trace.Event) (int64, trace.Datatype) {
	if e.SendBytes == 0 && e.RecvBytes > 0 {
		return e.RecvBytes, e.RecvType
	}
	return e.SendBytes, e.SendType
}

// location writes "location <file> <line>"; the file is the event's
// region name, which must be one token.
func (rw *rankWriter) location(e *trace.Event) bool {
	name := rw.meta.RegionName(e.Region)
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return false
	}
	rw.word("location ")
	rw.word(name)
	rw.int(int64(e.Tag))
	return true
}

// tag returns the tag of a receive as SimGrid spells it.
func tag(t int32) int64 {
	if t == trace.AnyTag {
		return simgridAnyTag
	}
	return int64(t)
}

// partner returns the source of a receive or a wait as SimGrid spells
// it. MPI_ANY_SOURCE is
// written as -555, the value SimGrid's replay honours, not as the -333
// its own tracer writes (which deadlocks the replay).
func partner(p int32) int32 {
	if p == trace.AnySource {
		return simgridAnySource
	}
	return p
}

func (rw *rankWriter) pointToPoint(e *trace.Event) {
	rw.word(e.Kind.String())
	p, t := e.Partner, int64(e.Tag)
	var c int64
	var dt trace.Datatype
	if e.Kind.IsSend() {
		c, dt = rw.count(e.SendBytes, e.SendType)
	} else {
		c, dt = rw.count(e.RecvBytes, e.RecvType)
		p, t = partner(p), tag(e.Tag)
	}
	rw.int(int64(p))
	rw.int(t)
	rw.int(c)
	rw.types(dt)
	me := int32(rw.rank)
	switch e.Kind {
	case trace.Isend:
		rw.start(e.Request, reqKey{Src: me, Dst: p, Tag: int32(t)})
	case trace.Irecv:
		if p == simgridAnySource {
			p = reqstore.AnySourceKey // where SimGrid files it: its wait names -556
		}
		rw.start(e.Request, reqKey{Src: p, Dst: me, Tag: int32(t)})
	}
}

// sendRecv writes a sendRecv, whose two halves SimGrid 3.32 matches with
// tag 0. A sendrecv with another tag (from a timed trace) is written as
// what SimGrid's sendRecv does, with the tag kept: an isend and an irecv,
// then their completion (a waitall when nothing else is outstanding, one
// wait each otherwise).
func (rw *rankWriter) sendRecv(e *trace.Event) {
	sc, sdt := rw.count(e.SendBytes, e.SendType)
	rc, rdt := rw.count(e.RecvBytes, e.RecvType)
	if e.Tag == 0 {
		rw.word("sendRecv")
		rw.int(sc)
		rw.int(int64(e.Partner))
		rw.int(rc)
		rw.int(int64(e.Source))
		rw.int(int64(rw.explicit(sdt)))
		rw.int(int64(rw.explicit(rdt)))
		return
	}
	me, src := int32(rw.rank), partner(e.Source)
	rw.word("isend")
	rw.int(int64(e.Partner))
	rw.int(int64(e.Tag))
	rw.int(sc)
	rw.types(sdt)
	rw.line()
	rw.word("irecv")
	rw.int(int64(src))
	rw.int(tag(e.Tag))
	rw.int(rc)
	rw.types(rdt)
	rw.line()
	if len(rw.reqs) == 0 {
		rw.word("waitall")
		return
	}
	rw.key("wait", reqKey{Src: me, Dst: e.Partner, Tag: e.Tag})
	rw.line()
	rw.key("wait", reqKey{Src: src, Dst: me, Tag: int32(tag(e.Tag))})
}

// line ends the line in rw.buf and starts the next one of the rank.
func (rw *rankWriter) line() {
	rw.buf = append(rw.buf, '\n')
	rw.buf = strconv.AppendInt(rw.buf, int64(rw.rank), 10)
	rw.buf = append(rw.buf, ' ')
	rw.st.Lines++
}

func (rw *rankWriter) start(id uint64, k reqKey) {
	if id == 0 {
		return
	}
	rw.reqs[id] = k
}

// waitTest writes "wait|test <src> <dst> <tag>", the key of the request
// the event completes, or the key the event itself carries (a TI wait on
// no known request, which reads back as itself: its key as it was, -1
// for no rank). A wait on a request that no call of the trace started
// (another format's) has no key to write: it is dropped.
func (rw *rankWriter) waitTest(e *trace.Event) bool {
	k, ok := rw.reqs[e.Request]
	if !ok || e.Request == 0 {
		if e.Request != 0 && (e.Source == trace.NoRank || e.Partner == trace.NoRank) {
			return false
		}
		k = reqKey{Src: partner(e.Source), Dst: e.Partner, Tag: int32(tag(e.Tag))}
	} else if e.Kind == trace.Wait {
		delete(rw.reqs, e.Request)
	}
	rw.key(e.Kind.String(), k)
	return true
}

func (rw *rankWriter) key(action string, k reqKey) {
	rw.word(action)
	rw.int(int64(k.Src))
	rw.int(int64(k.Dst))
	rw.int(int64(k.Tag))
}

// waitall writes "waitall" for a waitall on every outstanding request,
// and one "wait" per request for a waitall on some of them (TI's waitall
// always waits for all).
func (rw *rankWriter) waitall(e *trace.Event) {
	if e.Requests == nil || rw.coversAll(e.Requests) {
		rw.word("waitall")
		clear(rw.reqs)
		return
	}
	first := true
	for _, id := range e.Requests {
		k, ok := rw.reqs[id]
		if !ok {
			continue
		}
		delete(rw.reqs, id)
		if !first {
			rw.line()
		}
		first = false
		rw.key("wait", k)
	}
	if first { // nothing outstanding among them: waitall is then a no-op too
		rw.word("waitall")
	}
}

// coversAll reports whether ids holds every outstanding request.
func (rw *rankWriter) coversAll(ids []uint64) bool {
	n := 0
	for _, id := range ids {
		if _, ok := rw.reqs[id]; ok {
			n++
		}
	}
	return n == len(rw.reqs)
}

// vcollective writes the v-collectives; false if the count vectors do not
// have one entry per rank.
func (rw *rankWriter) vcollective(e *trace.Event) bool {
	sendCounts, ok1 := rw.vector(e.SendCounts)
	recvCounts, ok2 := rw.vector(e.RecvCounts)
	switch e.Kind {
	case trace.Alltoallv:
		if !ok1 || !ok2 {
			return false
		}
		sdt := rw.vtype(e.SendBytes, sendCounts, e.SendType)
		rdt := rw.vtype(e.RecvBytes, recvCounts, e.RecvType)
		rw.word("alltoallv")
		rw.int(rw.countIn(e.SendBytes, sdt))
		rw.counts(sendCounts, sdt)
		rw.int(rw.countIn(e.RecvBytes, rdt))
		rw.counts(recvCounts, rdt)
		rw.types(sdt, rdt)
	case trace.Gatherv, trace.Allgatherv:
		if !ok2 {
			return false
		}
		sc, sdt := rw.count(e.SendBytes, e.SendType)
		rdt := rw.vtype(0, recvCounts, e.RecvType)
		rw.word(e.Kind.String())
		rw.int(sc)
		rw.counts(recvCounts, rdt)
		if e.Kind == trace.Gatherv {
			rw.int(int64(e.Partner))
			rw.types(sdt, rdt)
		} else if rw.types(sdt, rdt) == 2 && rw.n == 1 {
			// SimGrid tells datatypes from displacements by counting
			// tokens; with one rank, two datatypes read as "datatypes
			// and displacements", so write the displacement too.
			rw.int(0)
		}
	case trace.Scatterv:
		if !ok1 {
			return false
		}
		sdt := rw.vtype(0, sendCounts, e.SendType)
		rc, rdt := rw.count(e.RecvBytes, e.RecvType)
		rw.word("scatterv")
		rw.counts(sendCounts, sdt)
		rw.int(rc)
		rw.int(int64(e.Partner))
		rw.types(sdt, rdt)
	case trace.ReduceScatter:
		if !ok2 {
			return false
		}
		dt := rw.vtype(0, recvCounts, e.RecvType)
		rw.word("reducescatter")
		rw.counts(recvCounts, dt)
		rw.real(e.Compute)
		rw.types(dt)
	default: // CommCreate, CommFree, Probe, Iprobe, Local, one-sided and I/O calls, invalid kinds
		return false
	}
	return true
}

// vector returns v if it has one entry per rank, zeros if it is empty
// (the ranks that are not the root of a gatherv or scatterv), and false
// otherwise.
func (rw *rankWriter) vector(v []int64) ([]int64, bool) {
	if len(v) == rw.n {
		return v, true
	}
	if len(v) != 0 {
		return nil, false
	}
	if len(rw.zeros) != rw.n {
		rw.zeros = make([]int64, rw.n)
	}
	return rw.zeros, true
}

// size returns the size of dt, DefaultType resolved.
func (rw *rankWriter) size(dt trace.Datatype) int64 { return dt.Size(rw.meta.DefaultType) }

// explicit returns the id to write for dt.
func (rw *rankWriter) explicit(dt trace.Datatype) trace.Datatype {
	if dt == trace.DefaultType {
		return rw.meta.DefaultType
	}
	return dt
}

// fits reports whether bytes is a whole number of dt elements.
func (rw *rankWriter) fits(bytes int64, dt trace.Datatype) bool {
	sz := rw.size(dt)
	if sz == 0 {
		return bytes == 0
	}
	return bytes < 0 || bytes%sz == 0
}

// usable returns dt, or, where TI cannot write it, the type to use
// instead: the trace default made explicit when "init" cannot select it,
// MPI_BYTE when the bytes are not a whole number of elements.
func (rw *rankWriter) usable(ok bool, dt trace.Datatype) trace.Datatype {
	if !ok {
		return trace.TypeByte
	}
	if dt == trace.DefaultType && !rw.omitDefault {
		return rw.meta.DefaultType
	}
	return dt
}

// count converts bytes of dt to a count, and returns the type written.
func (rw *rankWriter) count(bytes int64, dt trace.Datatype) (int64, trace.Datatype) {
	dt = rw.usable(rw.fits(bytes, dt), dt)
	return rw.countIn(bytes, dt), dt
}

func (rw *rankWriter) countIn(bytes int64, dt trace.Datatype) int64 {
	sz := rw.size(dt)
	if bytes < 0 {
		return -1
	}
	if sz == 0 {
		return 0
	}
	return bytes / sz
}

// vtype returns the type to write a vector of counts (and a buffer size)
// in: dt if every value is a whole number of elements.
func (rw *rankWriter) vtype(buf int64, v []int64, dt trace.Datatype) trace.Datatype {
	ok := rw.fits(buf, dt)
	for _, b := range v {
		ok = ok && b >= 0 && rw.fits(b, dt)
	}
	return rw.usable(ok, dt)
}

func (rw *rankWriter) counts(v []int64, dt trace.Datatype) {
	for _, b := range v {
		rw.int(rw.countIn(b, dt))
	}
}

// types writes the trailing optional datatype ids: none if all are the
// default, else every one up to the last explicit one. It returns how
// many it wrote.
func (rw *rankWriter) types(dts ...trace.Datatype) int {
	last := -1
	for i, dt := range dts {
		if dt != trace.DefaultType {
			last = i
		}
	}
	for _, dt := range dts[:last+1] {
		rw.int(int64(rw.explicit(dt)))
	}
	return last + 1
}
