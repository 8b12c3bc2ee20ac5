package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kairos/format"
	"kairos/internal/fileio"
	"kairos/trace"
	"kairos/workload"
)

func init() { addVerb("gen", newGenCmd) }

// genFlags are the flags of "kairos gen" that set workload parameters, in
// the order help lists them, each with the Params field it sets.
type genFlags struct {
	list     bool
	out, to  string
	ranks    int
	grid     string
	iters    int
	bytes    sizeFlag
	flops    float64
	imb      float64
	noise    float64
	seed     uint64
	periodic bool
	arEvery  int
	arBytes  sizeFlag
	tasks    int
	levels   int
	blocks   int
	planes   int
	inner    int
	delay    string
}

func newGenCmd() *cobra.Command { return genCommand(new(genFlags)) }

// genCommand returns the gen command with its flags bound to f.
func genCommand(f *genFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen KIND [flags]",
		Short: "Generate a realistic synthetic MPI trace (stencils, wavefronts, NPB skeletons...)",
		Long: `Generate the trace of a synthetic MPI workload: the communication skeleton of
a well-known code, with realistic call sites and regions, seeded load
imbalance and noise. Every generated trace passes "kairos check" and replays
without deadlock under eager and rendezvous send semantics.

Flags not given take the kind's defaults (shown by --list). A flag that the
kind does not read is an error. Sizes take K, M, G suffixes (powers of 1024).
The output format follows -o's extension (.ti: SimGrid time-independent text,
.txt: the same as a description and a file per rank, .ktr: Kairos binary;
.gz or .zst compress) or --to; with no -o, or -o -, the trace is written to
standard output as TI text.

--delay makes a trace with known slow iterations, the ground truth of slow
instance detection: --delay 5:7,23,41:6 multiplies every computation of rank
5 in iterations 7, 23 and 41 (0-based) by 6, on top of imbalance and noise.

Kinds:
` + genKindList(),
		Example: `  kairos gen --list
  kairos gen stencil2d -o stencil.ktr          # 8x8 periodic, 1000 iterations: 646,528 events
  kairos gen stencil2d --grid 4x4 --iterations 10 --periodic=false -o small.ti
  kairos gen lu --ranks 64 --imbalance 0.2 --noise 0.05 --seed 7 -o lu.ti.zst
  kairos gen masterworker --ranks 16 --tasks 1000 -o farm.ktr
  kairos gen ring --ranks 4 --iterations 2
  kairos gen stencil2d --grid 4x4 -i 60 --delay 5:7,23,41:6 -o slow.ktr   # rank 5 computes 6x longer in iterations 7, 23, 41`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.list {
				return nil
			}
			if len(args) != 1 {
				return usagef("gen takes one workload KIND (one of %s), got %d arguments", strings.Join(workload.Kinds(), ", "), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.list {
				return genListKinds(cmd.OutOrStdout())
			}
			return runGen(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.BoolVar(&f.list, "list", false, "list the workload kinds, their descriptions and default parameters")
	fl.StringVarP(&f.out, "output", "o", "-", "output trace file (\"-\": standard output, TI text)")
	fl.StringVar(&f.to, "to", "", "output format ("+format.WritableNames()+"); default: from -o's extension")
	fl.IntVarP(&f.ranks, "ranks", "n", 0, "number of ranks (with no --grid, a near-square/cubic grid is derived)")
	fl.StringVar(&f.grid, "grid", "", "process grid, x first: 8x8, 4x4x4 (stencil2d, stencil3d, sweep, lu, mg)")
	fl.IntVarP(&f.iters, "iterations", "i", 0, "time steps (outer iterations)")
	fl.VarP(&f.bytes, "bytes", "b", "size of the main messages (halo face, wavefront message, task; ft: alltoall bytes per peer; pingpong: largest message)")
	fl.Float64Var(&f.flops, "flops", 0, "computation per rank and iteration (masterworker: per average task)")
	fl.Float64Var(&f.imb, "imbalance", 0, "per-rank compute factor drawn in [1, 1+imbalance]")
	fl.Float64Var(&f.noise, "noise", 0, "per-computation jitter drawn in [1-noise, 1+noise], noise < 1")
	fl.Uint64Var(&f.seed, "seed", 0, "seed of imbalance, noise and task costs")
	fl.BoolVar(&f.periodic, "periodic", false, "wrap the process grid around (stencil2d, stencil3d, mg; on by default, --periodic=false turns it off)")
	fl.IntVar(&f.arEvery, "allreduce-every", 0, "an allreduce after every N-th iteration, 0 never")
	fl.Var(&f.arBytes, "allreduce-bytes", "bytes of that allreduce")
	fl.IntVar(&f.tasks, "tasks", 0, "number of tasks (masterworker)")
	fl.IntVar(&f.levels, "levels", 0, "multigrid levels (mg)")
	fl.IntVar(&f.blocks, "blocks", 0, "k-plane blocks per octant, the pipeline depth (sweep)")
	fl.IntVar(&f.planes, "planes", 0, "k-planes nz (lu)")
	fl.IntVar(&f.inner, "inner", 0, "CG iterations per outer iteration (cg)")
	fl.StringVar(&f.delay, "delay", "", "slow one rank down: RANK:IT[,IT...]:FACTOR multiplies rank RANK's computation in the listed iterations (0-based) by FACTOR >= 1, e.g. 5:7,23,41:6 (not masterworker, pingpong)")
	return cmd
}

// genKindList is the kinds with their descriptions, for the help text.
func genKindList() string {
	var b strings.Builder
	for _, k := range workload.Kinds() {
		fmt.Fprintf(&b, "  %-13s %s\n", k, workload.Describe(k))
	}
	return strings.TrimRight(b.String(), "\n")
}

// genListKinds prints each kind, its description and its defaults.
func genListKinds(w io.Writer) error {
	for _, k := range workload.Kinds() {
		p, err := workload.Defaults(k)
		if err != nil {
			return err
		}
		src, err := workload.New(k, p)
		if err != nil {
			return fmt.Errorf("%s defaults: %w", k, err)
		}
		if _, err := fmt.Fprintf(w, "%-13s %s\n%-13s   defaults: %s\n", k, workload.Describe(k), "", src.Meta().Attrs["parameters"]); err != nil {
			return err
		}
	}
	return nil
}

// runGen generates kind with the flags given and writes it.
func runGen(cmd *cobra.Command, kind string, f *genFlags) error {
	p, err := genParams(cmd.Flags(), kind, f)
	if err != nil {
		return err
	}
	src, err := workload.New(kind, p)
	if err != nil {
		return usagef("%v", err)
	}
	out := f.out
	if out == "" {
		out = "-"
	}
	to := f.to
	if to == "" && out == "-" {
		to = "ti"
	}
	fm, err := format.ForOutput(out, to)
	if err != nil {
		return usagef("%v", err)
	}
	b := progress(int64(src.NumRanks()), "generating "+kind+" ranks")
	defer b.Finish()
	src = &genProgress{Source: src, bar: b}
	if out == "-" {
		return genToStdout(cmd.OutOrStdout(), fm, src)
	}
	return fm.Write(out, src)
}

// genParams returns kind's defaults overridden by the flags the user set,
// rejecting those kind does not read.
func genParams(fs *pflag.FlagSet, kind string, f *genFlags) (workload.Params, error) {
	p, err := workload.Defaults(kind)
	if err != nil {
		return p, usagef("%v", err)
	}
	var errs []string
	set := func(name string, apply func() error) {
		if !fs.Changed(name) {
			return
		}
		if !workload.Applies(kind, name) {
			errs = append(errs, fmt.Sprintf("--%s does not apply to %s", name, kind))
			return
		}
		if err := apply(); err != nil {
			errs = append(errs, fmt.Sprintf("--%s: %v", name, err))
		}
	}
	set(workload.ParamRanks, func() error { p.Ranks, p.Grid = f.ranks, nil; return nil })
	set(workload.ParamGrid, func() error {
		g, err := workload.ParseGrid(f.grid)
		if !fs.Changed(workload.ParamRanks) {
			p.Ranks = 0
		}
		p.Grid = g
		return err
	})
	set(workload.ParamIterations, func() error { p.Iterations = f.iters; return nil })
	set(workload.ParamBytes, func() error { p.Bytes = int64(f.bytes); return nil })
	set(workload.ParamFlops, func() error { p.Flops = f.flops; return nil })
	set(workload.ParamImbalance, func() error { p.Imbalance = f.imb; return nil })
	set(workload.ParamNoise, func() error { p.Noise = f.noise; return nil })
	set(workload.ParamSeed, func() error { p.Seed = f.seed; return nil })
	set(workload.ParamPeriodic, func() error { p.Periodic = f.periodic; return nil })
	set(workload.ParamAllreduceEvery, func() error { p.AllreduceEvery = f.arEvery; return nil })
	set(workload.ParamAllreduceBytes, func() error { p.AllreduceBytes = int64(f.arBytes); return nil })
	set(workload.ParamTasks, func() error { p.Tasks = f.tasks; return nil })
	set(workload.ParamLevels, func() error { p.Levels = f.levels; return nil })
	set(workload.ParamBlocks, func() error { p.Blocks = f.blocks; return nil })
	set(workload.ParamPlanes, func() error { p.Planes = f.planes; return nil })
	set(workload.ParamInner, func() error { p.Inner = f.inner; return nil })
	set(workload.ParamDelay, func() error {
		d, err := workload.ParseDelay(f.delay)
		p.Delay = d
		return err
	})
	if len(errs) > 0 {
		return p, usagef("%s", strings.Join(errs, "; "))
	}
	return p, nil
}

// sizeFlag is a byte-count flag: an integer with an optional K, M or G
// suffix.
type sizeFlag int64

func (s *sizeFlag) String() string { return strconv.FormatInt(int64(*s), 10) }
func (s *sizeFlag) Type() string   { return "size" }
func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	*s = sizeFlag(n)
	return err
}

// parseSize parses a byte count with an optional K, M or G suffix (powers
// of 1024).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	t := strings.TrimSpace(s)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v > (1<<62)/mult || v < -(1<<62)/mult {
		return 0, fmt.Errorf("%q is not a byte count (want an integer such as 4096 or 64K)", s)
	}
	return v * mult, nil
}

// genToStdout writes src in format fm to w: the format writes a file, so
// it writes a temporary one that is then copied.
func genToStdout(w io.Writer, fm format.Format, src trace.Source) error {
	dir, err := fileio.MkdirTemp("", "kairos-gen-")
	if err != nil {
		return err
	}
	defer fileio.RemoveTemp(dir)
	ext := ".out"
	if len(fm.Extensions) > 0 {
		ext = fm.Extensions[0]
	}
	path := filepath.Join(dir, "trace"+ext)
	if err := fm.Write(path, src); err != nil {
		return err
	}
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(w, in)
	return err
}

// genProgress advances a progress bar by one each time a rank of the
// source has been read to its end.
type genProgress struct {
	trace.Source
	bar *bar
}

func (s *genProgress) OpenRank(r int) (trace.Reader, error) {
	rd, err := s.Source.OpenRank(r)
	if err != nil || s.bar == nil {
		return rd, err
	}
	return &genProgressReader{Reader: rd, bar: s.bar}, nil
}

type genProgressReader struct {
	trace.Reader
	bar  *bar
	done bool
}

func (r *genProgressReader) Next() bool {
	ok := r.Reader.Next()
	if !ok && !r.done {
		r.done = true
		r.bar.Add(1)
	}
	return ok
}
