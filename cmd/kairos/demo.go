package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kairos/check"
	"kairos/cluster"
	"kairos/format"
	"kairos/internal/fileio"
	"kairos/pattern"
	"kairos/platform"
	"kairos/prsd"
	"kairos/report"
	"kairos/sim"
	"kairos/stats"
	"kairos/trace"
	"kairos/waitstate"
	"kairos/workload"
)

func init() { addVerb("demo", newDemoCmd) }

// demoFlags are the demo's few knobs; everything else is the defaults a
// first-time user would pick.
type demoFlags struct {
	grid       string
	iterations int
	cluster    string
	speed      flopRate
	out        string
}

func newDemoCmd() *cobra.Command {
	var f demoFlags
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole pipeline on an embedded default workload",
		Long: `Demo shows what Kairos does, on nothing but itself: it generates a
64-rank periodic 2-D stencil (8x8 process grid, halo exchanges with
isend/irecv/waitall and an allreduce every 10 iterations, with seeded load
imbalance and noise, and one rank six times slower in three iterations),
checks it (matched messages, completed requests,
consistent collectives, no deadlock under SimGrid's send protocol),
summarises it, simulates it on a 64-node cluster with SimGrid's SMPI network
model, classifies it on three interconnects (1G Ethernet, 10G Ethernet,
InfiniBand QDR), finds its communication patterns, phases and slow
instances in the simulated run, and reduces it to clusters of ranks
(call-path and parameter signatures), each compressed into one structure,
with the replay accuracy.

With -o DIR it also writes the generated trace (stencil.ktr), the simulated
timed trace (simulated.ktr), a Perfetto timeline (simulated.json, open it
in ui.perfetto.dev), the communication matrix (matrix.svg), each rank's
simulated computation, communication and wait (ranks.svg) and the pattern
instances' durations with the slow ones marked (slow.svg), and all of it on
one HTML page (report.html, as kairos report writes it).`,
		Example: `  kairos demo
  kairos demo --iterations 200 -o demo-out`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd.OutOrStdout(), &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.grid, "grid", "8x8", "process grid of the stencil")
	fl.IntVar(&f.iterations, "iterations", 100, "stencil iterations")
	fl.StringVar(&f.cluster, "cluster", "64x1Gf,125MBps,50us", "cluster to simulate on (see kairos simulate --help)")
	f.speed = 1e9
	fl.Var(&f.speed, "speed", "flop/s used to classify (e.g. 1Gf, 2.5e9)")
	fl.StringVarP(&f.out, "output", "o", "", "directory to write the demo's traces and timeline into")
	return cmd
}

func runDemo(w io.Writer, f *demoFlags) error {
	step := func(n int, what string) { fmt.Fprintf(w, "\n== %d. %s\n", n, what) }
	start := time.Now()

	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return err
		}
	}
	step(1, "generate: kairos gen stencil2d --grid "+f.grid)
	src, err := demoWorkload(f)
	if err != nil {
		return err
	}
	if err := demoSave(w, f, "stencil.ktr", src); err != nil {
		return err
	}

	step(2, "check: matched messages, requests, collectives, deadlock freedom")
	rep, err := check.Check(src, check.Options{Protocol: check.SimGrid})
	if err != nil {
		return err
	}
	if !rep.OK() {
		for _, p := range rep.Problems {
			fmt.Fprintf(w, "rank %d event %d: %s\n", p.Rank, p.Index, p.Msg)
		}
		return errFailed
	}
	fmt.Fprintln(w, "valid: every message matched, every request completed, no deadlock")

	step(3, "stats")
	st, err := stats.Collect(src, 3)
	if err != nil {
		return err
	}
	if err := st.WriteSummary(w); err != nil {
		return err
	}
	if err := demoFigure(w, f, "matrix.svg", func(out io.Writer) error { return report.Matrix(out, st, stats.Bytes, "stencil2d") }); err != nil {
		return err
	}

	step(4, "simulate on "+f.cluster+" (SimGrid SMPI model)")
	timed, err := demoSimulate(w, f, src)
	if err != nil {
		return err
	}

	step(5, "classify on 1G Ethernet, 10G Ethernet and InfiniBand QDR")
	if err := classifyDemo(w, src, "stencil2d", float64(f.speed)); err != nil {
		return err
	}

	step(6, "root causes of waiting, patterns, phases and slow instances of the simulated run")
	if err := patternsDemo(w, f, timed, "simulated stencil2d"); err != nil {
		return err
	}

	step(7, "reduce: cluster the ranks by call-path and parameter signatures, each cluster compressed into one structure")
	if err := reduceDemo(w, f, src); err != nil {
		return err
	}
	if err := demoFigure(w, f, "report.html", func(out io.Writer) error {
		return buildReport("stencil2d", src, &reportFlags{machine: f.cluster, speed: f.speed}).WriteHTML(out)
	}); err != nil {
		return err
	}

	fmt.Fprintf(w, "\ndemo done in %.2f s\n", time.Since(start).Seconds())
	return nil
}

func demoWorkload(f *demoFlags) (trace.Source, error) {
	p, err := workload.Defaults("stencil2d")
	if err != nil {
		return nil, err
	}
	grid, err := workload.ParseGrid(f.grid)
	if err != nil {
		return nil, usagef("--grid: %v", err)
	}
	p.Grid, p.Ranks = grid, 1
	for _, d := range grid {
		p.Ranks *= d
	}
	p.Iterations = f.iterations
	p.Imbalance, p.Noise, p.Seed = 0.1, 0.02, 1
	p.Delay = demoDelay(p)
	src, err := workload.New("stencil2d", p)
	if err != nil {
		return nil, usagef("%v", err)
	}
	// The demo reads the trace several times: generate it once.
	return trace.Load(src)
}

// demoDelay makes one rank compute six times longer in a few iterations,
// so that the pattern analysis has slow instances and a late sender to find.
// The iterations are ones followed by an allreduce, which resynchronises
// every rank, so that the delay does not spread into later iterations.
func demoDelay(p workload.Params) workload.Delay {
	var its []int
	for it := p.AllreduceEvery - 1; p.AllreduceEvery > 0 && it < p.Iterations; it += p.AllreduceEvery {
		its = append(its, it)
	}
	if len(its) == 0 {
		return workload.Delay{}
	}
	pick := []int{its[0]}
	for _, i := range []int{len(its)/2 - 1, len(its) - 2} {
		if i > 0 && its[i] > pick[len(pick)-1] {
			pick = append(pick, its[i])
		}
	}
	return workload.Delay{Rank: p.Ranks * 27 / 64, Iterations: pick, Factor: 6}
}

func demoSimulate(w io.Writer, f *demoFlags, src trace.Source) (*trace.Trace, error) {
	plat, err := platform.ParseCluster(f.cluster)
	if err != nil {
		return nil, usagef("--cluster: %v", err)
	}
	hosts, err := platform.Deploy(plat, nil, src.NumRanks(), platform.RoundRobin)
	if err != nil {
		return nil, err
	}
	m, err := sim.FromPlatform(plat, hosts)
	if err != nil {
		return nil, err
	}
	tt := sim.NewTimedTrace(src.NumRanks(), src.Meta())
	tt.NoMessages = true
	obs := sim.Observers{tt}
	var timeline *fileio.File
	var pf *sim.Perfetto
	if f.out != "" {
		if timeline, err = fileio.Create(filepath.Join(f.out, "simulated.json")); err != nil {
			return nil, err
		}
		defer timeline.Abort()
		names := make([]string, len(hosts))
		for i, h := range hosts {
			names[i] = h.Name
		}
		pf = sim.NewPerfetto(timeline, names)
		obs = append(obs, pf)
	}
	res, err := sim.Run(src, m, sim.DefaultConfig(), obs)
	if err != nil {
		return nil, err
	}
	if timeline != nil {
		if err := pf.Close(); err != nil {
			return nil, err
		}
		if err := timeline.Commit(); err != nil {
			return nil, err
		}
		fmt.Fprintln(w, "wrote", filepath.Join(f.out, "simulated.json"))
	}
	var comp, comm, wait float64
	for _, r := range res.Ranks {
		comp, comm, wait = comp+r.Compute, comm+r.Comm, wait+r.Wait
	}
	total := comp + comm + wait
	fmt.Fprintf(w, "Simulation time %.6f s (%d actions, %d messages)\n", res.Time, res.Actions, res.Messages)
	if total > 0 {
		fmt.Fprintf(w, "time over all ranks: compute %.1f%%, communication %.1f%%, blocked on late partners %.1f%%\n",
			100*comp/total, 100*comm/total, 100*wait/total)
	}
	if err := demoSave(w, f, "simulated.ktr", tt.T); err != nil {
		return nil, err
	}
	if err := demoFigure(w, f, "ranks.svg", func(out io.Writer) error { return report.RankTimes(out, res, "stencil2d on "+f.cluster) }); err != nil {
		return nil, err
	}
	return tt.T, nil
}

// demoFigure writes a figure into the demo's output directory, if there is
// one.
func demoFigure(w io.Writer, f *demoFlags, name string, draw func(io.Writer) error) error {
	if f.out == "" {
		return nil
	}
	path := filepath.Join(f.out, name)
	if err := fileio.WriteFile(path, draw); err != nil {
		return err
	}
	fmt.Fprintln(w, "wrote", path)
	return nil
}

// demoSave writes src into the demo's output directory, if there is one.
func demoSave(w io.Writer, f *demoFlags, name string, src trace.Source) error {
	if f.out == "" {
		return nil
	}
	path := filepath.Join(f.out, name)
	out, err := format.ForOutput(path, "")
	if err != nil {
		return err
	}
	if err := out.Write(path, src); err != nil {
		return err
	}
	fmt.Fprintln(w, "wrote", path)
	return nil
}

// patternsDemo tells the story of a timed trace: the root causes of its
// waiting, its communication patterns, phases and the slow instances to
// look at first.
func patternsDemo(w io.Writer, f *demoFlags, src trace.Source, name string) error {
	rc, err := waitstate.Analyze(src, waitstate.Options{})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := rc.WriteSummary(w, 3); err != nil {
		return err
	}
	fmt.Fprintln(w)
	a, err := pattern.Analyze(src, pattern.DefaultOptions())
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := a.WriteStory(w, 5); err != nil {
		return err
	}
	return demoFigure(w, f, "slow.svg", func(out io.Writer) error { return report.SlowInstances(out, a, "simulated.ktr", 5) })
}

// reduceDemo clusters the demo's ranks with the default method,
// compresses each cluster and replays the reduction: how much of the
// trace a tracer would need and how well it stands for the whole.
func reduceDemo(w io.Writer, f *demoFlags, src trace.Source) error {
	out, reduced, _, err := reduceTrace("stencil2d", src, cluster.DefaultOptions(), &reduceFlags{timeError: prsd.DefaultOptions().TimeError})
	if err != nil {
		return err
	}
	if _, err := checkReduction(src, reduced); err != nil {
		return fmt.Errorf("the demo's reduction: %w", err)
	}
	fmt.Fprintf(w, "%d ranks -> %s in %s (signatures that differ: %s); %s bytes for %s events, every rank's calls kept\n",
		out.Ranks, count(out.Clusters, "cluster"), count(out.MainClusters, "main cluster"), strings.Join(out.Format, ", "),
		thousands(int64(out.Compressed.Bytes)), thousands(out.Events))
	machine := f.cluster
	t0, err := replayTime("stencil2d", src, machine, false)
	if err != nil {
		return err
	}
	t1, err := replayTime("stencil2d reduced", reduced, machine, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "replayed on %s: %.6f s, the reduction %.6f s: ACC = %.4f\n", machine, t0, t1, 1-math.Abs(t0-t1)/t0)
	return nil
}
