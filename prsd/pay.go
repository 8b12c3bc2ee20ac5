package prsd

import (
	"math"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A rank whose calls fold into few loops may still not pay to fold: a
// polling loop's iteration counts, and its calls' times, take a value an
// instance, and the series that keep them grow with the calls until the
// structure takes more bytes than the events (MPICH's greq_test, 16.7
// million MPI_Test calls of one rank: the structure took 30 s and 700
// MB to build, and format/rsd kept the events). foldsLittle, which
// counts items, does not see it; payCheck weighs the series.

// payCheck weighs a rank's structure, as it is built, against its
// cluster's events' bytes in the trace's file, prorated to the rank's
// events read: a structure that takes as many bytes as the events it
// stands for, or more, will not take less than 1/Options.LoopsPay of
// them once the rank is read (the series only grow, and the rank's
// events take a like share of its cluster's as the events so far). The
// margin, payMargin, keeps a folding that pays from being given up on
// a prefix that folds worse than the rest.
type payCheck struct {
	share  float64 // the cluster's events' bytes, over the rank's events
	ratio  float64 // Options.LoopsPay
	eps    float64 // Options.TimeError
	hist   bool    // Options.Histograms
	events int64   // the rank's events read
	total  int64   // the rank's events
	last   float64 // the structure's bytes over its events' at the last check (0: none)
	buf    []byte  // the series' encoding, reused
}

// payMargin is how many times the bytes a structure may take and still
// be kept (1/Options.LoopsPay of its events') its estimate must take for
// the folding to be given up.
const payMargin = 2

// minPayCalls is the number of a rank's calls from which payCheck
// weighs its structure: a smaller rank is cheap to fold whatever it
// pays, and its few series say little about the rest.
const minPayCalls = 1 << 16

// newPayCheck returns the check of a rank of events events, of a cluster
// whose events take bytes bytes, compressed with opt; nil where a count
// is unknown (<0) or opt.LoopsPay is 0.
func newPayCheck(bytes, events int64, opt *Options) *payCheck {
	if bytes < 0 || events <= 0 || opt.LoopsPay <= 0 {
		return nil
	}
	return &payCheck{share: float64(bytes) / float64(events), ratio: float64(opt.LoopsPay), eps: opt.TimeError, hist: opt.Histograms, total: events}
}

// outgrows reports whether c's structure, after calls calls, takes
// payMargin times the bytes it may take to be kept, or more: the
// encoding of its series (their parameters, loop counts and times, as
// the file keeps them), zstd-compressed as format/rsd packs a cluster's
// items where that is smaller. Timings the file may keep in a few bytes
// are not counted: those within the time error of a mean, and, with
// histograms, times of many values. Or whether it will: see settles.
func (p *payCheck) outgrows(c *compressor) bool {
	if p == nil || c.calls < minPayCalls {
		return false
	}
	events := p.share * float64(p.events) // the events' bytes so far
	keep := events / p.ratio              // what the structure may take to be kept
	p.buf = p.appendSeries(p.buf[:0], c.seq)
	if float64(len(p.buf)) < keep {
		p.last = float64(len(p.buf)) / events
		return false
	}
	z := float64(min(len(ItemsEncoder().EncodeAll(p.buf, nil)), len(p.buf)))
	return z >= payMargin*keep || p.settles(z/events)
}

// settles reports whether a structure that takes r times its events'
// bytes, and took p.last at the check before, will still take more than
// it may to be kept (1/Options.LoopsPay) at the rank's end, where at
// least an eighth of the rank is read: its share falling at the pace of
// the last doubling of its calls for the doublings left (HPCC's polls on
// 4 ranks: 0.69 to 0.93 of their events' bytes at every check, each rank
// folded to its end, its 1.08 M calls, to be kept as its events). The
// pace is measured over what was read, so a rank whose first eighth
// folds worse than the rest may give up a folding that would have paid:
// its cluster keeps its events, which replay alike.
func (p *payCheck) settles(r float64) bool {
	last := p.last
	p.last = r
	if last == 0 || 8*p.events < p.total {
		return false
	}
	pace := min(r/last, 1)
	for left := p.events; left < p.total; left *= 2 {
		r *= pace
	}
	return r >= 1/p.ratio
}

// outgrows reports whether c's series outgrow its events' bytes
// (payCheck.outgrows), and notes it.
func (c *compressor) outgrows() bool {
	c.outgrown = c.pay.outgrows(c)
	return c.outgrown
}

// appendSeries appends the encoding of the series of items, and of
// their bodies', that the file will keep: loop counts, parameters, and
// the timings merger.addTiming keeps one by one, as the index of their
// value where they take few (statAcc.exact), else as their levels.
func (p *payCheck) appendSeries(dst []byte, items []*rnode) []byte {
	for _, n := range items {
		if n.isLoop() {
			dst = n.counts.appendEncoding(dst)
			dst = p.appendSeries(dst, n.body)
			continue
		}
		a := n.acc
		if a == nil {
			continue
		}
		for _, fa := range a.fields {
			if fa == nil {
				continue
			}
			for i := range fa.modes {
				dst = fa.modes[i].appendEncoding(dst)
			}
			dst = fa.lens.appendEncoding(dst)
			for i := range fa.elems {
				dst = fa.elems[i].appendEncoding(dst)
			}
		}
		for k, st := range a.stats {
			switch {
			case st == nil || !st.spread(k, p.eps):
			case !st.many:
				dst = st.index.appendEncoding(dst)
			case !p.hist:
				dst = st.levels.appendEncoding(dst)
			}
		}
	}
	return dst
}

// spread reports whether the instances of statistic k are too far
// apart for any mean to hold them within the time error eps
// (merger.tolerance): the file keeps them one by one.
func (s *statAcc) spread(k int, eps float64) bool {
	tol := eps / 3 * max(math.Abs(s.min), math.Abs(s.max))
	if isTime(k) && eps > 0 {
		tol += timeTolerance
	}
	return s.n > 0 && s.max-s.min > 2*tol
}

// appendEncoding appends the runs built so far, frozen and open, as a
// series' encoding holds them (without the open run of equal
// differences).
func (b *seriesBuilder) appendEncoding(dst []byte) []byte {
	if b.frz != nil {
		dst = append(dst, b.frz.enc...)
	}
	return appendRunItems(dst, b.runs)
}

// ItemsEncoder is the zstd encoder of a cluster's items, format/rsd's
// (made once: its tables take megabytes), with which payCheck weighs a
// structure as the file would keep it.
var ItemsEncoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBetterCompression),
		zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
	if err != nil {
		panic(err) // only for invalid options
	}
	return e
})
