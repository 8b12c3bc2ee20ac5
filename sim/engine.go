package sim

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"kairos/sim/maxmin"
)

// Kinds of resource actions.
const (
	actExec  uint8 = iota // computation on a host's CPU
	actSleep              // a sleep (duration only)
	actComm               // a network transfer
	actStart              // the start of a rank at its date (Config.StartDates)
)

// Heap entry types, as SimGrid's ActionHeap types.
const (
	hNone uint8 = iota
	hLatency
	hNormal
	hMaxDuration
)

// action is a CPU execution, a sleep or a network transfer in progress.
type action struct {
	// The fields the heap, the re-dating of a solve and the end of the
	// action read, in its first cache line: at thousands of ranks an
	// action is rarely in cache when its date comes.
	kind       uint8
	htype      uint8
	running    bool
	inSystem   bool  // v is a variable of a max-min system
	slot       int32 // the action's index in actionHeap.act and .link, for life
	v          *maxmin.Variable
	remains    float64
	lastUpdate float64
	lastValue  float64
	factor     float64 // rate factor (bw-factor for transfers)
	// what completes when the action ends
	comm *comm
	rank *rank

	penalty   float64 // sharing penalty once the latency is paid
	latency   float64 // latency to pay (factored); a sleep's duration
	fixedRate float64 // analytic mode: the contention-free rate
	userBound float64 // a computation's own rate bound (an iprobe's), 0 if none
	probe     bool    // the computation of an MPI_Iprobe
	// With link profiles only: a transfer's route latency (unfactored),
	// the smallest bandwidth of its route (-1 if none: SimGrid's user
	// bound), and its start order.
	latCurrent, netBound float64
	seq                  uint64
	// Under a concurrency limit, a sleep's CPU share (see sleepShared)
	// is last counted at shareMark.
	shareMark float64
	// With cpu/optim:Full, a sleep's time left (its latency is its
	// duration).
	left float64
	// grp is the block whose ranks' order may differ from SimGrid's
	// that started the action, 0 if none, and starter the rank (or
	// ended action) whose turn started it (see order.go); blk is the
	// block the action is in when it ends.
	grp, blk uint64
	starter  int32

	_ [actionPad]byte
}

// actionPad pads an action to 192 bytes, a size class whose objects
// start on cache lines.
const actionPad = 192 - 168

func (a *action) rate() float64 {
	if !a.inSystem {
		return a.fixedRate
	}
	return a.v.Value() * a.factor
}

// heapSet schedules a at date with heap entry type t. Equal dates pop in
// the order of their last set, as in SimGrid (see actionHeap).
func (s *simulation) heapSet(a *action, date float64, t uint8) {
	s.work.Dated++
	a.htype = t
	s.heap.set(a, date)
}

func (s *simulation) heapRemove(a *action) {
	a.htype = hNone
	s.heap.remove(a)
}

func doubleUpdate(v *float64, d, prec float64) {
	*v -= d
	if *v < prec {
		*v = 0
	}
}

func (s *simulation) newAction(kind uint8) *action {
	var a *action
	if n := len(s.freeActs); n > 0 {
		a = s.freeActs[n-1]
		s.freeActs = s.freeActs[:n-1]
		v, slot := a.v, a.slot
		*a = action{}
		a.v, a.slot = v, slot
	} else {
		a = &action{}
		s.heap.register(a)
	}
	a.kind = kind
	if kind != actExec {
		s.others++
	}
	a.running = true
	a.lastUpdate = s.now
	a.grp, a.starter = s.grp, s.starter
	return a
}

func (s *simulation) freeAction(a *action) {
	if s.heap.contains(a) {
		s.heapRemove(a) // a reused action must not inherit a heap entry
	}
	if a.kind != actExec {
		s.others--
	}
	a.comm, a.rank = nil, nil
	s.freed = append(s.freed, a)
}

// variable returns a fresh max-min variable for a (reusing a's old one).
func (s *simulation) variable(a *action, id int32, penalty, bound float64, n int) *maxmin.Variable {
	if a.v != nil {
		a.v.Reset(id, penalty, bound)
		return a.v
	}
	return s.cpuSys.NewVariable(id, penalty, bound, n)
}

// startExec starts flops of computation on r's host for rank r.
func (s *simulation) startExec(r *rank, flops float64) {
	s.startExecBounded(r, flops, 0)
}

// startExecBounded starts flops of computation on r's host for rank r, at
// most at the host's current speed and at rate user if positive (SimGrid's
// user bound), and returns it.
func (s *simulation) startExecBounded(r *rank, flops, user float64) *action {
	h := &s.hosts[r.host]
	a := s.newAction(actExec)
	a.rank = r
	a.remains = flops
	a.factor = 1
	a.userBound = user
	if h.solo {
		// Contention-free: the computation's rate is its bound until it
		// ends, as the max-min system would solve it alone on its core.
		a.fixedRate = h.execBound(user)
		a.lastValue = a.fixedRate
		s.heapSet(a, s.now+flops/a.fixedRate, hNormal)
		return a
	}
	a.v = s.variable(a, s.actID(a), 1, h.execBound(user), 1)
	a.inSystem = true
	s.cpuSys.Expand(h.cpu, a.v, 1)
	if h.track {
		s.execStarted(h, a)
	}
	if s.cfg.CPUFull {
		s.cpuStarted = append(s.cpuStarted, a)
	}
	return a
}

// execBound is the rate bound of a computation on h: one core at the
// current speed, or its user bound if lower.
func (h *hostState) execBound(user float64) float64 {
	b := h.scale * h.speed
	if user > 0 && user < b {
		b = user
	}
	return b
}

// sleepFor blocks rank r for d seconds (s4u's sleep_for, at least
// surf/precision), holding its CPU as SimGrid's sleep action does; the
// time counts as computation if computing, else as communication.
func (s *simulation) sleepFor(r *rank, d float64, computing bool) {
	if d > 0 {
		d = math.Max(d, s.cfg.SurfPrecision)
	}
	a := s.newAction(actSleep)
	a.rank = r
	a.remains = 1
	a.latency = d
	a.shareMark = s.now
	if s.cfg.CPUFull {
		a.left = d
		s.cpuStarted = append(s.cpuStarted, a)
	} else {
		s.sleeps = append(s.sleeps, a)
	}
	r.execBusy = true
	s.block(r, computing)
	s.hold(r, false)
	r.sleepAct = a
}

// scheduleSleeps puts the sleeps started since the last event in the
// heap. SimGrid pushes each sleep at the front of the CPU model's modified
// actions, which it schedules before the actions its solve changed: the
// last sleep started is scheduled first (and of equal dates, pops first).
func (s *simulation) scheduleSleeps() {
	for i := len(s.sleeps) - 1; i >= 0; i-- {
		a := s.sleeps[i]
		s.heapSet(a, a.lastUpdate+a.latency, hMaxDuration)
	}
	s.sleeps = s.sleeps[:0]
}

// actID registers a in the id table the max-min variables refer to.
func (s *simulation) actID(a *action) int32 {
	if n := len(s.freeIDs); n > 0 {
		id := s.freeIDs[n-1]
		s.freeIDs = s.freeIDs[:n-1]
		s.acts[id] = a
		return id
	}
	s.acts = append(s.acts, a)
	return int32(len(s.acts) - 1)
}

// route is a cached route between two hosts.
type route struct {
	// The fields every transfer reads come first, in the route's first
	// cache line: at 4,096 ranks the routes are rarely in cache.
	latency float64
	minBw   float64 // -1 if no link
	// penalty is a transfer's sharing penalty: the latency, then
	// weight-S/bw of each link added in route order, as SimGrid's CM02
	// folds them (weight-S x the sum of 1/bw rounds otherwise, and so
	// may A->B's and B->A's penalties differ in their last bit there).
	penalty float64
	links   []*maxmin.Constraint
	back    []*maxmin.Constraint
	idx     []int32 // the indexes of links, then of back
	// lat is the latency's addends in SimGrid's order, kept only under
	// link profiles, which sum them again (see currentRoute).
	lat []LatencyTerm
}

func (s *simulation) route(src, dst int) *route {
	from := &s.routes[src]
	if rt := from.Get(int32(dst)); rt != nil {
		return rt
	}
	fwd, lat := s.routeLinks(src, dst)
	var bk []int
	if s.cfg.CrossTraffic {
		bk, _, _ = s.m.Route(dst, src)
	}
	// One array holds the links and the reverse route's: a route is
	// built once a pair of hosts, thousands of times at start-up at
	// thousands of ranks.
	cs := make([]*maxmin.Constraint, len(fwd)+len(bk))
	rt := &route{latency: lat, minBw: s.minBandwidth(fwd), links: cs[:0:len(fwd)], back: cs[len(fwd):len(fwd)], idx: make([]int32, 0, len(fwd)+len(bk))}
	for _, l := range fwd {
		rt.links = append(rt.links, s.links[l])
		rt.idx = append(rt.idx, int32(l))
	}
	rt.penalty = lat
	if s.weightS > 0 {
		for _, l := range fwd {
			rt.penalty += s.weightS / s.m.Links[l].Bandwidth
		}
	}
	if s.linkBw != nil {
		rt.lat = s.latencyTerms(src, dst, fwd)
	}
	for _, l := range bk {
		rt.back = append(rt.back, s.links[l])
		rt.idx = append(rt.idx, int32(l))
	}
	from.Put(int32(dst), rt)
	return rt
}

// routeLinks returns the links of the route from host src to host dst
// and its latency, failing the replay where there is none.
func (s *simulation) routeLinks(src, dst int) ([]int, float64) {
	fwd, lat, err := s.m.Route(src, dst)
	s.routeErr(src, dst, fwd, lat, err)
	return fwd, lat
}

// routeErr fails the replay where the route from host src to host dst,
// links and lat, is none (err) or takes no time: both engines' routes
// (routeLinks, dpath) go through it.
func (s *simulation) routeErr(src, dst int, links []int, lat float64, err error) {
	if err == nil && len(links) == 0 && lat == 0 {
		// SimGrid's network model aborts on a route that takes no time.
		err = errors.New("the route has no link and no latency (an undeclared route of a Full zone, or hosts of a Cluster zone without host_link)")
	}
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("sim: no connecting path from %s to %s: %w", s.m.Hosts[src].Name, s.m.Hosts[dst].Name, err)
	}
}

// minBandwidth returns the bandwidth of the slowest of links, -1 if
// there is none.
func (s *simulation) minBandwidth(links []int) float64 {
	minBw := -1.0
	for _, l := range links {
		if bw := s.m.Links[l].Bandwidth; minBw < 0 || bw < minBw {
			minBw = bw
		}
	}
	return minBw
}

// startComm starts the network transfer of c (both sides are posted).
func (s *simulation) startComm(c *comm) {
	src, dst := s.ranks[c.src].host, s.ranks[c.dst].host
	rt := s.route(src, dst)
	size := float64(c.bytes + s.cfg.Envelope)
	a := s.newAction(actComm)
	a.comm = c
	c.act = a
	a.remains = size
	latF, bwF := s.netFactors(size)
	a.factor = bwF
	lat, minBw, penalty := rt.latency, rt.minBw, rt.penalty
	if s.linkBw != nil {
		lat, minBw, penalty = s.currentRoute(rt)
		s.commSeq++
		a.latCurrent, a.netBound, a.seq = lat, minBw, s.commSeq
	}
	a.penalty = penalty
	a.latency = lat * latF
	bound := s.rateBound(lat, minBw)
	if s.cfg.Analytic {
		a.fixedRate = bound * bwF
		s.heapSet(a, s.now+fixedDuration(a.latency, size, a.fixedRate), hNormal)
		return
	}
	pen := 1.0
	switch {
	case a.latency > 0 && s.cfg.NetworkFull:
		pen = 0 // updateFull counts the latency down
	case a.latency > 0:
		pen = 0
		t := hLatency
		if len(rt.links) == 0 {
			t = hNormal
		}
		s.heapSet(a, s.now+a.latency, t)
	}
	if s.cfg.NetworkFull {
		s.netStarted = append(s.netStarted, a)
	}
	v := s.netVar(a, pen, bound, len(rt.links)+len(rt.back))
	a.inSystem = true
	for _, l := range rt.links {
		s.netSys.Expand(l, v, 1)
	}
	for _, l := range rt.back {
		s.netSys.Expand(l, v, 0.05)
	}
	if s.ib != nil {
		s.ibStart(a, src, dst)
	}
	if s.linkEnergy != nil {
		s.flowLinksUpdate(rt)
	}
}

// netFactors returns the latency and bandwidth factors of a transfer of
// size bytes (the envelope included).
func (s *simulation) netFactors(size float64) (latF, bwF float64) {
	if s.cfg.Model == ModelSMPI || s.cfg.Model == ModelIB {
		return s.cfg.LatFactors.At(size), s.cfg.BwFactors.At(size)
	}
	return s.latF, s.bwF
}

// rateBound is a flow's rate bound on a route of latency lat whose
// slowest link has bandwidth minBw (-1 for none): that bandwidth, or
// TCP's window over the round trip if lower (network/TCP-gamma).
func (s *simulation) rateBound(lat, minBw float64) float64 {
	bound := minBw
	if lat > 0 {
		g := s.cfg.TCPGamma / (2 * lat)
		if bound < 0 || g < bound {
			bound = g
		}
	}
	return bound
}

// fixedDuration is the analytic mode's time of a transfer of size bytes:
// its latency, then its size at rate (none if rate is 0).
func fixedDuration(latency, size, rate float64) float64 {
	d := latency
	if rate > 0 {
		d += size / rate
	}
	return d
}

func (s *simulation) netVar(a *action, pen, bound float64, n int) *maxmin.Variable {
	id := s.actID(a)
	if a.v != nil {
		a.v.Reset(id, pen, bound)
	} else {
		a.v = s.netSys.NewVariable(id, pen, bound, n)
	}
	return a.v
}

// finishAction ends a: its variable leaves the system and what waits on
// it completes.
func (s *simulation) finishAction(a *action) {
	a.running = false
	if a.kind == actStart {
		s.requeue(a.rank)
		s.freeAction(a)
		return
	}
	if a.inSystem {
		if a.kind == actComm {
			// The ranks' hosts are read only for the models that need
			// them: at thousands of ranks the sender's state is seldom
			// in cache.
			if s.ib != nil {
				s.ibEnd(a, s.ranks[a.comm.src].host)
			}
			if s.linkEnergy != nil {
				s.flowLinksUpdate(s.route(s.ranks[a.comm.src].host, s.ranks[a.comm.dst].host))
			}
			s.netSys.Remove(a.v)
		} else {
			if h := &s.hosts[a.rank.host]; h.track && a.kind == actExec {
				s.execEnded(h, a)
			}
			s.cpuSys.Remove(a.v)
		}
		id := a.v.ID
		s.acts[id] = nil
		s.freeIDs = append(s.freeIDs, id)
	}
	if a.probe {
		s.probeExecs--
		a.rank.probeEnds++
	}
	if a.kind == actComm {
		c := a.comm
		c.act = nil
		s.commDone(c)
	} else {
		if h := &s.hosts[a.rank.host]; h.energy != nil && a.kind == actSleep && a.latency > 0 {
			s.energyStateChange(h, s.now) // the sleep's CPU action ends
		}
		s.execDone(a.rank)
	}
	s.freeAction(a)
}

// updateRemains is SimGrid's lazy update of an action's remaining work.
func (s *simulation) updateRemains(a *action) {
	if !a.running {
		return
	}
	delta := s.now - a.lastUpdate
	if a.remains > 0 {
		doubleUpdate(&a.remains, a.lastValue*delta, s.cfg.MaxminPrecision*s.cfg.SurfPrecision)
	}
	a.lastUpdate = s.now
	a.lastValue = a.rate()
}

// pollingForever reports whether nothing is pending but the computations
// of MPI_Iprobe calls polling for messages that can never come.
func (s *simulation) pollingForever() bool {
	pending := s.heap.n + len(s.cpuStarted) // computations are in one or the other
	if pending > s.probeExecs {
		return false
	}
	if s.cfg.ConcurrencyLimit < 0 {
		return pending == s.probeExecs && !s.probeCanSucceed(nil) && !s.stalledFlowCanResume()
	}
	// Under a concurrency limit, actions may be staged, out of the heap
	// (probes too: those in the heap are counted). A probe that ends
	// frees its CPU's slot for what was staged there first, but nothing
	// frees a link's, nor a CPU's without a probe, while only probes run:
	// a rank whose probe is staged there never looks again.
	n := 0
	probing := make([]bool, len(s.hosts))
	for _, a := range s.acts {
		if a != nil && a.running && a.probe && s.heap.contains(a) {
			n++
			probing[a.rank.host] = true
		}
	}
	if n != s.heap.n {
		return false
	}
	frozen := make([]bool, len(s.ranks))
	for _, a := range s.acts {
		if a == nil || !a.running || a.kind != actExec || !a.v.Staged() {
			continue
		}
		switch {
		case probing[a.rank.host] && !a.probe:
			return false // a computation will start
		case !probing[a.rank.host] && a.probe:
			frozen[a.rank.id] = true
		}
	}
	if s.probeCanSucceed(frozen) || s.stalledFlowCanResume() {
		return false
	}
	return s.pollCycled()
}

// pollCycle is what pollCycled remembers of the states met while only
// probes were pending: from the advance after, and per state, the probes
// each rank had ended.
type pollCycle struct {
	next uint64
	seen map[string][]uint32
}

// pollCycled reports, under a concurrency limit, whether ranks polling
// with nothing else pending will poll forever, and records the state for
// the next call. Until then the probes run: one that ends frees its
// CPU's slot for what was staged there first, which may be a rank's
// endless wait (the sleep SimGrid gives each wait), and the rank that
// probed is then staged for good. So the polling is endless only once
// the state of every CPU (what holds its slots, what is staged there, in
// order, and the ranks' steps) has come back, with every probe running
// in it ended in between: the CPUs are independent while nothing but
// probes run, and a probe ends after every probe started before it on
// its CPU (the iprobe back-off only grows), so the same state leads to
// the same states again.
func (s *simulation) pollCycled() bool {
	if s.polls.seen == nil || s.polls.next != s.advances {
		s.polls.seen = map[string][]uint32{}
	}
	s.polls.next = s.advances + 1
	key := s.pollKey()
	ends, ok := s.polls.seen[string(key)]
	if !ok {
		ends = make([]uint32, len(s.ranks))
		for i, r := range s.ranks {
			ends[i] = r.probeEnds
		}
		s.polls.seen[string(key)] = ends
		return false
	}
	for _, a := range s.acts {
		if a != nil && a.running && a.probe && s.heap.contains(a) && a.rank.probeEnds == ends[a.rank.id] {
			return false
		}
	}
	return true
}

// pollKey encodes the state pollCycled compares: each CPU's variables
// holding slots, probes in the order they end, and those disabled there,
// in order; then each rank's step in its probe.
func (s *simulation) pollKey() []byte {
	var key []byte
	var vars []*maxmin.Variable
	for i := range s.hosts {
		c := s.hosts[i].cpu
		vars = c.Enabled(vars[:0])
		slices.SortStableFunc(vars, func(v, w *maxmin.Variable) int {
			return cmp.Compare(s.pollEnd(v), s.pollEnd(w))
		})
		for _, v := range vars {
			key = s.appendPollVar(key, v)
		}
		key = append(key, '|')
		for _, v := range c.Disabled(vars[:0]) {
			key = s.appendPollVar(key, v)
		}
		key = append(key, '/')
	}
	for _, r := range s.ranks {
		key = append(key, byte(r.probeStep))
	}
	return key
}

// pollEnd is when the action of v ends, if it is in the heap (a running
// probe), and +Inf otherwise (a wait's sleep holds its slot for good).
func (s *simulation) pollEnd(v *maxmin.Variable) float64 {
	if v.ID >= 0 {
		if a := s.acts[v.ID]; a != nil && s.heap.contains(a) {
			return s.heap.dateOf(a)
		}
	}
	return math.Inf(1)
}

// appendPollVar appends v to a pollKey: its rank, what it is (a probe, a
// sleep or another action) and whether it is staged.
func (s *simulation) appendPollVar(key []byte, v *maxmin.Variable) []byte {
	kind, rank := byte('s'), -2-v.ID
	if v.ID >= 0 {
		kind, rank = 'a', s.acts[v.ID].rank.id
		if s.acts[v.ID].probe {
			kind = 'p'
		}
	}
	if v.Staged() {
		kind -= 'a' - 'A'
	}
	return binary.AppendUvarint(append(key, kind), uint64(rank))
}

// solve re-solves sys, counting the work (Result.Work), and returns the
// variables whose share changed.
func (s *simulation) solve(sys *maxmin.System) []*maxmin.Variable {
	mod := sys.Solve()
	s.work.Solves++
	s.work.Reported += int64(len(mod))
	return mod
}

// reschedule solves the max-min systems and moves the actions whose share
// changed in the heap (SimGrid's next_occurring_event_lazy).
func (s *simulation) reschedule(sys *maxmin.System) {
	for _, v := range s.solve(sys) {
		if v.ID < 0 {
			s.sleepShared(v)
			continue
		}
		a := s.acts[v.ID]
		if a == nil || !a.running || v.Penalty() <= 0 || a.htype == hLatency {
			continue
		}
		s.updateRemains(a)
		share := a.rate()
		if share > 0 {
			t := 0.0
			if a.remains > 0 {
				t = a.remains / share
			}
			if d := s.now + t; !sys.Stamps || a.htype != hNormal || !s.heap.contains(a) || s.heap.dateOf(a) != d {
				s.heapSet(a, d, hNormal)
			}
			// Otherwise SimGrid re-inserts it at the date it had: its
			// stamp keeps its order among those due then (order.go).
		} else {
			s.heapRemove(a)
		}
	}
}

// recycleFreed makes the actions freed since the last solve reusable. Most
// advances free none: then it copies nothing (an empty append of
// pointers still calls the runtime's copy).
func (s *simulation) recycleFreed() {
	if len(s.freed) > 0 {
		s.freeActs = append(s.freeActs, s.freed...)
		s.freed = s.freed[:0]
	}
}

// advance moves the clock to the next event and processes every event
// within surf/precision of it. It returns false when nothing is pending.
func (s *simulation) advance() bool {
	s.advances++
	s.scheduleSleeps()
	switch {
	case s.cfg.CPUFull:
		s.solve(s.cpuSys)
	case s.cpuSys.Modified():
		s.reschedule(s.cpuSys)
	}
	if s.cfg.NetworkFull {
		return s.advanceFull()
	}
	if s.netSys.Modified() {
		s.reschedule(s.netSys)
		if s.quirkStruck() {
			return false
		}
	}
	s.recycleFreed()
	if s.cyc != nil && s.quiescent() {
		s.cyc.atQuiescent(s)
	}
	cpu := s.nextCPUEvent()
	if s.heap.empty() && cpu < 0 || s.pollingForever() {
		// Nothing pending, or only the polling of receives whose
		// messages can never come.
		return false
	}
	delta := cpu
	if !s.heap.empty() {
		if d := s.heap.minDate() - s.now; delta < 0 || d < delta {
			delta = d
		}
	}
	if len(s.profiled) > 0 || len(s.linkProfs) > 0 {
		delta = s.profileEvents(delta)
	}
	if s.timeOverflows(delta) {
		return false
	}
	s.now += delta
	// As SimGrid: every model pops its events due now (latencies paid
	// enable their flows at once), then the ended actions are handled,
	// CPU model first, then the network.
	s.endedCPU, s.endedNet = s.endedCPU[:0], s.endedNet[:0]
	s.popDue()
	s.updateCPUFull(delta)
	s.finishEnded()
	return true
}

// timeOverflows reports, and makes the run's error, a step of delta that
// would take the simulated time to infinity: an action too long to date
// (1e8 flops at 1e-300 flop/s twice), whose end nothing could follow.
func (s *simulation) timeOverflows(delta float64) bool {
	if t := s.now + delta; !math.IsInf(t, 0) && !math.IsNaN(t) {
		return false
	}
	s.err = fmt.Errorf("at %g s of simulated time, the next action would end at %g s: a host, link or disk too slow for the amounts it serves (SimGrid's clock would be lost there too)", s.now, s.now+delta)
	return true
}

// quirkStruck reports whether the automatic solver's run stops (errQuirk)
// after a re-solve: SimGrid's selective-update quirk struck, or its
// outcome depends on the order of simultaneous changes.
func (s *simulation) quirkStruck() bool {
	if s.cfg.Compat && s.cfg.Solver == SolverAuto && s.netSys.SimGridSelective && s.netSys.OrderDependent() {
		s.err = errQuirk
		return true
	}
	return false
}

// popDue takes the actions due now out of the heap: a latency paid
// enables its transfer, an ended action is listed in endedCPU or endedNet.
// It first marks what of the date's order may not be SimGrid's (see
// order.go).
func (s *simulation) popDue() {
	due := s.due[:0]
	for !s.heap.empty() && math.Abs(s.heap.minDate()-s.now) < s.cfg.SurfPrecision {
		date := s.heap.minDate()
		s.nearWindow(date - s.now)
		a := s.heap.top()
		t := a.htype
		s.heapRemove(a)
		due = append(due, dueAction{a: a, date: date, t: t})
	}
	if !s.heap.empty() {
		s.nearWindow(s.heap.minDate() - s.now)
	}
	s.due = due
	if s.markUnsure(due) {
		s.netSys.Certify()
	}
	s.markBlocks(due)
	for i := range due {
		a, t := due[i].a, due[i].t
		if t == hLatency {
			s.netSys.Simultaneous = due[i].unsure
			s.netSys.SetPenalty(a.v, a.penalty)
			s.netSys.Simultaneous = false
			a.lastUpdate = s.now
			continue
		}
		a.running = false
		if a.kind == actComm {
			if s.ib != nil && a.inSystem {
				// SimGrid's IB callback runs as the action finishes,
				// among the round's latency ends; its variable is
				// freed later, with the other ended actions'.
				s.ibEnd(a, s.ranks[a.comm.src].host)
			}
			s.endedNet = append(s.endedNet, a)
		} else {
			s.endedCPU = append(s.endedCPU, a)
		}
	}
}

// finishEnded handles the actions that ended now, as SimGrid: the CPU
// model's first, then the network's.
func (s *simulation) finishEnded() {
	for _, a := range s.endedCPU {
		s.inBlock(a)
		s.finishAction(a)
	}
	for _, a := range s.endedNet {
		s.inBlock(a)
		s.finishAction(a)
	}
	s.grp, s.starter = 0, -1
}

// advanceFull is advance with network/optim:Full. The CPU model keeps its
// own update (its actions in the heap, or in cpuStarted with
// cpu/optim:Full); the network's transfers are not in the heap: SimGrid's
// full update re-solves every change (or what selective update marks),
// takes the next step to the nearest end of a transfer's bytes at its rate
// or of its latency (NetworkModel::next_occurring_event_full), and counts
// every transfer's bytes and latency down by the step
// (update_actions_state_full).
func (s *simulation) advanceFull() bool {
	if s.netSys.Modified() {
		s.solve(s.netSys)
		if s.quirkStruck() {
			return false
		}
	}
	s.recycleFreed()
	delta := s.nextCPUEvent()
	if !s.heap.empty() {
		if d := s.heap.minDate() - s.now; delta < 0 || d < delta {
			delta = d
		}
	}
	net := s.nextNetEvent()
	if net >= 0 && (delta < 0 || net < delta) {
		delta = net
	}
	if delta < 0 || net < 0 && s.pollingForever() {
		return false
	}
	if len(s.profiled) > 0 || len(s.linkProfs) > 0 {
		delta = s.profileEvents(delta)
	}
	if s.timeOverflows(delta) {
		return false
	}
	s.now += delta
	s.endedCPU, s.endedNet = s.endedCPU[:0], s.endedNet[:0]
	s.popDue()
	s.updateCPUFull(delta)
	s.updateFull(delta)
	s.finishEnded()
	return true
}

// nextCPUEvent returns, with cpu/optim:Full, the time to the nearest end
// of a computation's flops at its rate or of a sleep's duration; -1 if
// none is to come or the CPUs are lazily updated
// (Model::next_occurring_event_full).
func (s *simulation) nextCPUEvent() float64 {
	next := -1.0
	for _, a := range s.cpuStarted {
		if a.kind != actSleep {
			next = sooner(next, a.remains, a.rate())
			continue
		}
		next = sooner(next, a.remains, s.sleepRate(a))
		if next < 0 || a.left < next {
			next = a.left
		}
	}
	return next
}

// sleepRate is the share of a timed sleep's one flop (see sleepShared):
// under a concurrency limit, a sleep staged at its CPU's limit computes
// once it takes a slot; otherwise none.
func (s *simulation) sleepRate(a *action) float64 {
	if r := a.rank; r.sleepAct == a && r.sleepVar != nil && !r.holdWait && r.sleepVar.Penalty() > 0 {
		return r.sleepVar.Value()
	}
	return 0
}

// sooner returns the sooner of next (-1 for none) and the time to the end
// of remains of work at rate r, if positive.
func sooner(next, remains, r float64) float64 {
	if r <= 0 {
		return next
	}
	d := 0.0
	if remains > 0 {
		d = remains / r
	}
	if next < 0 || d < next {
		return d
	}
	return next
}

// updateCPUFull counts, with cpu/optim:Full, every computation's flops
// and every sleep's duration down by delta, in the order they started: a
// computation without flops left, or a sleep without time left, ends
// (CpuModel::update_actions_state_full).
func (s *simulation) updateCPUFull(delta float64) {
	if len(s.cpuStarted) == 0 {
		return
	}
	kept := s.cpuStarted[:0]
	prec := s.cfg.MaxminPrecision * s.cfg.SurfPrecision
	for _, a := range s.cpuStarted {
		a.lastUpdate = s.now
		var ended bool
		if a.kind == actSleep {
			rate := s.sleepRate(a)
			doubleUpdate(&a.remains, rate*delta, prec)
			doubleUpdate(&a.left, delta, s.cfg.SurfPrecision)
			ended = a.remains <= 0 && rate > 0 || a.left <= 0
		} else {
			doubleUpdate(&a.remains, a.rate()*delta, prec)
			ended = a.remains <= 0 && a.inSystem && a.v.Penalty() > 0
		}
		if !ended {
			kept = append(kept, a)
			continue
		}
		a.running = false
		s.endedCPU = append(s.endedCPU, a)
	}
	clear(s.cpuStarted[len(kept):])
	s.cpuStarted = kept
}

// nextNetEvent returns the time to the nearest end of a transfer's bytes
// or latency, -1 if none is to come.
func (s *simulation) nextNetEvent() float64 {
	next := -1.0
	for _, a := range s.netStarted {
		next = sooner(next, a.remains, a.rate())
	}
	for _, a := range s.netStarted {
		if a.latency > 0 && (next < 0 || a.latency < next) {
			next = a.latency
		}
	}
	return next
}

// updateFull counts every transfer's latency and bytes down by delta, in
// the order they started: a latency paid enables the transfer, a transfer
// of no bytes left (and enabled) ends.
func (s *simulation) updateFull(delta float64) {
	kept := s.netStarted[:0]
	for _, a := range s.netStarted {
		if a.latency > 0 {
			if a.latency > delta {
				doubleUpdate(&a.latency, delta, s.cfg.SurfPrecision)
			} else {
				a.latency = 0
			}
			if a.latency <= 0 {
				s.netSys.SetPenalty(a.v, a.penalty)
			}
		}
		if a.v.NumConstraints() == 0 {
			a.remains = 0 // no link: an infinite bandwidth
		}
		doubleUpdate(&a.remains, a.rate()*delta, s.cfg.MaxminPrecision*s.cfg.SurfPrecision)
		if a.remains > 0 || a.v.Penalty() <= 0 {
			kept = append(kept, a)
			continue
		}
		a.running = false
		if s.ib != nil {
			s.ibEnd(a, s.ranks[a.comm.src].host)
		}
		s.endedNet = append(s.endedNet, a)
	}
	clear(s.netStarted[len(kept):])
	s.netStarted = kept
}

// inBlock sets what the actions started while a ends carry: its block, if
// any (see order.go), and a starter of its own.
func (s *simulation) inBlock(a *action) {
	s.grp, s.starter = a.blk, -2-a.slot
}
