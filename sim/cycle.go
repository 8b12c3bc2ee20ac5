package sim

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"

	"kairos/trace"
)

// Skipping repeated periods. An iterative code's ranks repeat one period
// of calls, and its replay goes through one state again and again,
// shifted in time. At a quiescent date (no transfer, request, message or
// collective in flight: every rank computing), the state is the ranks'
// positions in their actions and the computations' dates relative to now.
// When it is a state met before (a record), to rounding, and every rank's
// next events are the events it replayed since that record, the replay
// from now is the replay from the record shifted by the time between
// them: the period is skipped, its time and counts added, as long as the
// traces repeat it. The events skipped are still read and compared, so a
// change of the trace (another message size, a collective every tenth
// iteration) ends the skipping where it comes. A skip's dates are the
// whole replay's to rounding, not to the bit: nothing is skipped with
// SimGrid's re-solves, which the automatic solver turns to where the
// order of simultaneous events matters, nor across a period in which a
// comparison of dates came near a tie (see nearTie). Off with observers
// (the timed outputs list every action), profiles, the energy models, the
// IB model, full updates, concurrency limits and the small-message mode,
// whose state holds more than this one (kairos/skip-periods:no turns it
// off).

// cycleHistory is how many records are kept: a period can span that many
// quiescent dates (an allreduce every tenth iteration of a stencil makes
// ten).
const cycleHistory = 24

// cycleQuiet is how many quiescent dates may pass without a skip before
// the records and logs stop for cycleNap such dates, then twice as many,
// and so on: a replay that does not repeat pays little for the search.
const (
	cycleQuiet = 2 * cycleHistory
	cycleNap   = 64
)

// cycleLogBudget bounds the logs' bytes in all: a replay that does not
// repeat logs its events from a quiescent date until the next one or
// until a log is full, for nothing, so the budget is what a period of a
// stencil needs many times over (its periods take about a kilobyte a
// rank), not more: 32 MiB cost the non-periodic LU skeleton of 64 ranks
// 15% of its CPU time and 18 MB.
const cycleLogBudget = 1 << 20

// cycleMaxAttempts bounds the skips tried at one date (records whose state
// matched but whose events did not).
const cycleMaxAttempts = 8

// cycleTol is the tolerance, in units in the last place of the date, of
// the relative times of two states taken as one: rounding makes the
// times of one period differ in their last bits from the next one's. It
// is tight: states that come closer and closer without repeating (on a
// dragonfly, say) would be taken as one once close enough, and the skip
// would then extrapolate their last difference.
const cycleTol = 16

// cycles is the state of period skipping.
type cycles struct {
	// logging is set while there are records: the readers then log the
	// events they serve, up to maxLog bytes each (cycleLogBudget in all,
	// at least 4 KiB a rank).
	logging bool
	maxLog  int
	rd      []*cycleReader
	recs    []*cycleRec // oldest first
	free    []*cycleRec
	acts    []*action // scratch: each rank's computation
	periods int64     // periods skipped
	actions int64     // and their events
	// quiet counts the quiescent dates since the last skip; while
	// asleep > 0, that many are let pass unrecorded; nap is the next
	// sleep's length.
	quiet, asleep, nap int
}

// cycleRec is the state at a quiescent date.
type cycleRec struct {
	now   float64
	off   []int64   // by rank: the log offset after the current event
	cur   []int32   // by rank: the length of the current event's encoding
	idx   []int64   // by rank: the current event's index
	flags []uint64  // by rank, cycleFlags each: its discrete state
	sig   []float64 // by rank, cycleFloats each: relative times and amounts
	res   []RankResult
	stats simStats
	glob  [4]float64
}

// cycleFloats and cycleFlags are the numbers of float64 and uint64 of a
// rank's state.
const (
	cycleFloats = 9
	cycleFlags  = 3
)

// cycleReader reads a rank's trace under period skipping: it logs the
// encoding of every event served since the oldest record, and serves
// first the events a skip tried read ahead and put back.
type cycleReader struct {
	in trace.Reader
	// ids is the request ids' state of the events logged, nil where ids
	// do not count (TI traces, whose waits name keys); vids that of the
	// events a skip takes, and pids at the start of its current period.
	ids, vids, pids *reqIDs
	cur             *trace.Event
	ev              trace.Event // the current event, when it came from ahead or was pinned
	ahead           []trace.Event
	head            int
	log             []byte
	base            int64 // the log offset of log[0]
	evStart         int64 // the log offset of the current event's encoding
	scratch         []byte
	index           int64 // of the current event in the rank's trace
	inCur           bool  // the current event is in's current one
	src             trace.Source
	rank            int
	cyc             *cycles
}

func (c *cycleReader) Next() bool {
	if c.head < len(c.ahead) {
		c.ev = c.ahead[c.head]
		c.head++
		c.cur, c.inCur = &c.ev, false
	} else {
		if !c.in.Next() {
			return false
		}
		c.cur, c.inCur = c.in.Event(), true
	}
	c.index++
	switch {
	case c.cyc.logging:
		c.logCurrent()
		if len(c.log) > c.cyc.maxLog {
			c.cyc.overflow()
		}
	case c.ids != nil && defines(c.cur):
		c.ids.hi = max(c.ids.hi, c.cur.Request)
	}
	return true
}

// logCurrent logs the current event. A log takes its share of the
// budget at once, not by doubling from a few bytes: a replay whose
// periods do not repeat fills every rank's log again and again (2,800
// re-allocations on a noisy CG of 256 ranks, 10% of its CPU time).
func (c *cycleReader) logCurrent() {
	c.evStart = c.end()
	if c.log == nil {
		c.log = make([]byte, 0, min(c.cyc.maxLog, cycleLogBudget/len(c.cyc.rd))+256) // and an event past it
	}
	c.log = appendSimEvent(c.log, c.cur, c.ids)
}

func (c *cycleReader) Event() *trace.Event { return c.cur }
func (c *cycleReader) Err() error          { return c.in.Err() }
func (c *cycleReader) Close() error        { return c.in.Close() }

// Position returns the current event's position, as the rank's own
// reader gives it: that reader's, or, if it has read ahead, that of a
// reader of the rank opened again and read up to the current event.
func (c *cycleReader) Position() string {
	if pos, ok := c.in.(trace.Positioner); ok && c.inCur {
		return pos.Position()
	}
	in, err := c.src.OpenRank(c.rank)
	if err != nil {
		return ""
	}
	defer in.Close()
	pos, ok := in.(trace.Positioner)
	if !ok {
		return ""
	}
	for i := int64(0); i <= c.index && in.Next(); i++ {
	}
	return pos.Position()
}

// end is the log offset after the last event logged.
func (c *cycleReader) end() int64 { return c.base + int64(len(c.log)) }

// span returns the log's bytes between offsets from and to.
func (c *cycleReader) span(from, to int64) []byte { return c.log[from-c.base : to-c.base] }

// take returns the next event to serve, without serving it.
func (c *cycleReader) take() *trace.Event {
	if c.head < len(c.ahead) {
		c.head++
		return &c.ahead[c.head-1]
	}
	c.inCur = false
	if !c.in.Next() {
		return nil
	}
	return c.in.Event()
}

// match takes the next events while their encodings are p, and reports
// whether they were all of p. If not, what it took is put back.
func (c *cycleReader) match(p []byte) bool {
	n := 0
	for n < len(p) {
		e := c.take()
		if e == nil {
			c.putBack(p[:n], nil)
			return false
		}
		c.scratch = appendSimEvent(c.scratch[:0], e, c.vids)
		if !bytes.HasPrefix(p[n:], c.scratch) {
			c.putBack(p[:n], e)
			return false
		}
		n += len(c.scratch)
	}
	return true
}

// putBack makes the events encoded in p, then e if not nil, the next ones
// to serve, before those still ahead.
func (c *cycleReader) putBack(p []byte, e *trace.Event) {
	var back []trace.Event
	d := simDecoder{b: p, ids: c.pids.clone()}
	for len(d.b) > 0 {
		var x trace.Event
		d.event(&x)
		back = append(back, x)
	}
	if e != nil {
		back = append(back, cloneEvent(e))
	}
	c.ahead = append(back, c.ahead[c.head:]...)
	c.head = 0
}

// trim drops the log before offset keep.
func (c *cycleReader) trim(keep int64) {
	if n := int(keep - c.base); n > 0 && n >= len(c.log)/2 {
		c.log = c.log[:copy(c.log, c.log[n:])]
		c.base = keep
	}
}

// set and clone copy ids' state (nothing if nil).
func (x *reqIDs) set(y *reqIDs) {
	if x != nil {
		*x = *y
	}
}

func (x *reqIDs) clone() *reqIDs {
	if x == nil {
		return nil
	}
	y := *x
	return &y
}

func cloneEvent(e *trace.Event) trace.Event {
	x := *e
	x.SendCounts = slices.Clone(e.SendCounts)
	x.RecvCounts = slices.Clone(e.RecvCounts)
	x.Requests = slices.Clone(e.Requests)
	return x
}

// reqIDs is the state of a rank's request ids in the encoding of its
// events: the highest id its trace defined so far. Ids are written
// relative to it, so that a period whose requests follow those of the
// period before (the next numbers of a counter, as Score-P's) is written
// as that one was.
type reqIDs struct{ hi uint64 }

// defines reports whether e gives its request an id (Isend, Irecv), rather
// than naming one (a wait or test).
func defines(e *trace.Event) bool { return e.Kind == trace.Isend || e.Kind == trace.Irecv }

// Fields of an event's encoding beyond its kind, partner, tag and sizes,
// present if their bit is set in its mask.
const (
	sfSendType = 1 << iota
	sfRecvType
	sfSource
	sfComm
	sfNewComm
	sfCompute
	sfCounts // SendCounts and RecvCounts
	sfIDs    // Request and Requests
)

// appendSimEvent appends the encoding of what a replay reads of e. ids is
// nil where ids do not count (TI traces, whose waits name keys).
func appendSimEvent(b []byte, e *trace.Event, ids *reqIDs) []byte {
	var mask byte
	for i, set := range [...]bool{e.SendType != trace.DefaultType, e.RecvType != trace.DefaultType,
		e.Source != trace.NoRank, e.Comm != trace.WorldComm, e.NewComm != 0, e.Compute != 0,
		e.SendCounts != nil || e.RecvCounts != nil, e.Requests != nil || ids != nil && e.Request != 0} {
		if set {
			mask |= 1 << i
		}
	}
	b = append(b, byte(e.Kind), mask)
	b = binary.AppendVarint(b, int64(e.Partner))
	b = binary.AppendVarint(b, int64(e.Tag))
	b = binary.AppendVarint(b, e.SendBytes)
	b = binary.AppendVarint(b, e.RecvBytes)
	if mask == 0 {
		return b
	}
	if mask&sfSendType != 0 {
		b = append(b, byte(e.SendType))
	}
	if mask&sfRecvType != 0 {
		b = append(b, byte(e.RecvType))
	}
	if mask&sfSource != 0 {
		b = binary.AppendVarint(b, int64(e.Source))
	}
	if mask&sfComm != 0 {
		b = binary.AppendUvarint(b, uint64(e.Comm))
	}
	if mask&sfNewComm != 0 {
		b = binary.AppendUvarint(b, uint64(e.NewComm))
	}
	if mask&sfCompute != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Compute))
	}
	if mask&sfCounts != 0 {
		b = appendVec(b, e.SendCounts, func(x int64) uint64 { return uint64(x) })
		b = appendVec(b, e.RecvCounts, func(x int64) uint64 { return uint64(x) })
	}
	if mask&sfIDs != 0 {
		b = appendIDs(b, e, ids)
	}
	return b
}

// appendIDs appends e's request ids, relative to the highest id defined
// before (see reqIDs); without ids, only whether a waitall lists
// requests, the one thing a replay reads of them then (it waits for
// none).
func appendIDs(b []byte, e *trace.Event, ids *reqIDs) []byte {
	if ids == nil {
		return append(b, b2u8(e.Requests != nil))
	}
	back := func(id uint64) uint64 { return ids.hi - id }
	switch {
	case e.Request == 0:
		b = append(b, 0)
	case defines(e):
		b = binary.AppendUvarint(append(b, 1), e.Request-ids.hi)
		ids.hi = max(ids.hi, e.Request)
	default:
		b = binary.AppendUvarint(append(b, 2), back(e.Request))
	}
	return appendVec(b, e.Requests, back)
}

// appendVec appends a vector (nil apart from empty) of uvarints f(x).
func appendVec[T any](b []byte, v []T, f func(T) uint64) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	for _, x := range v {
		b = binary.AppendUvarint(b, f(x))
	}
	return b
}

// simDecoder reads the encodings appendSimEvent wrote.
type simDecoder struct {
	b   []byte
	ids *reqIDs
}

func (d *simDecoder) varint() int64 {
	v, n := binary.Varint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *simDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	d.b = d.b[n:]
	return v
}

func (d *simDecoder) byte() byte {
	x := d.b[0]
	d.b = d.b[1:]
	return x
}

func (d *simDecoder) vec() []uint64 {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	v := make([]uint64, n-1)
	for i := range v {
		v[i] = d.uvarint()
	}
	return v
}

// event sets e from the next encoding.
func (d *simDecoder) event(e *trace.Event) {
	e.Reset()
	e.Kind = trace.Kind(d.byte())
	mask := d.byte()
	e.Partner, e.Tag = int32(d.varint()), int32(d.varint())
	e.SendBytes, e.RecvBytes = d.varint(), d.varint()
	if mask&sfSendType != 0 {
		e.SendType = trace.Datatype(d.byte())
	}
	if mask&sfRecvType != 0 {
		e.RecvType = trace.Datatype(d.byte())
	}
	if mask&sfSource != 0 {
		e.Source = int32(d.varint())
	}
	if mask&sfComm != 0 {
		e.Comm = uint32(d.uvarint())
	}
	if mask&sfNewComm != 0 {
		e.NewComm = uint32(d.uvarint())
	}
	if mask&sfCompute != 0 {
		e.Compute = math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
	}
	if mask&sfCounts != 0 {
		e.SendCounts, e.RecvCounts = toInt64(d.vec()), toInt64(d.vec())
	}
	if mask&sfIDs != 0 {
		d.requests(e)
	}
}

// requests sets e's request ids (see appendIDs).
func (d *simDecoder) requests(e *trace.Event) {
	if d.ids == nil {
		if d.byte() != 0 {
			e.Requests = []uint64{}
		}
		return
	}
	hi := d.ids
	switch d.byte() {
	case 1:
		e.Request = hi.hi + d.uvarint()
		hi.hi = max(hi.hi, e.Request)
	case 2:
		e.Request = hi.hi - d.uvarint()
	}
	e.Requests = d.vec()
	for i, x := range e.Requests {
		e.Requests[i] = hi.hi - x
	}
}

func toInt64(v []uint64) []int64 {
	if v == nil {
		return nil
	}
	w := make([]int64, len(v))
	for i, x := range v {
		w[i] = int64(x)
	}
	return w
}

// cyclesOn reports whether s may skip periods (see cycles).
func (s *simulation) cyclesOn(obs Observer) bool {
	c := s.cfg
	// With SimGrid's own re-solves, which the automatic solver turns to
	// where the order of simultaneous events matters (see SolverAuto), a
	// skip could not keep that order: its dates are the whole replay's to
	// rounding, not to the bit.
	return c.SkipPeriods && obs == nil && c.Solver != SolverSimGrid && !c.NetworkFull && !c.CPUFull && !s.asyncOn() && s.ib == nil &&
		!c.LinkEnergy && !c.Energy && c.ConcurrencyLimit < 0 && len(s.profiled) == 0 && len(s.linkProfs) == 0
}

// nearTie notes that s compared the date now with date (a send's post, a
// probe, a back-off counter's last use): if they came out unequal by less
// than a skip's rounding could move them, the outcome of the comparison
// could differ in a skipped period, and the records so far are dropped.
func (s *simulation) nearTie(date float64) {
	if s.cyc != nil && len(s.cyc.recs) > 0 && date != s.now {
		s.dropNear(date, s.now)
	}
}

// nearWindow notes that an event d seconds from now was found due or not
// by the precision window (surf/precision): if d is near its edge, see
// nearTie.
func (s *simulation) nearWindow(d float64) {
	if s.cyc != nil && len(s.cyc.recs) > 0 {
		s.dropNear(max(d, -d), s.cfg.SurfPrecision)
	}
}

// dropNear drops the records if times a and b are near: the tests that
// call it are inlined, and cost nothing where there is no record to drop.
func (s *simulation) dropNear(a, b float64) {
	if s.near(a, b) {
		s.cyc.dropAll()
	}
}

// near reports whether times a and b are within a skip's rounding of each
// other, with a wide margin (see cycleNear).
func (s *simulation) near(a, b float64) bool {
	return math.Abs(a-b) <= cycleNear*max(1, math.Abs(s.now))
}

// cycleNear is how close, relative to the date, two times a comparison
// decides on may come before a skip's rounding could change its outcome:
// 256 units in the last place, sixteen times the states' tolerance.
const cycleNear = 256 * 0x1p-52

// wrapCycles puts a cycleReader in front of each rank's reader.
func (s *simulation) wrapCycles(src trace.Source) {
	c := &cycles{acts: make([]*action, len(s.ranks)), maxLog: max(4<<10, cycleLogBudget/len(s.ranks)), nap: cycleNap}
	for _, r := range s.ranks {
		cr := &cycleReader{in: r.rd, src: src, rank: int(r.id), index: -1, cyc: c}
		if s.indexIDs {
			cr.ids, cr.vids, cr.pids = &reqIDs{}, &reqIDs{}, &reqIDs{}
		}
		c.rd = append(c.rd, cr)
		r.rd, r.pos = cr, cr
	}
	s.cyc = c
}

// quiescent reports at a glance whether s may be at a quiescent date:
// as many actions as ranks, all computations in the heap. (A transfer in
// flight while a rank waits for it passes the first two tests: capture,
// which would find it, walks every action.)
func (s *simulation) quiescent() bool {
	return s.heap.n == len(s.ranks) && s.others == 0 && len(s.acts)-len(s.freeIDs) == len(s.ranks) &&
		len(s.sleeps) == 0 && s.probeExecs == 0 && len(s.lateUnrefs) == 0 && s.netSys.Settled() && s.cpuSys.Settled()
}

// atQuiescent records the state of s, if quiescent, and skips the periods
// that repeat one met before.
func (c *cycles) atQuiescent(s *simulation) {
	if c.asleep > 0 {
		c.asleep--
		return
	}
	rec := c.capture(s)
	if rec == nil {
		return
	}
	if c.quiet++; c.quiet > cycleQuiet {
		c.free = append(c.free, rec)
		c.sleep()
		return
	}
	attempts := 0
	for i := len(c.recs) - 1; i >= 0 && attempts < cycleMaxAttempts; i-- {
		old := c.recs[i]
		if !c.same(old, rec) {
			continue
		}
		if attempts++; attempts == 1 {
			c.pin(s)
		}
		if m := c.skip(old, rec); m > 0 {
			c.quiet, c.nap = 0, cycleNap
			c.push(rec)
			c.jump(s, old, rec, m)
			return
		}
	}
	c.push(rec)
}

// pin copies each rank's current event out of its reader's buffer, which
// the events a skip reads overwrite. (They are computations or sleeps,
// whose events hold no slices; see rankFlags.)
func (c *cycles) pin(s *simulation) {
	for i, r := range s.ranks {
		rd := c.rd[i]
		if rd.cur != &rd.ev {
			rd.ev = *rd.cur
			rd.cur = &rd.ev
		}
		r.ev = rd.cur
	}
}

// capture returns the state of s, or nil if s is not at a quiescent date.
func (c *cycles) capture(s *simulation) *cycleRec {
	if len(s.wins) > 0 {
		// Windows hold state (lists, locks, epochs) no record keeps.
		return nil
	}
	if s.testUse.set && s.testUse.date == s.now || s.probeUse.set && s.probeUse.date == s.now {
		// A back-off counter used now: whether a second use now comes
		// from another rank is state too.
		return nil
	}
	clear(c.acts)
	ok := true
	s.heap.each(func(a *action) {
		if a.kind != actExec || !a.running || !a.inSystem && a.fixedRate == 0 || a.htype != hNormal || a.probe || a.rank == nil || c.acts[a.rank.id] != nil {
			ok = false
			return
		}
		c.acts[a.rank.id] = a
	})
	if !ok {
		return nil
	}
	rec := c.newRec(len(s.ranks))
	for i, r := range s.ranks {
		a, rd := c.acts[i], c.rd[i]
		if a == nil || r.ev != rd.cur || !rankFlags(r, rec.flags[i*cycleFlags:(i+1)*cycleFlags]) {
			// (An event of the rank's own, not its trace's: a start
			// delay's computation, the final barrier.)
			c.free = append(c.free, rec)
			return nil
		}
		if !c.logging {
			// The first record: the logs start with the current events.
			rd.log, rd.base = rd.log[:0], rd.end()
			rd.logCurrent()
		}
		rec.off[i] = rd.end()
		rec.cur[i] = int32(rd.end() - rd.evStart)
		rec.idx[i] = rd.index
		rec.res[i] = r.res
		sig := rec.sig[i*cycleFloats : (i+1)*cycleFloats]
		sig[0] = r.start - s.now
		sig[1] = r.blockStart - s.now
		sig[2] = relDate(r.matchMax, s.now)
		sig[3] = relDate(r.mbox.lastPost, s.now)
		sig[4] = relDate(r.mbox.lastProbe, s.now)
		sig[5] = s.heap.dateOf(a) - s.now
		sig[6] = a.lastUpdate - s.now
		sig[7] = a.remains
		sig[8] = a.rate()
	}
	c.logging = true
	rec.now = s.now
	rec.stats = s.stats
	rec.glob = [4]float64{s.nsleeps, float64(s.probeSleeps), b2f(s.tmpGrown[0]), b2f(s.tmpGrown[1])}
	return rec
}

func b2u8(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// relDate is date relative to now, or date itself if negative (never).
func relDate(date, now float64) float64 {
	if date < 0 {
		return date
	}
	return date - now
}

// rankFlags sets f to r's discrete state, or returns false if r is not
// quiescent: computing or sleeping in an action of its own (not the
// reduction of a collective, whose state refers to its event), with no
// request, message or collective in flight.
func rankFlags(r *rank, f []uint64) bool {
	st := &r.coll
	if r.done || r.ending || !r.busy || r.sleepVar != nil || r.sleepAct != nil || r.slept || r.sendFromSet ||
		len(r.orQueue) > 0 || r.orSleep != 0 || r.wPend != 0 || r.wDone != 0 || r.resume || r.store.Len() != 0 ||
		r.byID.Len() != 0 || r.probeStep != 0 || r.testReq != nil || len(r.arrived) > 0 || r.ev == nil ||
		r.ev.Kind != trace.Compute && r.ev.Kind != trace.Sleep ||
		st.posting || len(st.reqs) > 0 || len(st.carried) > 0 || r.mbox.nsends != 0 || !r.mbox.wildRecv.Empty() ||
		!r.mbox.recvs.Empty() || r.unlockDue || r.async.unlock != nil || r.mtx.owner != nil {
		return false
	}
	var b uint64
	for i, x := range [...]bool{r.queued, r.blocked, r.computing, r.turnUsed, r.execBusy, r.single,
		r.holding, r.holdWait, r.started, r.initDue, r.initSleep, r.delaying, r.endDue, st.srHalf, st.single} {
		if x {
			b |= 1 << i
		}
	}
	f[0] = b | uint64(r.pending)<<16 | uint64(uint32(r.step))<<32
	f[1] = uint64(uint32(st.part)) | uint64(uint32(st.phase))<<32
	f[2] = uint64(st.opIdx)
	return true
}

func (c *cycles) newRec(n int) *cycleRec {
	if k := len(c.free); k > 0 {
		rec := c.free[k-1]
		c.free = c.free[:k-1]
		return rec
	}
	return &cycleRec{off: make([]int64, n), cur: make([]int32, n), idx: make([]int64, n), flags: make([]uint64, n*cycleFlags),
		sig: make([]float64, n*cycleFloats), res: make([]RankResult, n)}
}

// same reports whether records a and b hold one state, a period apart.
func (c *cycles) same(a, b *cycleRec) bool {
	if a.now >= b.now || a.glob != b.glob || !slices.Equal(a.cur, b.cur) || !slices.Equal(a.flags, b.flags) {
		return false
	}
	tol := cycleTol * math.Abs(b.now) * 0x1p-52
	for i, x := range a.sig {
		y := b.sig[i]
		d := math.Abs(x - y)
		if i%cycleFloats == 7 || i%cycleFloats == 8 { // amounts and rates: relative
			if d > cycleTol*0x1p-52*math.Abs(y) {
				return false
			}
		} else if d > tol {
			return false
		}
	}
	progress := false
	for i, rd := range c.rd {
		// The events current at both dates must be one.
		if !bytes.Equal(rd.span(a.off[i]-int64(a.cur[i]), a.off[i]), rd.span(b.off[i]-int64(b.cur[i]), b.off[i])) {
			return false
		}
		progress = progress || b.off[i] > a.off[i]
	}
	return progress
}

// skip takes, as long as every rank's next events are those it replayed
// from old to now, one such period of each rank's events, and returns how
// many periods it took.
func (c *cycles) skip(old, now *cycleRec) int64 {
	var m int64
	for _, rd := range c.rd {
		rd.vids.set(rd.ids)
	}
	defer func() {
		for _, rd := range c.rd {
			rd.ids.set(rd.pids)
		}
	}()
	for {
		for _, rd := range c.rd {
			rd.pids.set(rd.vids)
		}
		for i, rd := range c.rd {
			if !rd.match(rd.span(old.off[i], now.off[i])) {
				for j := range i {
					// Put back the period the ranks before took.
					c.rd[j].putBack(c.rd[j].span(old.off[j], now.off[j]), nil)
				}
				return m
			}
		}
		m++
	}
}

// jump moves s on by m periods from old to rec (the state of s now): the
// clock, the dates in the heap and the ranks', and the counts.
func (c *cycles) jump(s *simulation, old, rec *cycleRec, m int64) {
	c.periods += m
	s.skipped = true
	span := rec.now - old.now
	d := float64(m) * span
	s.now = rec.now + d
	acts := make([]*action, 0, s.heap.n)
	dates := make([]float64, 0, s.heap.n)
	for !s.heap.empty() {
		a := s.heap.top()
		acts = append(acts, a)
		dates = append(dates, s.heap.minDate())
		s.heap.remove(a)
	}
	for i, a := range acts {
		a.lastUpdate += d
		s.heap.set(a, dates[i]+d)
	}
	for _, r := range s.ranks {
		r.start += d
		r.blockStart += d
		shiftDate(&r.matchMax, d)
		shiftDate(&r.mbox.lastPost, d)
		shiftDate(&r.mbox.lastProbe, d)
	}
	if s.testUse.set {
		s.testUse.date += d
	}
	if s.probeUse.set {
		s.probeUse.date += d
	}
	k := float64(m)
	c.actions += m * (rec.stats.actions - old.stats.actions)
	s.stats.actions += m * (rec.stats.actions - old.stats.actions)
	s.stats.messages += m * (rec.stats.messages - old.stats.messages)
	s.stats.bytes += m * (rec.stats.bytes - old.stats.bytes)
	for i, r := range s.ranks {
		a, b := &old.res[i], &rec.res[i]
		r.res.Compute += k * (b.Compute - a.Compute)
		r.res.Comm += k * (b.Comm - a.Comm)
		r.res.Wait += k * (b.Wait - a.Wait)
		r.res.Backoff += k * (b.Backoff - a.Backoff)
		r.res.Tests += m * (b.Tests - a.Tests)
		r.res.FailedTests += m * (b.FailedTests - a.FailedTests)
		r.res.IO += k * (b.IO - a.IO)
		c.rd[i].index += m * (rec.idx[i] - old.idx[i])
	}
	c.relog(old, rec, m)
}

// relog adds the records of the dates skipped, the last cycleHistory of
// them, as if they had been replayed: a longer period (an allreduce every
// tenth iteration) is found across a skip.
func (c *cycles) relog(old, rec *cycleRec, m int64) {
	period := make([][]byte, len(c.rd))
	for j, rd := range c.rd {
		period[j] = slices.Clone(rd.span(old.off[j], rec.off[j]))
	}
	first := max(1, m-cycleHistory+1)
	for j, rd := range c.rd {
		rd.log = slices.Grow(rd.log, int(m-first+1)*len(period[j]))
	}
	var recs []*cycleRec
	for i := first; i <= m; i++ {
		k := float64(i)
		x := c.newRec(len(c.rd))
		x.now = rec.now + k*(rec.now-old.now)
		copy(x.cur, rec.cur)
		copy(x.flags, rec.flags)
		copy(x.sig, rec.sig)
		x.glob = rec.glob
		x.stats = simStats{
			messages: rec.stats.messages + i*(rec.stats.messages-old.stats.messages),
			bytes:    rec.stats.bytes + i*(rec.stats.bytes-old.stats.bytes),
			actions:  rec.stats.actions + i*(rec.stats.actions-old.stats.actions),
		}
		for j, rd := range c.rd {
			rd.log = append(rd.log, period[j]...)
			x.off[j] = rd.end()
			x.idx[j] = rec.idx[j] + i*(rec.idx[j]-old.idx[j])
			a, b := &old.res[j], &rec.res[j]
			x.res[j] = RankResult{Compute: b.Compute + k*(b.Compute-a.Compute), Comm: b.Comm + k*(b.Comm-a.Comm),
				Wait: b.Wait + k*(b.Wait-a.Wait), Finish: b.Finish, Init: b.Init}
		}
		recs = append(recs, x)
	}
	for _, x := range recs {
		c.push(x)
	}
}

func shiftDate(t *float64, d float64) {
	if *t >= 0 {
		*t += d
	}
}

// push adds rec to the records, dropping the oldest beyond cycleHistory,
// and trims the logs.
func (c *cycles) push(rec *cycleRec) {
	c.recs = append(c.recs, rec)
	if len(c.recs) > cycleHistory {
		c.free = append(c.free, c.recs[0])
		c.recs = c.recs[:copy(c.recs, c.recs[1:])]
	}
	c.trim()
}

// trim drops from the logs what no record needs.
func (c *cycles) trim() {
	first := c.recs[0]
	for i, rd := range c.rd {
		rd.trim(first.off[i] - int64(first.cur[i]))
	}
}

// sleep drops the records and stops the logs for the next nap quiescent
// dates, and doubles the nap.
func (c *cycles) sleep() {
	c.dropAll()
	c.asleep, c.quiet = c.nap, 0
	c.nap = min(2*c.nap, 1<<20)
}

// dropAll drops every record, and stops the logs.
func (c *cycles) dropAll() {
	for len(c.recs) > 0 {
		c.dropOldest()
	}
}

// overflow drops the oldest record, a log having grown too long, and if
// none is left, lets the next quiescent dates pass as after cycleQuiet
// of them without a skip: the period, if any, is longer than the logs
// hold.
func (c *cycles) overflow() {
	c.dropOldest()
	if len(c.recs) == 0 {
		c.sleep()
	}
}

// dropOldest drops the oldest record, when a log grew too long: the
// period, if any, is longer than the logs may hold. Without records, the
// readers log nothing until the next quiescent date.
func (c *cycles) dropOldest() {
	if len(c.recs) > 0 {
		c.free = append(c.free, c.recs[0])
		c.recs = c.recs[:copy(c.recs, c.recs[1:])]
	}
	if len(c.recs) > 0 {
		c.trim()
		return
	}
	c.logging = false
	for _, rd := range c.rd {
		rd.base += int64(len(rd.log))
		rd.log = rd.log[:0]
	}
}

// repeatWindow is how many of rank 0's first events mayRepeat looks at,
// and repeatRun how many of them in a row must repeat the events a period
// before.
const (
	repeatWindow = 4096
	repeatRun    = 24
)

// mayRepeat reports whether src may have periods to skip: whether rank 0's
// first repeatWindow events hold a stretch that repeats a period (calls,
// parameters and computations, a timed trace's gaps between calls
// included) over twice that period and repeatRun events or more. A trace
// whose computations vary from one iteration to the next (any real
// program's, a noisy skeleton's) holds none, and no period of it can be
// skipped, which needs every rank's calls to repeat.
func mayRepeat(src trace.Source) bool {
	rd, err := src.OpenRank(0)
	if err != nil {
		return true // the replay will say what is wrong
	}
	defer rd.Close()
	var keys []uint64
	var last trace.Time
	for len(keys) < repeatWindow && rd.Next() {
		e := rd.Event()
		keys = append(keys, periodKey(e, last))
		if e.HasTime {
			last = e.Exit
		}
	}
	return periodic(keys)
}

// periodic reports whether keys hold a run of max(2p, repeatRun)
// consecutive positions j with keys[j] == keys[j+p], for some period p.
// Any such run holds a position that is a multiple of its length minus
// one, so only those are tried and a match is then extended both ways:
// the time of a trace that repeats nowhere is about n log n, not n² (a
// few milliseconds of every replay of 4,096 events).
func periodic(keys []uint64) bool {
	n := len(keys)
	for p := 1; 3*p <= n; p++ {
		run := max(2*p, repeatRun)
		for s := run - 1; s+p < n; s += run {
			if keys[s] != keys[s+p] {
				continue
			}
			lo, hi := s, s
			for lo > 0 && keys[lo-1] == keys[lo-1+p] {
				lo--
			}
			for hi+1+p < n && keys[hi+1] == keys[hi+1+p] {
				hi++
			}
			if hi-lo+1 >= run {
				return true
			}
		}
	}
	return false
}

// periodKey hashes what a period's repetition keeps of event e (not its
// request ids or dates, but its gap since the previous event's end, last,
// in a timed trace).
func periodKey(e *trace.Event, last trace.Time) uint64 {
	h := uint64(e.Kind)
	mix := func(v uint64) { h = (h ^ v) * 0x100000001b3 }
	mix(uint64(uint32(e.Partner)) | uint64(uint32(e.Source))<<32)
	mix(uint64(uint32(e.Tag)) | uint64(e.Comm)<<32)
	mix(uint64(e.SendBytes))
	mix(uint64(e.RecvBytes))
	mix(math.Float64bits(e.Compute))
	for _, v := range e.SendCounts {
		mix(uint64(v))
	}
	for _, v := range e.RecvCounts {
		mix(uint64(v))
	}
	if e.HasTime {
		mix(uint64(e.Enter - last))
	}
	return h
}
