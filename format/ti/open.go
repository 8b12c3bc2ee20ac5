package ti

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"kairos/internal/fileio"
	"kairos/internal/prefault"
	"kairos/trace"
)

// Layout is how a TI trace is stored.
type Layout uint8

const (
	// Shared is one file holding the lines of every rank (SimGrid's
	// "shared trace": a description of one line, or the file itself).
	Shared Layout = iota
	// PerRank is a description file whose line i names rank i's file.
	PerRank
)

func (l Layout) String() string {
	if l == PerRank {
		return "per-rank"
	}
	return "shared"
}

// span is where a rank's lines lie in a shared file: from the line
// starting at byte off (line number line) to byte end; size is the bytes
// of the rank's own lines.
type span struct {
	off, end, size int64
	line           int
}

// Trace is an opened TI trace. It implements trace.Source: OpenRank
// streams one rank from its file(s), nothing is held in memory but the
// index of a shared file.
type Trace struct {
	meta  trace.Meta
	n     int
	named int // the ranks the trace's lines or files name, whatever NumRanks
	world int // the size of MPI_COMM_WORLD, whose ranks v-collectives list: n, or a reduced trace's reduced.ranks
	// reps are a reduced trace's ranks in the world (reduced.group.i's
	// representatives), whose lines each file holds; nil otherwise.
	reps   []int
	layout Layout
	desc   string      // the description file, "" if the trace was a data file
	files  []string    // PerRank: one per rank; Shared: the one file
	spans  []span      // Shared: one per rank that has lines
	slot   []int32     // Shared: the index in spans of each rank's, -1 (or beyond its end) for a rank without lines
	data   io.ReaderAt // Shared: the file's bytes (see indexShared); nil to decompress it for each rank
	// Shared, interleaved: the original bytes, data holding each rank's
	// lines together (see regroup), and the line numbers of the rank
	// last asked for (see lineOf).
	orig      io.ReaderAt
	lineCache struct {
		rank  int
		lines []int
	}
	opt ReaderOptions

	// PerRank: what the scan read of each rank's file, for its first
	// OpenRank (see scanHead).
	heads []fileHead

	regions map[string]uint32

	mu       sync.Mutex
	warnings []string
}

// Open opens the TI trace at path (a shared trace file, a single per-rank
// file, a description file listing per-rank files, or a directory holding
// one named IndexName, as kairos tracer writes), with SimGrid's rules: see
// the package documentation.
func Open(path string) (*Trace, error) { return OpenWith(path, ReaderOptions{}) }

// OpenWith is Open with options.
//
// A file with no line SimGrid would read (empty, or only comments) is a
// trace of no ranks.
//
// Opening reads the trace once: a shared file to index where each rank's
// lines are and to find its number of ranks; per-rank files to find
// location lines (whose file names become regions of the metadata) and
// unterminated last lines. The scan of a shared file reads about 30
// million lines per CPU second (BenchmarkOpen), that of per-rank files
// is a byte search; a compressed input costs one more decompression.
func OpenWith(path string, opt ReaderOptions) (*Trace, error) {
	if path == "-" {
		return nil, fmt.Errorf("a TI trace cannot be read from standard input: it is read once per rank; save it to a file")
	}
	path = indexOf(path)
	first, err := firstLine(path)
	if err != nil {
		return nil, err
	}
	t := &Trace{meta: trace.NewMeta(), opt: opt, regions: map[string]uint32{}}
	t.meta.Attrs["format"] = "ti"
	if first == nil || isActionLine(first) && !namesFile(path, first) {
		t.files = []string{path}
		err = t.indexShared()
	} else {
		err = t.openDescription(path)
	}
	if err != nil {
		return nil, err
	}
	t.meta.Attrs["layout"] = t.layout.String()
	t.noteThreads()
	return t, nil
}

// AttrThreadMPI is the Meta.Attrs key of the note that Kairos' tracer did
// not record the MPI calls of threads other than the one that
// initialized MPI (trace.OtherThreadCalls): it ends rank 0's file with the
// comment line OtherThreadsComment and their number, which SimGrid's
// replay skips as any line starting with '#'.
const AttrThreadMPI = "ti.thread-mpi"

// OtherThreadsComment starts the tracer's comment line of AttrThreadMPI.
const OtherThreadsComment = "# kairos_trace: other-thread-calls "

// noteThreads sets AttrThreadMPI from the end of the first file (rank
// 0's, or the shared one), where the tracer writes its comment line.
func (t *Trace) noteThreads() {
	if len(t.files) == 0 {
		return
	}
	f, err := fileio.OpenFile(t.files[0])
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return
	}
	tail := make([]byte, min(st.Size(), 256))
	if _, err := f.ReadAt(tail, st.Size()-int64(len(tail))); err != nil {
		return
	}
	i := bytes.LastIndex(tail, []byte(OtherThreadsComment))
	if i < 0 {
		return
	}
	num, _, _ := bytes.Cut(tail[i+len(OtherThreadsComment):], []byte("\n"))
	if n, err := strconv.ParseUint(string(bytes.TrimSpace(num)), 10, 64); err == nil && n > 0 {
		t.meta.Attrs[AttrThreadMPI] = trace.OtherThreadCalls(n)
	}
}

// firstLine returns the first line of path that SimGrid would not skip,
// trimmed, or nil.
func firstLine(path string) ([]byte, error) {
	f, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lr := newLineReaderSize(f, 1, privateBuf)
	p := parser{}
	for {
		line, _, ok := lr.next()
		if !ok {
			if lr.err != nil {
				return nil, fmt.Errorf("%s: %w", path, lr.err)
			}
			return nil, nil
		}
		if p.split(line) {
			return bytes.TrimSpace(line), nil
		}
	}
}

// isActionLine reports whether a (trimmed) line looks like a trace line,
// "<rank> <something>", rather than a file name of a description.
func isActionLine(line []byte) bool {
	var p parser
	if !p.split(line) || len(p.toks) < 2 {
		return false
	}
	_, ok := parseRank(p.toks[0])
	return ok
}

// namesFile reports whether line, read as a description line, names an
// existing file (a data line never does in practice).
func namesFile(desc string, line []byte) bool {
	_, err := resolve(desc, string(line))
	return err == nil
}

// parseRank parses a rank token as SimGrid matches it against actor
// names: the canonical decimal spelling ("0", "1", ..., no sign, no
// leading zero).
func parseRank(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 8 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, v < trace.MaxRanks
}

// rankRange says what parseRank reads, for the error about a token it
// does not.
var rankRange = fmt.Sprintf("a rank (0 to %d, no sign, no leading zero)", trace.MaxRanks-1)

// openDescription reads a trace description as smpirun does: every
// non-empty line, untrimmed, is a path. One line names a shared trace;
// more name the per-rank files, rank i on line i.
func (t *Trace) openDescription(path string) error {
	data, err := readAll(path)
	if err != nil {
		return err
	}
	var names []string
	var lines []int
	for i, l := range strings.Split(string(data), "\n") {
		if l != "" {
			names = append(names, l)
			lines = append(lines, i+1)
		}
	}
	t.desc = path
	if err := t.readReduced(filepath.Join(filepath.Dir(path), ReducedFile)); err != nil {
		return err
	}
	for i, name := range names {
		p, err := resolve(path, name)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, lines[i], err)
		}
		names[i] = p
	}
	if len(names) == 1 {
		first, err := firstLine(names[0])
		if err != nil {
			return err
		}
		if !isActionLine(first) {
			return fmt.Errorf("%s:%d: %s is not a TI trace file (expected lines \"<rank> <action> ...\")", path, lines[0], names[0])
		}
		t.files = names
		return t.indexShared()
	}
	t.layout = PerRank
	t.n = len(names)
	t.named = t.n
	// A replay opens every rank's file at once.
	fileio.ReserveFiles(len(names))
	if n := t.opt.NumRanks; n > 0 {
		if n > len(names) {
			return &NumRanksError{Path: path, Want: n, Files: len(names)}
		}
		t.n = n
	}
	t.files = names[:t.n]
	return t.scanPerRank()
}

// ReducedFile, next to a description, says that its files are the
// representatives of a reduced trace (kairos_trace's in-situ reduction):
// lines "<key> <value>" of the metadata attributes "reduced.*" that
// cluster.FromReduced reads, which the verbs expand into the whole run;
// lines starting with # are comments. File i holds the lines of
// representative reduced.group.i, a rank of reduced.ranks: they are read
// as that rank's (its rank tokens, its requests' keys, v-collectives' counts
// for every rank).
const ReducedFile = "reduced.txt"

// readReduced puts the attributes of a ReducedFile, if there is one, in
// the metadata.
func (t *Trace) readReduced(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' {
			continue
		}
		key, value, ok := strings.Cut(l, " ")
		if !ok || !strings.HasPrefix(key, "reduced.") {
			return fmt.Errorf("%s:%d: want \"reduced.<key> <value>\", got %.40q", path, i+1, l)
		}
		t.meta.Attrs[key] = strings.TrimSpace(value)
	}
	if v, ok := t.meta.Attrs["reduced.ranks"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<26 {
			return fmt.Errorf("%s: reduced.ranks %q is not a number of ranks", path, v)
		}
		t.world = n // the representatives' v-collectives list every rank's counts
	}
	for i := 0; ; i++ {
		v, ok := t.meta.Attrs["reduced.group."+strconv.Itoa(i)]
		if !ok {
			break
		}
		head, _, _ := strings.Cut(v, " ")
		r, err := strconv.Atoi(head)
		if err != nil || r < 0 || r >= t.world {
			return fmt.Errorf("%s: reduced.group.%d: %q is not a rank below %d", path, i, head, t.world)
		}
		t.reps = append(t.reps, r) // its file's lines are the representative's
	}
	return nil
}

func readAll(path string) ([]byte, error) {
	f, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 1<<30))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// resolve finds the file a description line names. SimGrid resolves it
// against smpirun's working directory; Kairos first tries the
// description's own directory, so that a trace can be read from
// anywhere, then the working directory.
func resolve(desc, name string) (string, error) {
	if filepath.IsAbs(name) {
		st, err := os.Stat(name)
		switch {
		case err != nil:
			return "", fmt.Errorf("trace file %q: %w", name, err)
		case !st.Mode().IsRegular():
			return "", fmt.Errorf("trace file %q is %s", name, irregular(st))
		}
		return name, nil
	}
	cand := filepath.Join(filepath.Dir(desc), name)
	if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() {
		return cand, nil
	}
	if st, err := os.Stat(name); err == nil && st.Mode().IsRegular() {
		return name, nil
	}
	if st, err := os.Stat(cand); err == nil {
		return "", fmt.Errorf("trace file %q (%s) is %s", name, cand, irregular(st))
	}
	return "", fmt.Errorf("cannot find trace file %q (looked in %s and in the working directory)", name, filepath.Dir(desc))
}

// irregular says what a file that is not a regular one is: a directory,
// or not a regular file (a device or a pipe, /dev/zero or /dev/stdin,
// would be read without end, or wait).
func irregular(st os.FileInfo) string {
	if st.IsDir() {
		return "a directory"
	}
	return "not a regular file"
}

// indexShared scans a shared file: it checks every rank token, records
// each rank's span, reads init lines for the default datatype and
// location lines for the regions.
//
// The ranks' readers then read their spans at offsets, from any number of
// ranks at once with one file descriptor. A compressed file is copied
// decompressed, as the scan reads it, to an unnamed temporary file, so
// that a rank's span is not decompressed from the file's start again for
// each rank (a million times at a million ranks); where no temporary file
// can be made, it is.
func (t *Trace) indexShared() error {
	t.layout = Shared
	name := t.files[0]
	f, err := fileio.Open(name)
	if err != nil {
		return err
	}
	var in io.Reader = f
	var tee *spill
	if h, ok := f.(*fileio.Handle); ok {
		t.data = h // kept: closed when the trace is garbage
		runtime.AddCleanup(t, func(h *fileio.Handle) { h.Close() }, h)
	} else {
		defer f.Close()
		if tee = newSpill(); tee != nil {
			in = io.TeeReader(f, tee)
			defer tee.discard() // unless finish took it
		}
	}
	lr := newLineReader(in, 1)
	var p parser
	p.file = name
	inits := map[int]int{}
	locs := map[int][]string{}
	last, prev := -1, -1
	interleaved := false
	for {
		off := lr.offset()
		line, term, ok := lr.next()
		if !ok {
			break
		}
		if !p.split(line) {
			continue
		}
		r, ok := parseRank(p.toks[0])
		if !ok {
			return p.errAt(lr.line, 0, rankRange)
		}
		if !term && !t.opt.KeepLastLine {
			t.warn(fmt.Sprintf("%s:%d: last line has no newline: dropped, as SimGrid 3.32 drops it", name, lr.line))
			break
		}
		for len(t.slot) <= r {
			t.slot = append(t.slot, -1)
		}
		first := t.slot[r] < 0
		if first {
			t.slot[r] = int32(len(t.spans))
			t.spans = append(t.spans, span{off: off, line: lr.line})
		} else if r != prev {
			interleaved = true
		}
		s := &t.spans[t.slot[r]]
		s.end = lr.offset()
		s.size += int64(len(line)) + 1
		last, prev = max(last, r), r
		t.noteLine(&p, r, first, inits, locs)
	}
	if lr.err != nil {
		return fmt.Errorf("%s: %w", name, lr.err)
	}
	if data := tee.finish(); data != nil {
		t.data = data
		runtime.AddCleanup(t, func(f *os.File) { f.Close() }, data)
	}
	t.n = last + 1
	t.named = t.n
	if n := t.opt.NumRanks; n > 0 {
		if n < t.n {
			t.warn(fmt.Sprintf("%s: lines of ranks %d and above ignored (%d ranks requested), as SimGrid does", name, n, n))
		}
		t.n = n
	} else if most := trace.MostRanks(len(t.spans)); t.n > most {
		t.meta.Attrs[trace.AttrClaimedRanks] = fmt.Sprintf("%s:%d names rank %d: %d ranks, of which %d have lines (a trace of so few may name %d ranks at most)",
			name, t.spans[t.slot[last]].line, last, t.n, len(t.spans), most)
	}
	t.slot = t.slot[:min(len(t.slot), t.n)]
	t.setDefaultType(inits)
	t.addRegions(locs)
	if interleaved && len(t.spans) > regroupMin && t.data != nil {
		return t.regroup()
	}
	return nil
}

// noteLine records what Open needs from a line of rank r: whether its
// init has an argument, if the line is the rank's first (an init further
// on is no start: SimGrid replays the actions before it without one), and
// the file name of a location line.
func (t *Trace) noteLine(p *parser, r int, first bool, inits map[int]int, locs map[int][]string) {
	if len(p.toks) < 2 {
		return
	}
	switch string(p.toks[1]) {
	case "init":
		if first {
			inits[r] = min(len(p.toks)-2, 1)
		}
	case "location":
		if len(p.toks) > 2 {
			locs[r] = append(locs[r], string(p.toks[2]))
		}
	}
}

// addRegions makes the location files regions, in rank order then line
// order, so that the ids do not depend on how the ranks' lines are
// interleaved.
func (t *Trace) addRegions(locs map[int][]string) {
	if t.opt.NoRegions {
		return
	}
	for r := 0; r < t.n; r++ {
		for _, name := range locs[r] {
			if _, ok := t.regions[name]; !ok {
				t.regions[name] = t.meta.AddRegion(name, 0)
			}
		}
	}
}

// setDefaultType applies SimGrid's rule: "init" with an argument makes
// MPI_DOUBLE the default datatype, else it is MPI_BYTE. SimGrid keeps one
// process-wide default, set by every rank's init; Kairos takes the
// lowest rank's and warns if ranks disagree.
func (t *Trace) setDefaultType(inits map[int]int) {
	t.meta.DefaultType = trace.TypeByte
	if len(inits) == 0 && t.n > 0 {
		t.warn("no rank starts with init: SimGrid 3.32 sets the default datatype there and crashes on the first action that needs it (kairos convert adds one)")
	}
	first, arg := -1, 0
	for r, a := range inits {
		if first < 0 || r < first {
			first, arg = r, a
		}
	}
	if arg > 0 {
		t.meta.DefaultType = trace.TypeDouble
	}
	other := -1 // the lowest rank that disagrees, so that the warning is the same from run to run
	for r, a := range inits {
		if a != arg && (other < 0 || r < other) {
			other = r
		}
	}
	if other >= 0 {
		t.warn(fmt.Sprintf("rank %d's init disagrees with rank %d's on the default datatype; SimGrid uses whichever init runs last", other, first))
	}
}

// scanPerRank reads every per-rank file once: the first line for init,
// and, if the file mentions "location" at all, its location lines. With
// NoRegions it reads only the first line and the end of each file. The
// files are scanned on as many goroutines as there are processors (at
// 4,096 ranks the scan is a tenth of an analytic replay's time); what
// they find is merged, and reported, in rank order.
func (t *Trace) scanPerRank() error {
	n := len(t.files)
	if t.opt.NoRegions {
		t.heads = make([]fileHead, n)
		runtime.AddCleanup(t, closeHeads, t.heads)
	}
	workers := min(runtime.GOMAXPROCS(0), (n+63)/64)
	found := make([]scanned, workers)
	unterminated := make([]bool, n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range found {
		found[w] = scanned{inits: map[int]int{}, locs: map[int][]string{}, line: make([]byte, 32<<10)}
		wg.Go(func() {
			buf := make([]byte, scanBlock) // one block buffer a worker: no garbage per rank
			for r := int(next.Add(1) - 1); r < n; r = int(next.Add(1) - 1) {
				unterminated[r], errs[r] = t.scanRank(r, &found[w], buf)
				if errs[r] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	inits, locs := map[int]int{}, map[int][]string{}
	for _, f := range found {
		maps.Copy(inits, f.inits)
		maps.Copy(locs, f.locs)
	}
	for r, name := range t.files {
		if errs[r] != nil {
			return errs[r]
		}
		if unterminated[r] && !t.opt.KeepLastLine {
			t.warn(fmt.Sprintf("%s: last line has no newline: dropped, as SimGrid 3.32 drops it", name))
		}
	}
	t.setDefaultType(inits)
	t.addRegions(locs)
	return nil
}

// scanBlock is the block size of the per-rank files' scan.
const scanBlock = 256 << 10

// scanned is what a scan worker noted of its ranks' lines (noteLine),
// with its line buffer.
type scanned struct {
	inits map[int]int
	locs  map[int][]string
	line  []byte
}

// scanRank scans rank r's file into sc and reports whether its last line
// lacks a newline. buf is the worker's block buffer.
func (t *Trace) scanRank(r int, sc *scanned, buf []byte) (unterminated bool, err error) {
	name := t.files[r]
	var tail []byte
	if t.opt.NoRegions {
		if tail, ok, err := t.scanHead(r, sc, buf); ok || err != nil {
			var p parser
			return err == nil && p.split(tail), err
		}
		tail, err = t.scanLines(name, r, false, sc, buf)
	} else {
		var hasLoc bool
		if hasLoc, tail, err = scanBulk(name, []byte("location"), buf); err == nil {
			_, err = t.scanLines(name, r, hasLoc, sc, nil)
		}
	}
	var p parser
	return err == nil && p.split(tail), err
}

// fileHead is the start of a rank's file, read by the scan, and the file
// left open, which the rank's first reader takes over (OpenRank): not
// opening and reading every file a second time took the start-up of a
// 4,096-rank replay (the 1-iteration stencil) from 0.86 to 0.75 s of CPU
// (BENCHMARKS.md). buf is the reader's whole buffer, its first n bytes
// read.
type fileHead struct {
	h   *fileio.Handle
	buf []byte
	n   int
}

// closeHeads closes the files no reader took.
func closeHeads(heads []fileHead) {
	for _, hd := range heads {
		if hd.h != nil {
			hd.h.Close()
		}
	}
}

// scanHead is scanRank's NoRegions scan of an uncompressed file: it
// reads the start of rank r's file into the buffer its reader will have,
// notes its first significant line (its init) in sc and returns the
// bytes after the file's last newline (from that buffer if it holds the
// whole file, else by scanTail with buf). ok is false, and nothing is
// kept, if the file is compressed or the buffer does not hold the first
// significant line: scanLines then reads it.
func (t *Trace) scanHead(r int, sc *scanned, buf []byte) (tail []byte, ok bool, err error) {
	name := t.files[r]
	f, err := fileio.Open(name)
	if err != nil {
		return nil, false, err
	}
	h, isFile := f.(*fileio.Handle)
	if !isFile {
		f.Close()
		return nil, false, nil
	}
	size := h.Size()
	b := make([]byte, bufSize(privateSize(t.n), size))
	m := min(int64(len(b)), size)
	prefault.Bytes(b[:m:m]) // read into whole
	n, err := h.ReadAt(b[:m], 0)
	if err != nil && err != io.EOF {
		h.Close()
		return nil, false, fmt.Errorf("%s: %w", name, err)
	}
	whole := int64(n) == size
	if !t.noteFirst(r, b[:n], whole, sc) {
		h.Close()
		return nil, false, nil
	}
	if whole {
		tail = b[bytes.LastIndexByte(b[:n], '\n')+1 : n]
	} else if tail, err = scanTail(name, h, buf); err != nil {
		h.Close()
		return nil, false, err
	}
	t.heads[r] = fileHead{h: h, buf: b, n: n}
	return tail, true, nil
}

// noteFirst notes the first line SimGrid reads of data, the start of rank
// r's file (all of it if whole), as scanLines does, and reports whether
// data held it (or held all the file).
func (t *Trace) noteFirst(r int, data []byte, whole bool, sc *scanned) bool {
	var p parser
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if !whole {
				return false
			}
			if t.opt.KeepLastLine && p.split(data) {
				t.noteLine(&p, r, true, sc.inits, sc.locs)
			}
			return true
		}
		if p.split(data[:i]) {
			t.noteLine(&p, r, true, sc.inits, sc.locs)
			return true
		}
		data = data[i+1:]
	}
	return whole
}

// takeHead returns what the scan read of rank r's file, once.
func (t *Trace) takeHead(r int) fileHead {
	if t.heads == nil {
		return fileHead{}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	hd := t.heads[r]
	t.heads[r] = fileHead{}
	return hd
}

// scanLines reads the first significant line of a per-rank file (for its
// init) and, if all is set, every line (for location lines). If tailBuf
// is not nil, it returns the bytes after the file's last newline too (see
// scanTail), from the same open file.
func (t *Trace) scanLines(name string, r int, all bool, sc *scanned, tailBuf []byte) ([]byte, error) {
	f, err := fileio.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := len(sc.line)
	if !all {
		size = privateBuf
	}
	lr := &lineReader{r: f, buf: sc.line[:size]}
	var p parser
	first := true
	for {
		line, term, ok := lr.next()
		if !ok || !term && !t.opt.KeepLastLine {
			break
		}
		if !p.split(line) {
			continue
		}
		t.noteLine(&p, r, first, sc.inits, sc.locs)
		first = false
		if !all {
			break
		}
	}
	if lr.err != nil {
		return nil, fmt.Errorf("%s: %w", name, lr.err)
	}
	if tailBuf == nil {
		return nil, nil
	}
	h, _ := f.(*fileio.Handle)
	return scanTail(name, h, tailBuf)
}

// scanTail returns the bytes after the last newline of file name, as
// scanBulk does: from its last block if f is the file opened (and not
// decompressed), else by reading it all. buf is the block buffer.
func scanTail(name string, f *fileio.Handle, buf []byte) ([]byte, error) {
	const tailBlock = 4 << 10
	if f == nil {
		_, tail, err := scanBulk(name, nil, buf)
		return tail, err
	}
	// The last page holds the last line but in rare traces (a long
	// alltoallv line, say), which are read whole below.
	size := f.Size()
	off := max(size-int64(min(tailBlock, len(buf))), 0)
	n, err := f.ReadAt(buf[:size-off], off)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	data := buf[:n]
	i := bytes.LastIndexByte(data, '\n')
	if i < 0 && off > 0 {
		// A last line longer than the block: read it all.
		_, tail, err := scanBulk(name, nil, buf)
		return tail, err
	}
	return append([]byte(nil), data[i+1:]...), nil
}

// scanBulk reads name in large blocks and reports whether it contains
// word, and the bytes after its last newline (its unterminated last
// line, empty if it ends with a newline). buf is its block buffer, longer
// than word.
func scanBulk(name string, word, buf []byte) (found bool, tail []byte, err error) {
	f, err := fileio.Open(name)
	if err != nil {
		return false, nil, err
	}
	defer f.Close()
	keep := 0 // bytes carried over from the previous block
	for {
		n, rerr := io.ReadFull(f, buf[keep:])
		data := buf[:keep+n]
		if !found && len(word) > 0 && bytes.Contains(data, word) {
			found = true
		}
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			tail = append(tail[:0], data[i+1:]...)
		} else if len(tail)+len(data) <= maxLine {
			tail = append(tail, data[keep:]...)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			return found, tail, nil
		}
		if rerr != nil {
			return false, nil, fmt.Errorf("%s: %w", name, rerr)
		}
		keep = 0
		if len(word) > 1 {
			keep = copy(buf, data[len(data)-len(word)+1:])
		}
	}
}

func (t *Trace) warn(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, w := range t.warnings {
		if w == s {
			return
		}
	}
	t.warnings = append(t.warnings, s)
}

// Warnings returns what the reader noticed that SimGrid would treat
// silently or fatally but that does not stop Kairos: dropped last lines,
// ranks disagreeing on the default datatype, waits with no request
// outstanding. Readers add to it as they go.
func (t *Trace) Warnings() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string{}, t.warnings...)
}

// Meta returns the trace's metadata.
func (t *Trace) Meta() *trace.Meta { return &t.meta }

// NumRanks returns the number of ranks.
func (t *Trace) NumRanks() int { return t.n }

// RankEvents returns 0 for a rank of a shared file that has no line, -1
// (unknown) for the others: it makes the Trace a trace.Counter.
func (t *Trace) RankEvents(r int) int64 {
	if t.layout == Shared && t.span(r) == nil {
		return 0
	}
	return -1
}

// span returns the span of rank r of a shared file, nil if it has no
// line.
func (t *Trace) span(r int) *span {
	if r >= len(t.slot) || t.slot[r] < 0 {
		return nil
	}
	return &t.spans[t.slot[r]]
}

// NamedRanks returns the number of ranks the trace's lines or files name,
// which ReaderOptions.NumRanks may raise or lower.
func (t *Trace) NamedRanks() int { return t.named }

// Layout returns how the trace is stored.
func (t *Trace) Layout() Layout { return t.layout }

// Files returns the trace's data files: one per rank, or the shared file.
func (t *Trace) Files() []string { return append([]string{}, t.files...) }

// OpenRank returns a streaming reader of rank r's events. For a shared
// file it reads the part of the file from the rank's first line to its
// last, skipping the other ranks' lines: one pass over the file in all
// for a file written rank after rank, up to one pass per rank for a file
// that interleaves the ranks line by line.
func (t *Trace) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= t.n {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", r, t.n)
	}
	var (
		in     io.Reader
		closer io.Closer
		first  = 1
		mode   = rankStrict
		name   = t.files[0]
		size   = int64(privateBuf)
		buf    = privateSize(t.n)
	)
	if t.layout == PerRank {
		name = t.files[r]
		if hd := t.takeHead(r); hd.h != nil {
			return t.headReader(r, hd), nil
		}
		f, err := fileio.Open(name)
		if err != nil {
			return nil, err
		}
		in, closer = f, f
		if h, ok := f.(*fileio.Handle); ok {
			size = h.Size()
		}
	} else {
		mode, buf = rankFilter, 32<<10 // the rank's span may hold other ranks' lines
		s := t.span(r)
		if s == nil {
			return emptyReader{}, nil
		}
		in, first, size = io.NewSectionReader(t.data, s.off, s.end-s.off), s.line, s.end-s.off
		if t.data == nil {
			rd, c, err := decompressSpan(name, *s)
			if err != nil {
				return nil, err
			}
			in, closer = rd, c
		}
	}
	rd := newRankReader(in, name, t.self(r), first, mode, t.opt.KeepLastLine, bufSize(buf, size))
	rd.closer = closer
	rd.trace = t
	rd.warn = t.warn
	return rd, nil
}

// self returns the rank whose lines rank r's file holds: r, or a reduced
// trace's representative.
func (t *Trace) self(r int) int {
	if r < len(t.reps) {
		return t.reps[r]
	}
	return r
}

// headReader returns the reader of rank r's file that the scan opened and
// started reading (hd).
func (t *Trace) headReader(r int, hd fileHead) *Reader {
	rd := newRankReader(hd.h, t.files[r], t.self(r), 1, rankStrict, t.opt.KeepLastLine, len(hd.buf))
	rd.lr.buf, rd.lr.end = hd.buf, hd.n
	rd.lr.eof = int64(hd.n) == hd.h.Size()
	hd.h.Seek(int64(hd.n), io.SeekStart)
	rd.closer = hd.h
	rd.trace = t
	rd.warn = t.warn
	return rd
}

// decompressSpan returns a reader of the bytes of span s of compressed
// file name, decompressing it from its start.
func decompressSpan(name string, s span) (io.Reader, io.Closer, error) {
	f, err := fileio.Open(name)
	if err != nil {
		return nil, nil, err
	}
	if _, err := io.CopyN(io.Discard, f, s.off); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return io.LimitReader(f, s.end-s.off), f, nil
}

// String describes the trace for messages.
func (t *Trace) String() string {
	if t.desc != "" {
		return t.desc + " (" + t.layout.String() + ", " + strconv.Itoa(t.n) + " ranks)"
	}
	return t.files[0] + " (" + t.layout.String() + ", " + strconv.Itoa(t.n) + " ranks)"
}

// NumRanksError is the error of opening a description of per-rank files
// for more ranks than it lists files: a slip of the caller's (-np), not
// a defect of the trace.
type NumRanksError struct {
	Path        string
	Want, Files int
}

func (e *NumRanksError) Error() string {
	return fmt.Sprintf("%s: %d ranks requested but the description lists %d files", e.Path, e.Want, e.Files)
}
