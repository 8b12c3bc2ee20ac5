// Package workload generates realistic synthetic MPI traces: the
// communication skeletons of well-known codes (halo-exchange stencils,
// Sweep3D's wavefronts, the NAS Parallel Benchmarks LU, CG, FT, MG and BT,
// master-worker task farms, ping-pong) with seeded load imbalance and noise,
// and optionally a Delay: one rank slowed down in chosen iterations, the
// known slow iterations that slow-instance detection is checked against.
// They are the test inputs of every other Kairos package and the demo's
// default trace.
//
// A generated trace is a trace.Source that computes each rank's events on
// demand, deterministically from the parameters, the seed and the rank, so
// that a trace of any length takes no memory and ranks can be read in any
// order. Every event carries a call site (the signature of a synthetic call
// stack) and a region of a realistic call-path tree (main > timestep >
// exchange_halo ...). Every generated trace is matched (each send has its
// receive, each collective is called by every rank) and replays without
// deadlock whether sends are eager or rendezvous.
package workload

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"kairos/trace"
)

// Params are a generator's parameters. Start from Defaults(kind) and change
// what you need: each kind reads only the parameters Applies names.
type Params struct {
	// Ranks is the number of ranks. With Grid set it may be 0 (it is the
	// product of the grid's extents).
	Ranks int
	// Grid is the process grid of the kinds that use one, extents with x
	// first; rank = x + X*(y + Y*z). Nil derives a near-cubic grid from
	// Ranks, as MPI_Dims_create does.
	Grid []int
	// Iterations is the number of time steps (outer iterations).
	Iterations int
	// Bytes is the size of the main messages: a halo face, a wavefront
	// message, a task; ft's alltoall bytes per peer; pingpong's largest
	// message.
	Bytes int64
	// Flops is the computation of one rank in one iteration (for
	// masterworker: of an average task), before imbalance and noise.
	Flops float64
	// Imbalance scales each rank's computation by a seeded factor drawn in
	// [1, 1+Imbalance].
	Imbalance float64
	// Noise multiplies each computation by a seeded factor drawn in
	// [1-Noise, 1+Noise]; 0 <= Noise < 1.
	Noise float64
	// Seed selects the random draws of Imbalance, Noise and task costs.
	Seed uint64
	// Periodic makes the stencils' process grid wrap around.
	Periodic bool
	// AllreduceEvery adds an allreduce of AllreduceBytes after every
	// AllreduceEvery-th iteration (0: never).
	AllreduceEvery int
	AllreduceBytes int64
	// Tasks is masterworker's number of tasks.
	Tasks int
	// Levels is mg's number of multigrid levels.
	Levels int
	// Blocks is sweep's number of k-plane blocks per octant (the pipeline
	// depth).
	Blocks int
	// Planes is lu's number of k-planes (nz).
	Planes int
	// Inner is cg's number of CG iterations per outer iteration.
	Inner int
	// Delay slows one rank down in a few iterations (zero: no delay).
	Delay Delay
}

// Parameter names, as Applies takes them and the CLI spells its flags.
const (
	ParamRanks          = "ranks"
	ParamGrid           = "grid"
	ParamIterations     = "iterations"
	ParamBytes          = "bytes"
	ParamFlops          = "flops"
	ParamImbalance      = "imbalance"
	ParamNoise          = "noise"
	ParamSeed           = "seed"
	ParamPeriodic       = "periodic"
	ParamAllreduceEvery = "allreduce-every"
	ParamAllreduceBytes = "allreduce-bytes"
	ParamTasks          = "tasks"
	ParamLevels         = "levels"
	ParamBlocks         = "blocks"
	ParamPlanes         = "planes"
	ParamInner          = "inner"
	ParamDelay          = "delay"
)

// common are the parameters every kind reads.
var common = []string{ParamRanks, ParamIterations, ParamBytes, ParamFlops, ParamImbalance, ParamNoise, ParamSeed}

// generator is one registered kind.
type generator struct {
	name    string
	summary string
	// extra are the parameters the kind reads besides common ones; a name
	// prefixed with "-" is a common one it does not read.
	extra    []string
	defaults Params
	// dims is the dimension of the kind's process grid, 0 if it has none.
	dims  int
	build func(p *Params, s sites) (program, error)
}

var generators = map[string]*generator{}

func register(g *generator) { generators[g.name] = g }

// Kinds returns the names of the generators, sorted.
func Kinds() []string {
	names := make([]string, 0, len(generators))
	for n := range generators {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Describe returns a one-line description of kind.
func Describe(kind string) string {
	if g, ok := generators[kind]; ok {
		return g.summary
	}
	return ""
}

// Defaults returns kind's default parameters.
func Defaults(kind string) (Params, error) {
	g, err := lookup(kind)
	if err != nil {
		return Params{}, err
	}
	p := g.defaults
	p.Grid = cloneGrid(p.Grid)
	return p, nil
}

// Applies reports whether kind reads the parameter called param (one of
// the Param names).
func Applies(kind, param string) bool {
	g, ok := generators[kind]
	if !ok {
		return false
	}
	for _, x := range g.extra {
		if x == param {
			return true
		}
		if x == "-"+param {
			return false
		}
	}
	for _, x := range common {
		if x == param {
			return true
		}
	}
	return false
}

func lookup(kind string) (*generator, error) {
	g, ok := generators[kind]
	if !ok {
		return nil, fmt.Errorf("unknown workload %q (known: %s)", kind, strings.Join(Kinds(), ", "))
	}
	return g, nil
}

// New returns the trace of workload kind with parameters p.
func New(kind string, p Params) (trace.Source, error) {
	g, err := lookup(kind)
	if err != nil {
		return nil, err
	}
	p.Grid = cloneGrid(p.Grid) // the trace keeps its own
	p.Delay = p.Delay.clone()
	if err := p.check(g); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	src := &source{meta: trace.NewMeta(), params: p}
	s := sites{meta: &src.meta, file: kind + ".c"}
	src.init = s.at("main", "MPI_Init", 12)
	prog, err := g.build(&src.params, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	src.final = s.at("main", "MPI_Finalize", 990)
	src.prog = prog
	src.meta.Attrs["generator"] = "kairos gen " + kind
	src.meta.Attrs["parameters"] = src.params.describe(kind)
	return src, nil
}

// Bounds of the parameters: they keep every count and byte size of a
// generated trace far from overflow.
const (
	maxRanks = 1 << 24
	maxCount = 1 << 31 // iterations, tasks
	maxSteps = 1 << 20 // blocks, planes, inner iterations
	maxBytes = 1 << 40
)

// check validates the parameters that kind reads, and derives the grid.
func (p *Params) check(g *generator) error {
	if err := p.checkGrid(g); err != nil {
		return err
	}
	type rule struct {
		param string
		bad   bool
		msg   string
	}
	rules := []rule{
		{ParamRanks, p.Ranks < 1 || p.Ranks > maxRanks, fmt.Sprintf("ranks must be in [1, %d], not %d", maxRanks, p.Ranks)},
		{ParamIterations, p.Iterations < 1 || p.Iterations > maxCount, fmt.Sprintf("iterations must be in [1, %d], not %d", maxCount, p.Iterations)},
		{ParamBytes, p.Bytes < 1 || p.Bytes > maxBytes, fmt.Sprintf("bytes must be in [1, %d], not %d", int64(maxBytes), p.Bytes)},
		{ParamFlops, !(p.Flops >= 0) || p.Flops > 1e18, fmt.Sprintf("flops must be in [0, 1e18], not %g", p.Flops)},
		{ParamImbalance, !(p.Imbalance >= 0) || p.Imbalance > 1e6, fmt.Sprintf("imbalance must be in [0, 1e6], not %g", p.Imbalance)},
		{ParamNoise, !(p.Noise >= 0 && p.Noise < 1), fmt.Sprintf("noise must be in [0, 1), not %g", p.Noise)},
		{ParamAllreduceEvery, p.AllreduceEvery < 0, fmt.Sprintf("allreduce-every must be 0 (never) or more, not %d", p.AllreduceEvery)},
		{ParamAllreduceBytes, p.AllreduceBytes < 1 || p.AllreduceBytes > maxBytes, fmt.Sprintf("allreduce-bytes must be in [1, %d], not %d", int64(maxBytes), p.AllreduceBytes)},
		{ParamTasks, p.Tasks < 1 || p.Tasks > maxCount, fmt.Sprintf("tasks must be in [1, %d], not %d", maxCount, p.Tasks)},
		{ParamLevels, p.Levels < 1 || p.Levels > 30, fmt.Sprintf("levels must be in [1, 30], not %d", p.Levels)},
		{ParamBlocks, p.Blocks < 1 || p.Blocks > maxSteps, fmt.Sprintf("blocks must be in [1, %d], not %d", maxSteps, p.Blocks)},
		{ParamPlanes, p.Planes < 3 || p.Planes > maxSteps, fmt.Sprintf("planes must be in [3, %d], not %d", maxSteps, p.Planes)},
		{ParamInner, p.Inner < 1 || p.Inner > maxSteps, fmt.Sprintf("inner must be in [1, %d], not %d", maxSteps, p.Inner)},
	}
	if err := p.Delay.check(p.Ranks, p.Iterations); err != nil {
		rules = append(rules, rule{ParamDelay, true, err.Error()})
	}
	for _, r := range rules {
		if r.bad && Applies(g.name, r.param) {
			return fmt.Errorf("%s", r.msg)
		}
	}
	return nil
}

// checkGrid reconciles Ranks and Grid for kinds with a process grid.
func (p *Params) checkGrid(g *generator) error {
	if g.dims == 0 {
		if p.Grid != nil {
			return fmt.Errorf("takes no process grid (got %s); give the number of ranks", formatGrid(p.Grid))
		}
		return nil
	}
	if p.Grid == nil {
		if p.Ranks < 1 || p.Ranks > maxRanks {
			return fmt.Errorf("ranks must be in [1, %d], not %d", maxRanks, p.Ranks)
		}
		p.Grid = dimsCreate(p.Ranks, g.dims)
		return nil
	}
	if len(p.Grid) != g.dims {
		return fmt.Errorf("needs a %d-D process grid, got %s", g.dims, formatGrid(p.Grid))
	}
	n := 1
	for _, d := range p.Grid {
		if d < 1 || d > 1<<20 {
			return fmt.Errorf("grid %s: every extent must be in [1, 2^20]", formatGrid(p.Grid))
		}
		n *= d
	}
	if n > maxRanks {
		return fmt.Errorf("grid %s has more than %d ranks", formatGrid(p.Grid), maxRanks)
	}
	if p.Ranks != 0 && p.Ranks != n {
		return fmt.Errorf("grid %s has %d ranks, not %d", formatGrid(p.Grid), n, p.Ranks)
	}
	p.Ranks = n
	return nil
}

// describe prints the parameters kind reads, for the trace's Attrs.
func (p *Params) describe(kind string) string {
	var b strings.Builder
	add := func(name, val string) {
		if Applies(kind, name) {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(name + "=" + val)
		}
	}
	add(ParamRanks, strconv.Itoa(p.Ranks))
	if p.Grid != nil {
		add(ParamGrid, formatGrid(p.Grid))
	}
	add(ParamIterations, strconv.Itoa(p.Iterations))
	add(ParamBytes, strconv.FormatInt(p.Bytes, 10))
	add(ParamFlops, strconv.FormatFloat(p.Flops, 'g', -1, 64))
	add(ParamImbalance, strconv.FormatFloat(p.Imbalance, 'g', -1, 64))
	add(ParamNoise, strconv.FormatFloat(p.Noise, 'g', -1, 64))
	add(ParamSeed, strconv.FormatUint(p.Seed, 10))
	add(ParamPeriodic, strconv.FormatBool(p.Periodic))
	add(ParamAllreduceEvery, strconv.Itoa(p.AllreduceEvery))
	add(ParamAllreduceBytes, strconv.FormatInt(p.AllreduceBytes, 10))
	add(ParamTasks, strconv.Itoa(p.Tasks))
	add(ParamLevels, strconv.Itoa(p.Levels))
	add(ParamBlocks, strconv.Itoa(p.Blocks))
	add(ParamPlanes, strconv.Itoa(p.Planes))
	add(ParamInner, strconv.Itoa(p.Inner))
	if !p.Delay.IsZero() {
		add(ParamDelay, p.Delay.String())
	}
	return b.String()
}

// every reports whether an allreduce follows iteration it (0-based).
func (p *Params) every(it int) bool {
	return p.AllreduceEvery > 0 && (it+1)%p.AllreduceEvery == 0
}
