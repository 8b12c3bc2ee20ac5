package workload

import (
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"kairos/trace"
)

// A stepper appends the next group of a rank's events (typically one
// iteration) to the emitter and reports whether it appended a group; false
// means the rank has nothing more before its Finalize. A group may be
// empty. Steppers let a rank's events be produced lazily with memory
// bounded by one group.
type stepper func(e *emitter) bool

// program is a built generator: the number of ranks and, for each rank, a
// fresh stepper that produces its events between Init and Finalize.
type program struct {
	ranks int
	open  func(rank int) stepper
}

// steps returns a stepper that calls fn(e, i) for i = 0..n-1.
func steps(n int, fn func(e *emitter, i int)) stepper {
	i := 0
	return func(e *emitter) bool {
		if i >= n {
			return false
		}
		fn(e, i)
		i++
		return true
	}
}

// seq returns a stepper that runs ss one after the other.
func seq(ss ...stepper) stepper {
	return func(e *emitter) bool {
		for len(ss) > 0 {
			if ss[0](e) {
				return true
			}
			ss = ss[1:]
		}
		return false
	}
}

// loops2 returns a stepper that calls fn(e, i, j) for i = 0..n-1 and, for
// each, j = 0..m-1: an iteration loop whose body is cut into m steps, so
// that long bodies need not be held whole.
func loops2(n, m int, fn func(e *emitter, i, j int)) stepper {
	return steps(n*m, func(e *emitter, k int) { fn(e, k/m, k%m) })
}

// source is a generated trace. It implements trace.Source: every rank is
// computed independently from the parameters, the seed and the rank.
type source struct {
	meta   trace.Meta
	params Params
	prog   program
	init   site
	final  site
}

func (s *source) Meta() *trace.Meta { return &s.meta }
func (s *source) NumRanks() int     { return s.prog.ranks }

// OpenRank returns a reader that generates rank r's events.
func (s *source) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= s.prog.ranks {
		return nil, fmt.Errorf("rank %d out of range [0,%d)", r, s.prog.ranks)
	}
	rd := &reader{src: s, step: s.prog.open(r), pos: -1}
	rd.e.reset(&s.params, r)
	return rd, nil
}

// reader streams one generated rank: Init, the stepper's groups, Finalize.
type reader struct {
	src   *source
	e     emitter
	step  stepper
	pos   int
	phase int // 0 before Init, 1 in the body, 2 after Finalize
}

func (r *reader) Next() bool {
	r.pos++
	for r.pos >= len(r.e.buf) {
		if r.phase == 2 {
			r.pos = len(r.e.buf)
			return false
		}
		r.e.buf = r.e.buf[:0]
		r.pos = 0
		switch {
		case r.phase == 0:
			r.e.event(trace.Init, r.src.init)
			r.phase = 1
		case !r.step(&r.e):
			r.e.event(trace.Finalize, r.src.final)
			r.phase = 2
		}
	}
	return true
}

func (r *reader) Event() *trace.Event { return &r.e.buf[r.pos] }
func (r *reader) Err() error          { return nil }
func (r *reader) Close() error        { r.e.buf = nil; return nil }

// site is a call site: the region (user function) an MPI call or
// computation is made from and the signature of its synthetic call stack.
type site struct {
	region   uint32
	callSite uint64
}

// sites builds the call-path tree of a generator in its trace's Meta.
type sites struct {
	meta *trace.Meta
	file string
}

// at returns the site of call (an MPI function name or "compute") made at
// line of the sites' source file from the function path, a call path such
// as "main>timestep>exchange_halo". The call-site signature is the FNV-1a
// hash of the path, the call and its file:line, so that it is distinct for
// every call site and equal across ranks.
func (s sites) at(path, call string, line int) site {
	var region uint32
	for _, fn := range strings.Split(path, ">") {
		region = s.meta.AddRegion(fn, region)
	}
	h := fnv.New64a()
	h.Write([]byte(path + ">" + call + "@" + s.file + ":" + strconv.Itoa(line)))
	return site{region: region, callSite: h.Sum64()}
}

// emitter accumulates one group of a rank's events and holds the rank's
// generation state: its request counter and its random streams.
type emitter struct {
	buf    []trace.Event
	rank   int
	nextRq uint64
	scale  float64 // per-rank imbalance factor in [1, 1+imbalance]
	noise  float64
	rng    rng
	// delayed are the sorted iterations in which the rank computes factor
	// times longer (Params.Delay), slow the factor of the current
	// iteration.
	delayed []int
	factor  float64
	slow    float64
}

func (e *emitter) reset(p *Params, rank int) {
	e.rank = rank
	e.nextRq = 1
	e.scale = rankScale(p, rank)
	e.noise = p.Noise
	e.rng = rng(hash3(p.Seed, uint64(rank), saltNoise))
	e.delayed, e.factor, e.slow = nil, 1, 1
	if rank == p.Delay.Rank {
		e.delayed, e.factor = p.Delay.Iterations, p.Delay.Factor
	}
}

// iteration tells the emitter that the computations that follow belong to
// iteration it (0-based), so that a Delay of the rank slows them down.
// Generators call it at the start of each step of an iteration; before the
// first call, computations are not delayed.
func (e *emitter) iteration(it int) {
	if e.delayed != nil {
		e.slow = slowdown(e.delayed, e.factor, it)
	}
}

// event appends an event of kind k made at s and returns it for the caller
// to complete. The pointer is valid until the next append.
func (e *emitter) event(k trace.Kind, s site) *trace.Event {
	e.buf = append(e.buf, trace.NewEvent(k))
	ev := &e.buf[len(e.buf)-1]
	ev.CallSite = s.callSite
	ev.Region = s.region
	return ev
}

// rankScale returns the imbalance factor of rank, in [1, 1+Imbalance].
func rankScale(p *Params, rank int) float64 {
	return 1 + p.Imbalance*unit(hash3(p.Seed, uint64(rank), saltImbalance))
}

// jitter returns flops scaled by the rank's imbalance factor and one draw
// of relative noise, rounded to whole flops.
func (e *emitter) jitter(flops float64) float64 {
	f := flops * e.scale
	if e.noise > 0 {
		f *= 1 + e.noise*(2*e.rng.float()-1)
	}
	return math.Round(f)
}

// compute appends a computation of flops (before imbalance, noise and
// delay). A delayed computation is the undelayed one times the factor,
// rounded, and draws the same noise, so that a delay changes nothing else.
func (e *emitter) compute(s site, flops float64) {
	f := e.jitter(flops)
	if e.slow != 1 {
		f = math.Round(f * e.slow)
	}
	e.event(trace.Compute, s).Compute = f
}

// computeExact appends a computation of exactly flops, for costs that are
// already drawn (master-worker tasks).
func (e *emitter) computeExact(s site, flops float64) {
	e.event(trace.Compute, s).Compute = math.Round(flops)
}

func (e *emitter) p2p(k trace.Kind, s site, peer, tag int, bytes int64) *trace.Event {
	ev := e.event(k, s)
	ev.Partner = int32(peer)
	ev.Tag = int32(tag)
	if k.IsSend() {
		ev.SendBytes = bytes
	} else {
		ev.RecvBytes = bytes
	}
	return ev
}

func (e *emitter) send(s site, to, tag int, bytes int64)   { e.p2p(trace.Send, s, to, tag, bytes) }
func (e *emitter) recv(s site, from, tag int, bytes int64) { e.p2p(trace.Recv, s, from, tag, bytes) }

// request is a started non-blocking operation: its id and its key.
type request struct {
	id        uint64
	peer, tag int32
}

// isend and irecv start a request and return it.
func (e *emitter) isend(s site, to, tag int, bytes int64) request {
	return e.start(e.p2p(trace.Isend, s, to, tag, bytes))
}

func (e *emitter) irecv(s site, from, tag int, bytes int64) request {
	return e.start(e.p2p(trace.Irecv, s, from, tag, bytes))
}

func (e *emitter) start(ev *trace.Event) request {
	ev.Request = e.nextRq
	e.nextRq++
	return request{ev.Request, ev.Partner, ev.Tag}
}

// wait completes rq. The Wait names its request's peer and tag too, as a
// TI trace's wait does.
func (e *emitter) wait(s site, rq request) {
	ev := e.event(trace.Wait, s)
	ev.Request, ev.Partner, ev.Tag = rq.id, rq.peer, rq.tag
}

// waitall completes every outstanding request of the rank.
func (e *emitter) waitall(s site) { e.event(trace.Waitall, s) }

// collective appends a collective on MPI_COMM_WORLD moving bytes, with
// root for rooted ones. As in SimGrid's actions, a collective with one
// count (bcast, reduce, allreduce) has it in SendBytes; alltoall has bytes
// per peer both ways. Reductions sum.
func (e *emitter) collective(k trace.Kind, s site, bytes int64, root int) {
	ev := e.event(k, s)
	if k.HasReduction() {
		ev.Op = trace.OpSum
	}
	switch k {
	case trace.Barrier:
	case trace.Alltoall:
		ev.SendBytes, ev.RecvBytes = bytes, bytes
	default:
		ev.SendBytes = bytes
	}
	if k.IsRooted() {
		ev.Partner = int32(root)
	}
}

func (e *emitter) allreduce(s site, bytes int64) { e.collective(trace.Allreduce, s, bytes, 0) }

// allreduceMax appends an allreduce that takes the maximum.
func (e *emitter) allreduceMax(s site, bytes int64) {
	e.allreduce(s, bytes)
	e.buf[len(e.buf)-1].Op = trace.OpMax
}

// rng is a splitmix64 stream.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	return mix(uint64(*r))
}

// float returns a uniform number in [0, 1).
func (r *rng) float() float64 { return unit(r.next()) }

func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Salts separate the random streams drawn from one seed.
const (
	saltImbalance = 1 + iota
	saltNoise
	saltTask
)

// hash3 derives an independent 64-bit value from three keys.
func hash3(a, b, c uint64) uint64 { return mix(mix(mix(a)^b) ^ c) }

// unit maps a 64-bit value to [0, 1).
func unit(x uint64) float64 { return float64(x>>11) / (1 << 53) }
