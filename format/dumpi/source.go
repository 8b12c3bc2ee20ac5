package dumpi

import (
	"fmt"
	"strconv"

	"kairos/trace"
)

// Trace is a DUMPI trace opened for streaming: one .bin file per rank.
// Opening it reads each file's index, header, footer and datatype sizes
// (a few kilobytes per rank) and, if any rank creates communicators, runs
// the communicator pass (see resolveComms); events are then decoded a
// record at a time by OpenRank.
type Trace struct {
	paths   []string
	infos   []*binInfo
	meta    trace.Meta
	t0      stamp // earliest wall time of any record
	hasT0   bool
	comms   *commTable
	regions [len(layouts)]uint32
	open    opener
}

// OpenFiles opens the per-rank .bin files of a trace, rank i from
// paths[i].
func OpenFiles(paths []string) (*Trace, error) { return openFiles(paths, openOS) }

// openFiles is OpenFiles with files opened by open.
func openFiles(paths []string, open opener) (*Trace, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("dumpi: no .bin files")
	}
	t := &Trace{paths: paths, infos: make([]*binInfo, len(paths)), meta: trace.NewMeta(), open: open}
	needPass := false
	for r, p := range paths {
		info, first, err := scanStart(open, p)
		if err != nil {
			return nil, err
		}
		t.infos[r] = info
		if first != nil && (!t.hasT0 || first.before(t.t0)) {
			t.t0, t.hasT0 = *first, true
		}
		needPass = needPass || !info.hasFooter || info.calls[lCommDup]+info.calls[lCommCreate]+
			info.calls[lCommSplit]+info.calls[lCartCreate]+info.calls[lGraphCreate]+info.calls[lWinPost]+info.calls[lWinStart] > 0
	}
	if needPass {
		if err := t.commPass(); err != nil {
			return nil, err
		}
	} else {
		t.comms = &commTable{created: make([][]uint32, len(paths)), epochs: make([][]uint32, len(paths))}
	}
	t.fillMeta()
	return t, nil
}

// scanStart reads a file's description and the wall time its first record
// starts at (nil if it has none).
func scanStart(open opener, path string) (*binInfo, *stamp, error) {
	f, info, err := openBin(open, path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	d := newDecoder(f, info)
	if d.next() && d.c.hasWall() {
		s := d.c.wall[0]
		return info, &s, nil
	}
	return info, nil, d.err
}

// commPass collects every rank's communicator calls and resolves them.
// It decodes every record once; what it keeps is proportional to the
// number of communicator and group calls, not to the events.
func (t *Trace) commPass() error {
	ops := make([][]commOp, len(t.paths))
	for r, p := range t.paths {
		f, _, err := t.open(p)
		if err != nil {
			return err
		}
		ops[r], err = collectOps(newDecoder(f, t.infos[r]))
		f.Close()
		if err != nil {
			return err
		}
	}
	c, err := resolveComms(ops)
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
	for _, info := range t.infos {
		for l, n := range info.calls {
			total[l] += int64(n)
		}
	}
	for l := 0; l < labelAllFunctions; l++ {
		if total[l] > 0 || !t.infos[0].hasFooter {
			t.regions[l] = t.meta.AddRegion(layouts[l].name, 0)
		}
	}
	a := t.meta.Attrs
	h := t.infos[0]
	a["format"] = "dumpi"
	a["dumpi.version"] = fmt.Sprintf("%d.%d.%d", h.version[0], h.version[1], h.version[2])
	a["dumpi.hostname"] = h.host
	a["dumpi.username"] = h.user
	a["dumpi.starttime"] = strconv.FormatUint(h.startTime, 10)
	a["dumpi.rank0"] = t.paths[0]
	if t.hasT0 {
		a["time.origin"] = fmt.Sprintf("%d.%09d", t.t0.sec, t.t0.nsec)
		a["time.unit"] = "wall-clock seconds since time.origin (Unix time or the tracer's clock)"
	}
}

// Meta returns the trace's metadata.
func (t *Trace) Meta() *trace.Meta { return &t.meta }

// NumRanks returns the number of ranks (.bin files).
func (t *Trace) NumRanks() int { return len(t.paths) }

// FooterCounts returns rank r's footer: the number of calls of each label
// the tracer recorded, and false if the file has no footer.
func (t *Trace) FooterCounts(r int) ([]int32, bool) {
	return t.infos[r].calls[:labelAllFunctions], t.infos[r].hasFooter
}

// DatatypeSizes returns rank r's datatype-size table (DUMPI datatype id
// -> bytes).
func (t *Trace) DatatypeSizes(r int) []int32 { return t.infos[r].sizes }

// OpenRank returns a reader of rank r's events. It reads only rank r's
// file.
func (t *Trace) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= len(t.paths) {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", r, len(t.paths))
	}
	f, _, err := t.open(t.paths[r])
	if err != nil {
		return nil, err
	}
	return &Reader{t: t, rank: r, f: f, d: newDecoder(f, t.infos[r]), handles: map[int]uint32{},
		reqs: make([]uint64, 0, 16), created: t.comms.created[r], epochs: t.comms.epochs[r]}, nil
}
