package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kairos/cluster"
	"kairos/prsd"
	"kairos/report"
	"kairos/sim"
	"kairos/trace"
)

func init() { addVerb("report", newReportCmd) }

// reportFlags are report's flags.
type reportFlags struct {
	machine, out string
	speed        flopRate
	analytic     bool
}

func newReportCmd() *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report [flags] TRACE",
		Short: "Write one HTML page of everything Kairos says about a trace",
		Long: `Report runs every analysis on a trace and writes one self-contained HTML
page, to open in any browser (it loads nothing from anywhere) or to attach
to a ticket. At the top, the answers: how long the run takes, what bounds
it on each network, where it waits and which rank was late, the slowest
phase, the most loaded rank, whether the trace is valid. Then:

  - a timeline of every rank's states (computation, point-to-point,
    collective and other MPI calls, waiting), zoomable and pannable, with
    the phases and the slow instances marked;
  - the slow pattern instances to look at first (kairos slow --summary);
  - the phases and communication patterns (kairos phases, patterns);
  - per-rank tables summarised (least, median, most, outliers), each
    rank's row folded away;
  - the communication matrix and the time in MPI by call (kairos stats);
  - what bounds it on 1G Ethernet, 10G Ethernet and InfiniBand QDR
    (kairos classify; computation at --speed for a time-independent trace);
  - the simulated run on a crossbar cluster (--machine, default
    N x 1Gf,125MBps,50us; kairos simulate), with SimGrid's SMPI model,
    or with the contention-free analytic one (--analytic);
  - the validation (kairos check);
  - the reduction to clusters of ranks, each compressed into one
    structure that keeps every rank's calls, with its replay accuracy
    (kairos reduce --accuracy).

The timeline, the patterns and the waits are of the trace if it is timed,
else of its simulated run. Replaying a large trace with SimGrid's model
takes most of its report's time. --analytic replays it, and its
reduction, without contention (kairos simulate --analytic):
Palabos, a lattice Boltzmann code, on 128 ranks took 48 s of CPU time
with SimGrid's model and 6 s with --analytic, whose simulated time was
20% short of the exact one, since Palabos' messages contend. Where the
replay with SimGrid's model takes 30 s or more, report says so on its
standard error.

An analysis that fails says why on the page; the others are written, and
the exit status is then 1. If every analysis fails, nothing is written.`,
		Example: `  kairos report run.ktr -o run.html
  kairos report experiment/traces.otf2 --machine 64x2Gf,10GBps,1us -o exp.html`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.machine, "machine", "", `crossbar cluster to simulate on (default "N x 1Gf,125MBps,50us")`)
	f.speed = 1e9
	fl.Var(&f.speed, "speed", "flop/s of the classification's computation (time-independent traces; e.g. 1Gf, 2.5e9)")
	fl.StringVarP(&f.out, "output", "o", "report.html", "HTML file to write (- for standard output)")
	fl.BoolVar(&f.analytic, "analytic", false, "simulate the trace and its reduction with the contention-free analytic model (fast)")
	return cmd
}

func runReport(cmd *cobra.Command, path string, f *reportFlags) error {
	src, err := openWhole(path)
	if err != nil {
		return err
	}
	rep := buildReport(path, inMemory(src), f)
	if rep.SimTook >= slowReplay && !f.analytic {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: the replay with SimGrid's model took %.0f s of the report's %.0f s: --analytic replays without contention, in a fraction of it\n",
			rep.SimTook.Seconds(), rep.Took.Seconds())
	}
	if first := rep.AllFailed(); first != nil {
		// A page of errors only: like every other -o, an output that
		// failed does not replace what the file held.
		return fmt.Errorf("every analysis of the report failed, %s not written; the first: %w", f.out, first)
	}
	if err := writeOutput(cmd, f.out, rep.WriteHTML); err != nil {
		return err
	}
	if n := rep.Failed(); n > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "kairos report: %d analyses failed; the page says why\n", n)
		return errFailed
	}
	return nil
}

// slowReplay is how long the report's replay may take before report
// suggests --analytic (a variable for the tests).
var slowReplay = 30 * time.Second

// buildReport runs the report's analyses on src, simulating and reducing
// as kairos simulate and kairos reduce --accuracy do.
func buildReport(path string, src trace.Source, f *reportFlags) *report.Report {
	machine := f.machine
	if machine == "" {
		machine = fmt.Sprintf("%dx1Gf,125MBps,50us", src.NumRanks())
	}
	return report.Build(src, report.Options{
		Name:     path,
		Machine:  machine,
		Analytic: f.analytic,
		Notes:    readerNotes(src),
		Speed:    float64(f.speed),
		NoReplay: replayable(path, src),
		Simulate: func(src trace.Source, run bool) (*sim.Result, *trace.Trace, error) {
			return simulateRun(path, src, machine, f.analytic, run)
		},
		Reduce: func(src trace.Source, simulated func() float64) (*report.Reduction, error) {
			return reportReduction(path, src, machine, f.analytic, simulated)
		},
		// A quarter of the machine: the run stops at three quarters
		// (memoryWatch), and the estimate per event is rough.
		Memory: machineMemory() / 4,
	})
}

// reportReduction reduces src with the default clusters, each compressed
// into one structure, and replays the reduction on machine (kairos reduce
// --accuracy, with --analytic if analytic), against the trace's own
// replay time there with the same model, which original returns where it
// is known, waiting for it (nil or 0: the trace is replayed too). The
// clusters kept as their events keep their times exact: a real program's
// reduction then replays as the trace does and is not replayed again
// (Palabos on 128 ranks: its report took 86 s with them rounded, 44 s so).
func reportReduction(path string, src trace.Source, machine string, analytic bool, original func() float64) (*report.Reduction, error) {
	out, _, _, err := reduceTrace(path, src, cluster.DefaultOptions(),
		&reduceFlags{accuracy: true, machine: machine, analytic: analytic, timeError: prsd.DefaultOptions().TimeError, original: original,
			exactEvents: true, skipWaiting: true})
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	if err := writeReduceText(&text, out); err != nil {
		return nil, err
	}
	r := &report.Reduction{Ranks: out.Ranks, Clusters: out.Clusters, Bytes: int64(out.Compressed.Bytes), Events: out.Events,
		TimeError: out.Compressed.TimeError, Text: text.String()}
	if out.Accuracy != nil {
		r.ACC = out.Accuracy.ACC
	}
	return r, nil
}

// simulateRun replays src on machine (contention-free if analytic),
// untimed if it is timed, and returns the result and, if run is set, the
// simulated timed trace.
func simulateRun(path string, src trace.Source, machine string, analytic, run bool) (*sim.Result, *trace.Trace, error) {
	if err := replayable(path, src); err != nil {
		return nil, nil, err
	}
	mc, src, err := quietReplay(path, src, machine, analytic)
	if err != nil {
		return nil, nil, err
	}
	if !run {
		res, err := sim.Run(src, mc.m, mc.cfg, nil)
		return res, nil, err
	}
	tt := sim.NewTimedTrace(src.NumRanks(), src.Meta())
	tt.NoMessages = true // the run's events are what the analyses read
	res, err := sim.Run(src, mc.m, mc.cfg, tt)
	if err != nil {
		return nil, nil, err
	}
	return res, tt.T, nil
}
