package otf2

import (
	"errors"
	"math"
	"os"
)

// Mapping types (the MappingType enum) of the references event records
// carry.
const (
	MapString             = 0
	MapAttribute          = 1
	MapLocation           = 2
	MapRegion             = 3
	MapGroup              = 4
	MapMetric             = 5
	MapComm               = 6
	MapParameter          = 7
	MapRmaWin             = 8
	MapCallingContext     = 10
	MapInterruptGenerator = 11
	MapIoFile             = 12
	MapIoHandle           = 13
	numMapTypes           = 15
	idMapDense            = 0
)

// idMap maps the local ids of one location to global ids (OTF2_IdMap).
type idMap struct {
	dense  []uint64
	sparse map[uint64]uint64
}

func (m *idMap) global(local uint64) uint64 {
	if m.sparse != nil {
		if g, ok := m.sparse[local]; ok {
			return g
		}
		return local
	}
	if local < uint64(len(m.dense)) {
		return m.dense[local]
	}
	return local
}

// clockInterval is a span between two ClockOffset records; a timestamp in
// it is corrected by offset + slope·(t − begin) (otf2_archive_location.c).
type clockInterval struct {
	begin, end uint64
	offset     int64
	slope      float64
}

// localDefs are the definitions of one location: mapping tables and
// clock offsets.
type localDefs struct {
	maps      [numMapTypes]*idMap
	intervals []clockInterval
	offsets   []ClockOffset
}

// ClockOffset is one synchronisation point of a location's clock.
type ClockOffset struct {
	Time   uint64
	Offset int64
	StdDev float64
}

var errClockOrder = errors.New("clock offsets are not in increasing time order")

// readLocalDefs reads a location's .def file; a missing file means no
// mappings and no clock offsets, as in OTF2.
func readLocalDefs(path string, chunkSize uint64) (*localDefs, error) {
	ld := &localDefs{}
	c, err := openChunkFile(path, chunkSize)
	if errors.Is(err, os.ErrNotExist) {
		return ld, nil
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	err = c.records(func(typ uint8, p *rbuf) error {
		switch typ {
		case defMappingTable:
			return ld.addMapping(p)
		case defClockOffset:
			o := ClockOffset{Time: p.u64full(), Offset: int64(p.u64()), StdDev: p.f64()}
			if p.failed() {
				return errShortDef
			}
			return ld.addOffset(o)
		}
		return nil
	})
	return ld, err
}

func (ld *localDefs) addMapping(p *rbuf) error {
	typ := p.u8()
	n := p.u64()
	mode := p.u8()
	if p.failed() || n > uint64(p.left()) {
		return errShortDef
	}
	m := &idMap{}
	if mode == idMapDense {
		m.dense = make([]uint64, n)
		for i := range m.dense {
			m.dense[i] = p.u64()
		}
	} else {
		m.sparse = make(map[uint64]uint64, n)
		for i := uint64(0); i < n && !p.failed(); i++ {
			l := p.u64()
			m.sparse[l] = p.u64()
		}
	}
	if p.failed() {
		return errShortDef
	}
	if int(typ) < numMapTypes && ld.maps[typ] == nil {
		ld.maps[typ] = m
	}
	return nil
}

// addOffset records a clock offset and closes the interval the previous
// one opened.
func (ld *localDefs) addOffset(o ClockOffset) error {
	if k := len(ld.offsets); k > 0 {
		prev := ld.offsets[k-1]
		if prev.Time >= o.Time {
			return errClockOrder
		}
		ld.intervals = append(ld.intervals, clockInterval{
			begin:  prev.Time,
			end:    o.Time,
			offset: prev.Offset,
			slope:  float64(o.Offset-prev.Offset) / float64(o.Time-prev.Time),
		})
	}
	ld.offsets = append(ld.offsets, o)
	return nil
}

// clock corrects a location's timestamps as OTF2's event reader does:
// interpolate the offset in the interval holding t (the first one before
// it, the last one after it), searching forward from the previous one.
//
// The correction of one interval changes once in 1/slope ticks, and a
// location's timestamps come in order: the clock keeps the span of those
// known to take the last correction, which most take without the
// arithmetic (5% of the profile of reading HPCC's polling archive, 1.6%
// so).
type clock struct {
	iv  []clockInterval
	cur int
	// The n timestamps from lo take the correction add (interval cur's).
	lo, n, add uint64
}

func (c *clock) correct(t uint64) uint64 {
	if t-c.lo < c.n {
		return t + c.add
	}
	if len(c.iv) == 0 {
		return t
	}
	for c.cur < len(c.iv)-1 && t > c.iv[c.cur].end {
		c.cur++
	}
	in := &c.iv[c.cur]
	add, x := in.at(t)
	c.lo, c.n, c.add = t, 1+c.after(in, t, add, x), add
	return t + add
}

// at returns the correction of t in the interval, and the slope's part
// of it before rounding.
func (in *clockInterval) at(t uint64) (add uint64, x float64) {
	var diff float64
	if t >= in.begin {
		diff = float64(t - in.begin)
	} else {
		diff = -float64(in.begin - t)
	}
	x = in.slope * diff
	return uint64(in.offset + int64(math.RoundToEven(x))), x
}

// after returns how many timestamps after t take t's correction add (x
// before rounding) in interval cur, in, as far as it is quick to know:
// the correction is monotonic in the timestamp (a multiplication by the
// slope, rounded), so that the timestamps between two of one correction
// take it too. The first that may not is estimated from x and checked;
// none past the interval's end but in the last one, which holds every
// later timestamp.
func (c *clock) after(in *clockInterval, t, add uint64, x float64) uint64 {
	limit := uint64(math.MaxUint64)
	if c.cur < len(c.iv)-1 {
		limit = in.end
	}
	if t >= limit || math.IsNaN(x) || math.Abs(x) >= 1<<52 {
		return 0
	}
	if in.slope == 0 {
		return limit - t
	}
	r := math.RoundToEven(x)
	dx := r + 0.5 - x // to the next correction
	if in.slope < 0 {
		dx = x - (r - 0.5)
	}
	steps := dx/math.Abs(in.slope)*(1-1e-9) - 2 // short of it
	if !(steps >= 1) {
		return 0
	}
	d := limit - t
	if steps < float64(d) {
		d = uint64(steps)
	}
	if a, y := in.at(t + d); a != add || math.Abs(y) >= 1<<52 { // y's rounding converted exactly, as x's
		return 0
	}
	return d
}
