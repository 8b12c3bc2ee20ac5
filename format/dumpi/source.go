package dumpi

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"kairos/trace"
)

// Trace is a DUMPI trace opened for streaming: one .bin file per rank.
// Opening it reads each file's index, header, footer and datatype sizes
// (a few kilobytes per rank) and, if any rank creates communicators, runs
// the communicator pass (see resolveComms); events are then decoded a
// record at a time by OpenRank.
//
// A trace may hold only some ranks' files (a rank's file alone, or an
// archive some files of which are missing): its ranks are then those of
// the run's MPI_COMM_WORLD, the ranks without a file have no events, and
// Meta.Attrs["partial"] says which they are.
type Trace struct {
	n     int        // MPI_COMM_WORLD's size
	files []rankFile // the ranks that have a file, in rank order
	meta  trace.Meta
	t0    stamp // earliest time of any record
	hasT0 bool
	// cpuRanks counts the ranks whose records have CPU times and no wall
	// times (sst-dumpi's "timestamp cpu"): their CPU times are read.
	cpuRanks int
	comms    *commTable
	regions  [len(layouts)]uint32
	// unknown are the regions of calls on communicators the trace does
	// not say the members of (see Reader.comm).
	unknown [len(layouts)]uint32
	open    opener
	// threaded counts the ranks whose records name threads other than
	// the first (commPass).
	threaded int
	// unseen are, per rank read to its end, what it did with handles no
	// call of the trace made (Warnings).
	unseenMu sync.Mutex
	unseen   map[int]unseen
}

// unseen counts a rank's calls on handles no call of the trace made: the
// waits and tests that completed requests, and the one-sided calls on
// windows (MPI-3's, which sst-dumpi does not record the creation of).
type unseen struct{ requests, windows int64 }

// readUnseen records what rank r, read to its end, did with handles no
// call of the trace made.
func (t *Trace) readUnseen(r int, u unseen) {
	if u == (unseen{}) {
		return
	}
	t.unseenMu.Lock()
	defer t.unseenMu.Unlock()
	if t.unseen == nil {
		t.unseen = map[int]unseen{}
	}
	t.unseen[r] = u
}

// Warnings says what the ranks read so far showed and the trace's
// notes (Meta.Attrs) could not say before reading them: waits and tests
// of requests that no call of the trace started, such as a non-blocking
// collective's (sst-dumpi records none), and one-sided calls on windows
// no call of the trace created (MPI-3's).
func (t *Trace) Warnings() []string {
	t.unseenMu.Lock()
	defer t.unseenMu.Unlock()
	var sum unseen
	var reqRanks, winRanks int
	for _, u := range t.unseen {
		sum.requests += u.requests
		sum.windows += u.windows
		reqRanks += min(1, int(u.requests))
		winRanks += min(1, int(u.windows))
	}
	var w []string
	if sum.requests > 0 {
		w = append(w, fmt.Sprintf("%d waits and tests on %d ranks completed requests that no call of the trace started "+
			"(non-blocking collectives, which sst-dumpi does not record, non-blocking I/O, calls left out of the recording): their "+
			"time reads as MPI time, and what they waited for is not in the trace, so that a replay does not wait there", sum.requests, reqRanks))
	}
	if sum.windows > 0 {
		w = append(w, fmt.Sprintf("%d one-sided calls on %d ranks are on windows that no call of the trace created "+
			"(MPI-3's MPI_Win_allocate and the calls on its windows, which sst-dumpi does not record, or a window created before tracing began): "+
			"they read as MPI time (deferred calls), their transfers are not replayed, and the time of the calls sst-dumpi left out reads as computation", sum.windows, winRanks))
	}
	return w
}

// rankFile is a rank that has a file: what the trace keeps of a rank, so
// that a run of millions of ranks of which few have a file costs the
// files.
type rankFile struct {
	rank int
	path string
	info *binInfo
}

// OpenFiles opens the per-rank .bin files of a trace, rank i from
// paths[i]; a rank whose path is "" has no file (see Trace).
func OpenFiles(paths []string) (*Trace, error) {
	var files []rankFile
	for r, p := range paths {
		if p != "" {
			files = append(files, rankFile{rank: r, path: p})
		}
	}
	return openFiles(len(paths), files, openOS)
}

// openFiles opens a trace of n ranks, those of files (in rank order)
// with a file, opened by open.
func openFiles(n int, files []rankFile, open opener) (*Trace, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("dumpi: no .bin files")
	}
	t := &Trace{n: n, files: files, meta: trace.NewMeta(), open: open}
	for i := range files {
		info, first, cpu, err := scanStart(open, files[i].path)
		if err != nil {
			return nil, err
		}
		files[i].info = info
		if cpu {
			t.cpuRanks++
		}
		if first != nil && (!t.hasT0 || first.before(t.t0)) {
			t.t0, t.hasT0 = *first, true
		}
	}
	if err := t.commPass(); err != nil {
		return nil, err
	}
	t.fillMeta()
	return t, nil
}

// unknownComms says which ranks call communicators whose members the
// trace does not say (see Reader.comm), "" if none do.
func (t *Trace) unknownComms() string {
	var parts []string
	calls, ranks := 0, 0
	for i, u := range t.comms.unknown {
		if len(u) == 0 {
			continue
		}
		r := t.files[i].rank
		ranks++
		n := 0
		for _, c := range u {
			n += c
		}
		calls += n
		if len(parts) < 4 {
			hs := slices.Sorted(maps.Keys(u))
			parts = append(parts, fmt.Sprintf("rank %d: handles %s (%d calls)", r, strings.Trim(fmt.Sprint(hs), "[]"), n))
		}
	}
	if calls == 0 {
		return ""
	}
	more := ""
	if ranks > len(parts) {
		more = fmt.Sprintf("; and %d more ranks", ranks-len(parts))
	}
	return fmt.Sprintf("%d calls on %d ranks are on communicators the trace does not create (created before tracing began, or by calls Kairos does not follow or sst-dumpi does not record: MPI_Comm_create_group, intercommunicators...): %s%s; they are read as MPI time (deferred calls) named \"<function> (unknown communicator)\", their messages are not replayed",
		calls, ranks, strings.Join(parts, "; "), more)
}

// file returns the index in t.files of rank r's file, false if r has
// none.
func (t *Trace) file(r int) (int, bool) {
	return slices.BinarySearchFunc(t.files, r, func(f rankFile, r int) int { return cmp.Compare(f.rank, r) })
}

// absent lists the ranks without a file as ranges ("0-4, 6"): the gaps
// between the files.
func (t *Trace) absent() string {
	var b strings.Builder
	gap := func(from, to int) { // ranks from to to-1
		if from >= to {
			return
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(from))
		if to-1 > from {
			b.WriteString("-" + strconv.Itoa(to-1))
		}
	}
	next := 0
	for _, f := range t.files {
		gap(next, f.rank)
		next = f.rank + 1
	}
	gap(next, t.n)
	return b.String()
}

// scanStart reads a file's description and the time its first record
// starts at (nil if it has none), and whether that is a CPU time.
func scanStart(open opener, path string) (*binInfo, *stamp, bool, error) {
	f, info, err := openBin(open, path)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	d := newDecoder(f, info)
	if d.next() {
		if ts, cpu, ok := d.c.times(); ok {
			return info, &ts[0], cpu, nil
		}
	}
	return info, nil, false, d.err
}

// commPass collects every rank's communicator calls and resolves them.
// It decodes every record once; what it keeps is proportional to the
// number of communicator and group calls, not to the events: the calls
// on other communicators are counted, per handle, between two changes of
// what the handle names.
func (t *Trace) commPass() error {
	ops := make([][]commOp, len(t.files))
	ranks := make([]int, len(t.files))
	for i, rf := range t.files {
		f, _, err := t.open(rf.path)
		if err != nil {
			return err
		}
		ranks[i] = rf.rank
		var threads int
		ops[i], threads, err = collectOps(newDecoder(f, rf.info))
		f.Close()
		if err != nil {
			return err
		}
		if threads > 0 {
			t.threaded++
		}
	}
	c, err := resolveComms(ops, ranks, t.n)
	if err != nil {
		return fmt.Errorf("dumpi: %w", err)
	}
	t.comms = c
	return nil
}

// fillMeta builds the metadata: communicators, the regions naming the MPI
// functions the footers count, and the provenance attributes.
func (t *Trace) fillMeta() {
	for i, m := range t.comms.members {
		t.meta.Comms = append(t.meta.Comms, trace.Comm{ID: uint32(i + 1), Members: m})
	}
	var total [numCounted]int64
	for _, f := range t.files {
		for l, n := range f.info.calls {
			total[l] += int64(n)
		}
	}
	for l := 0; l < labelAllFunctions; l++ {
		if total[l] > 0 || !t.files[0].info.hasFooter {
			t.regions[l] = t.meta.AddRegion(layouts[l].name, 0)
			if _, ok := programs()[l].fields["comm"]; ok {
				t.unknown[l] = t.meta.AddRegion(layouts[l].name+" (unknown communicator)", 0)
			}
		}
	}
	a := t.meta.Attrs
	h := t.files[0].info
	a["format"] = "dumpi"
	a["dumpi.version"] = fmt.Sprintf("%d.%d.%d", h.version[0], h.version[1], h.version[2])
	a["dumpi.hostname"] = h.host
	a["dumpi.username"] = h.user
	a["dumpi.starttime"] = strconv.FormatUint(h.startTime, 10)
	a["dumpi.rank0"] = t.files[0].path
	if u := t.unknownComms(); u != "" {
		a["unknown-comms"] = u
	}
	if absent := t.absent(); absent != "" {
		a["partial"] = fmt.Sprintf("ranks %s of MPI_COMM_WORLD's %d have no .bin file: they have no events, and the messages and collectives they take part in have no partner in the trace", absent, t.n)
	}
	if n := t.ignored(); n != "" {
		a[AttrIgnored] = n
	}
	if t.threaded > 0 {
		a[AttrThreads] = fmt.Sprintf("%d ranks recorded calls of more than one thread (MPI_THREAD_MULTIPLE), whose records "+
			"interleave in one file: the model reads a rank's calls as one stream, so that the calls of two threads overlap in it "+
			"(its MPI time counts both), and a replay may not complete", t.threaded)
	}
	if t.hasT0 {
		a["time.origin"] = fmt.Sprintf("%d.%09d", t.t0.sec, t.t0.nsec)
		a["time.unit"] = "wall-clock seconds since time.origin (Unix time or the tracer's clock)"
	}
	if t.cpuRanks > 0 {
		a["time.unit"] = "seconds since time.origin: wall-clock, or each process's CPU time where it has no wall time"
		a[AttrCPUClock] = fmt.Sprintf("%d ranks recorded CPU times and no wall times (sst-dumpi's \"timestamp cpu\"): their times are "+
			"the CPU time of each process, a clock of its own, so that computation is right, a wait that sleeps looks shorter "+
			"than it was, and their times do not line up with other ranks'", t.cpuRanks)
	}
}

// AttrCPUClock is the Meta.Attrs key that says how many ranks' times are
// CPU times.
const AttrCPUClock = "dumpi.cpu-clock"

// AttrThreads is the Meta.Attrs key that says how many ranks recorded
// calls of several threads.
const AttrThreads = "dumpi.threads"

// AttrIgnored is the Meta.Attrs key that says which calls that
// communicate sst-dumpi counted and did not record.
const AttrIgnored = "dumpi.ignored"

// ignored says which calls that communicate (communicates) the footers
// count as ignored (sst-dumpi's configuration left them out:
// "MPI_Isend disable"), "" if none: their messages have no partner, and
// a replay waits for them. Left-out local calls (MPI_Wtime) change
// nothing the model reads.
func (t *Trace) ignored() string {
	var total [numCounted]int64
	for _, f := range t.files {
		for l, n := range f.info.ignored {
			total[l] += int64(max(n, 0))
		}
	}
	type count struct {
		name string
		n    int64
	}
	var list []count
	for l := 0; l < labelAllFunctions && l < len(layouts); l++ {
		if total[l] > 0 && communicates(l) {
			list = append(list, count{layouts[l].name, total[l]})
		}
	}
	if len(list) == 0 {
		return ""
	}
	slices.SortStableFunc(list, func(a, b count) int { return cmp.Compare(b.n, a.n) })
	var parts []string
	for _, c := range list[:min(len(list), 6)] {
		parts = append(parts, fmt.Sprintf("%s %d", c.name, c.n))
	}
	if len(list) > 6 {
		parts = append(parts, fmt.Sprintf("%d functions more", len(list)-6))
	}
	return "the tracer counted and left out calls that communicate (sst-dumpi's configuration, \"... disable\"), over all ranks: " +
		strings.Join(parts, ", ") + "; their messages and collectives have no partner in the trace, and a replay may not complete"
}

// communicates reports whether calls of label l send, receive, complete
// requests, make communicators or are collectives: what the model of the
// other ranks' calls depends on.
func communicates(l int) bool {
	if _, ok := collectiveKinds[l]; ok {
		return true
	}
	for _, f := range []string{"dest", "source", "request", "requests", "newcomm"} {
		if _, ok := programs()[l].fields[f]; ok {
			return true
		}
	}
	return false
}

// Meta returns the trace's metadata.
func (t *Trace) Meta() *trace.Meta { return &t.meta }

// NumRanks returns the number of ranks: MPI_COMM_WORLD's size, files or
// not (see Trace).
func (t *Trace) NumRanks() int { return t.n }

// FooterCounts returns rank r's footer: the number of calls of each label
// the tracer recorded, and false if the file has no footer.
func (t *Trace) FooterCounts(r int) ([]int32, bool) {
	i, ok := t.file(r)
	if !ok {
		return nil, false
	}
	info := t.files[i].info
	return info.calls[:labelAllFunctions], info.hasFooter
}

// DatatypeSizes returns rank r's datatype-size table (DUMPI datatype id
// -> bytes).
func (t *Trace) DatatypeSizes(r int) []int32 {
	i, ok := t.file(r)
	if !ok {
		return nil
	}
	return t.files[i].info.sizes
}

// OpenRank returns a reader of rank r's events. It reads only rank r's
// file.
func (t *Trace) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= t.n {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", r, t.n)
	}
	i, ok := t.file(r)
	if !ok {
		return absentRank{}, nil
	}
	rf := t.files[i]
	f, _, err := t.open(rf.path)
	if err != nil {
		return nil, err
	}
	d := newDecoderAt(f, rf.info, rf.info.body+8, readBuffer(len(t.files)))
	return &Reader{t: t, rank: r, f: f, d: d, handles: map[int]uint32{},
		reqs: make([]uint64, 0, 16), created: t.comms.created[i], epochs: t.comms.epochs[i], self: t.comms.self[i]}, nil
}

// Every rank's reader may be open at once (a replay reads them in turn):
// their buffers share readBudget, each of minRead at least. (Variables
// for the tests, which read through buffers of a few bytes.)
var (
	readBudget = 64 << 20
	minRead    = 4 << 10
)

// readBuffer returns the buffer of a reader among files open at once:
// bufSize up to 1,024 ranks, less beyond (64 KB a rank were 1 GB at
// 16,384 ranks).
func readBuffer(files int) int {
	return max(min(bufSize, readBudget/max(files, 1)), minRead)
}

// absentRank is the reader of a rank without a file: it has no events.
type absentRank struct{}

func (absentRank) Next() bool          { return false }
func (absentRank) Event() *trace.Event { return nil }
func (absentRank) Err() error          { return nil }
func (absentRank) Close() error        { return nil }
