package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kairos/format"
	"kairos/format/ti"
	"kairos/internal/fileio"
	"kairos/platform"
	"kairos/report"
	"kairos/sim"
	"kairos/trace"
)

func init() { addVerb("simulate", newSimulateCmd) }

// smpirunArgs accepts smpirun's command line: its single-dash options,
// which the flag parser would otherwise read as bundles of one-letter
// flags, become Kairos' flags (-np and -n, -platform, -hostfile and
// -machinefile; -map prints the placement; -analyze the replay's wall
// time (smpi/display-timing); -trace writes a Paje trace to
// smpi_simgrid.trace or -trace-file's name, -trace-ti the run as a TI
// trace to smpi_simgrid.txt or that name), "-replay FILE" names the trace,
// and the options that change only how smpirun runs a program (-quiet,
// -keep-temps...) are dropped. smpirun's debugging wrappers and its
// generated platform (-bandwidth, -latency without -platform) are refused.
func smpirunArgs(args []string) ([]string, error) {
	var out []string
	trace, traceTI, traceFile, replay := false, false, "", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", usagef("smpirun's %s needs a value", a)
			}
			i++
			return args[i], nil
		}
		switch a {
		case "-np", "-n", "-platform", "-hostfile", "-machinefile":
			name := map[string]string{"-n": "np", "-machinefile": "hostfile"}[a]
			if name == "" {
				name = a[1:]
			}
			out = append(out, "--"+name)
		case "-replay":
			v, err := value()
			if err != nil {
				return nil, err
			}
			replay = v
		case "-map":
			out = append(out, "--show-map")
		case "-trace":
			trace = true
		case "-trace-ti":
			trace, traceTI = true, true
		case "-trace-file":
			v, err := value()
			if err != nil {
				return nil, err
			}
			traceFile = v
		case "-trace-comment", "-trace-comment-file", "-tmpdir":
			if _, err := value(); err != nil {
				return nil, err
			}
		case "-analyze":
			out = append(out, "--cfg", "smpi/display-timing:yes")
		case "-quiet", "-keep-temps", "-no-privatize", "-foreground", "-trace-grouped", "-trace-resource":
			// How smpirun runs a program or what SimGrid's own tracing
			// adds: nothing a replay's times depend on.
		case "-wrapper", "-gdb", "-vgdb", "-lldb":
			return nil, usagef("smpirun's %s runs a program under a tool: a replay has no program", a)
		case "-bandwidth", "-latency":
			return nil, usagef("smpirun's %s shapes the platform it generates without -platform (which SimGrid 3.32 refuses beyond one rank: its Full zone finds each route declared twice): give the machine with -platform or --cluster", a)
		default:
			out = append(out, a)
		}
	}
	switch {
	case traceTI:
		out = append(out, "--timed-trace", cmp.Or(traceFile, "smpi_simgrid.txt"), "--to", "ti")
	case trace:
		out = append(out, "--paje", cmp.Or(traceFile, "smpi_simgrid.trace"))
	}
	if replay != "" {
		out = append(out, "--", replay) // the trace, even if it starts with a dash
	}
	return out, nil
}

type simulateFlags struct {
	platform, cluster, hostfile, mapping string
	np                                   int
	traceRanks                           int // the ranks the trace names, whatever -np
	cfg, logs                            []string
	settings                             map[string]string // the --cfg pairs, once read
	replayed                             []instance        // the --instances, once read
	notes                                []string          // the reader's notes on the trace (readerNotes), for --json
	speed                                string
	bwScale, latScale, speedScale        []float64
	analytic, verbose, perRank, json     bool
	showMap, displayTiming, instances    bool
	jobs                                 bool
	noise                                []int // --noise: the example's sleepers, before the run and each job
	timed, timedFormat, perfetto, paje   string
	svg                                  string
}

func newSimulateCmd() *cobra.Command {
	f := &simulateFlags{}
	cmd := &cobra.Command{
		Use:   "simulate TRACE (--platform FILE.xml | --cluster SPEC) [flags]",
		Short: "Replay a trace on a simulated machine, as SimGrid 3.32's smpirun -replay does",
		Long: `Simulate replays a trace on a described machine and prints the simulated time,
exactly as SimGrid 3.32 prints it for "smpirun -replay" (same network model,
MPI semantics and collective algorithms), and per-rank finish times with a
compute / communication / blocked breakdown: blocked is the time a rank
waits in MPI for a message its partner has not posted yet, message by
message, in the collectives' algorithms too (kairos slow's wait states
count a collective's waiting up to its last member's entry instead).

The machine is a SimGrid platform XML file (--platform) or a one-line cluster
(--cluster "N x SPEED,BW,LAT[,option=value...]", for example
"64x1Gf,125MBps,50us" or "512x2Gf,10GBps,1us,topo=torus:8,8,8"; options:
cores, bb, bb-sharing, sharing, limiter, loopback, topo, watts, prefix, suffix, id).
Ranks are placed on the hostfile's hosts round-robin, as smpirun does
(without a hostfile, on all the platform's hosts in SimGrid's order, by
name). smpirun's command line is accepted as it is (-np, -platform,
-hostfile, -replay TRACE, -map, -trace, -trace-ti, -trace-file), and so is
--log (smpi_replay.thresh:verbose is --verbose; other logs are ignored).

Model settings take SimGrid's --cfg names and values, for example
--cfg network/model:LV08 or --cfg=smpi/bcast:flattree. Supported keys:
  ` + strings.Join(sim.CfgNames, "\n  ") + `

A timed trace (OTF2, DUMPI, a timed .ktr) is replayed as SMPI runs real
code: the time between MPI calls becomes computation at smpi/host-speed (the
speed of the machine it was recorded on; default: the speed of rank 0's host
as the platform describes it, before --speed and --speed-scale), computations
shorter than smpi/cpu-threshold (1e-6 s) dropped. The calls a replay does
nothing for (probes, the calls that make communicators, those replayed where
they complete) are left out as the trace is read, unless --verbose,
--timed-trace, --paje or --perfetto lists the actions.

--analytic switches to a contention-free model (every message takes
latency x lat-factor + size / (bandwidth x bw-factor), Hockney-style) that is
much faster, for what-ifs and cross-checks. Where the order of simultaneous
events cannot matter (no MPI_Test, no shared cores, no overheads, no
--perfetto or --verbose output, no two sends at one date to a wildcard
receive), it runs without an event queue, each rank on a clock of its own:
several times faster again, to the event engine's times within nanoseconds;
--json names the engine used (engine) and why it handed over (handover).

Outputs: --timed-trace writes the replay as a timed trace (every action with
its simulated start and end; .ktr keeps the timestamps; .otf2 writes an OTF2
archive for Vampir, its computations the time between calls) that the other
verbs read; --perfetto writes a Chrome / Perfetto JSON timeline, --paje a Paje
trace for ViTE (both with an arrow per point-to-point message, as SimGrid's
-trace); --verbose prints one line per action like SimGrid's verbose
replay log. The sharing is re-solved as SimGrid re-solves it, or, on a
trace whose first events repeat exactly (periods the replay may skip),
incrementally, starting over SimGrid's way if SimGrid's selective-update
quirk strikes (kairos/incremental:auto). --perfetto streams its output, so
with it the
replay runs twice: once to choose the solver, once to write. --verbose lists
simultaneous actions in SimGrid's order, which only SimGrid's re-solves keep:
with it they are used from the start (slower, same times).

--instances replays several TI traces side by side on the machine, as
SimGrid's application instances (its replay_multiple example): TRACE is
then a description file, one instance a line, "ID TRACE RANKS
[DELAY_FLOPS]"; each instance has its own MPI_COMM_WORLD, their ranks
follow one another on the hostfile, and a delayed instance's ranks compute
the delay first. Each instance's simulated time is printed.

--jobs replays a workload as SimGrid's replay_multiple_manual example does:
TRACE is then a file of jobs, one a line, "NAME TRACE RANKS START HOSTS",
START in whole seconds and HOSTS the ranks' host indexes (comma-separated)
into the platform's hosts sorted by name; each job's ranks appear at its
date on its hosts. --noise sets the example's noise actors, which only
change which waits SimGrid's instance quirk lets through.

A trace that deadlocks is reported with every blocked rank, its pending
action and trace line, and the command exits with status 1.`,
		Example: `  kairos simulate ring.ti --cluster 4x1Gf,125MBps,50us
  kairos simulate actions.txt --platform small_platform.xml --hostfile hostfile -np 3
  kairos simulate -np 3 -platform small_platform.xml -hostfile hostfile -map -trace -replay actions.txt   # smpirun's command line
  kairos simulate app.ti --platform p.xml --cfg network/model:LV08 --cfg smpi/bcast:flattree
  kairos simulate app.ti --cluster 64x1Gf,10GBps,1us --analytic --json
  kairos simulate --instances jobs.txt --platform p.xml --hostfile hosts  # several applications at once
  kairos simulate --jobs workload --platform p.xml                        # jobs at given dates on given hosts
  kairos simulate app.ti --cluster 64x1Gf,125MBps,50us --timed-trace app.timed.ktr --perfetto app.json
  kairos simulate app.ti --platform p.xml --bw-scale 2 --lat-scale 0.5   # twice the bandwidth, half the latency
  kairos simulate app.ti --platform p.xml --bw-scale 0.5,1,2,4            # a sweep: one run and row each`,
		// Flags are parsed here so that smpirun's command line works
		// as it does with smpirun (smpirunArgs).
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			args, err := smpirunArgs(args)
			if err != nil {
				return err
			}
			if err := fl.Parse(args); err != nil {
				return usageError{err}
			}
			if h, _ := fl.GetBool("help"); h {
				return cmd.Help()
			}
			if err := exactArgs(1)(cmd, fl.Args()); err != nil {
				return err
			}
			return runSimulate(cmd, fl.Arg(0), f)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.platform, "platform", "", "SimGrid platform XML file")
	fl.StringVar(&f.cluster, "cluster", "", `one-line cluster "N x SPEED,BW,LAT[,option=value...]" instead of --platform`)
	fl.StringVar(&f.hostfile, "hostfile", "", "hosts to run the ranks on, one per line (host:K = K slots)")
	fl.IntVar(&f.np, "np", 0, "number of ranks (default: the trace's)")
	fl.BoolVar(&f.instances, "instances", false, "TRACE is a SimGrid replay_multiple description file: several traces (TI, or any format Kairos replays) replayed side by side, one per line (ID TRACE RANKS [DELAY_FLOPS])")
	fl.BoolVar(&f.jobs, "jobs", false, "TRACE is a workload as SimGrid's replay_multiple_manual example reads it: jobs started at given dates on given hosts, one per line (NAME TRACE RANKS START_SECONDS HOST_INDEX,...)")
	fl.IntSliceVar(&f.noise, "noise", []int{0, 0}, "with --jobs: the replay_multiple_manual example's INITIAL,BETWEEN_JOBS noise actors, which shift SimGrid's actor numbers (and so which waits its quirk finds)")
	fl.StringVar(&f.mapping, "map", "roundrobin", "rank placement on the hostfile: roundrobin or block")
	fl.BoolVar(&f.showMap, "show-map", false, "print each rank's host before the replay, as smpirun -map")
	fl.StringArrayVar(&f.cfg, "cfg", nil, "SimGrid setting key:value (repeatable)")
	fl.StringArrayVar(&f.logs, "log", nil, "SimGrid logging setting: smpi_replay.thresh:verbose is --verbose, others are ignored")
	fl.StringVar(&f.speed, "speed", "", "override every host's speed (flop/s, SimGrid units: 1Gf)")
	fl.Float64SliceVar(&f.bwScale, "bw-scale", []float64{1}, "multiply every link's bandwidth by this (what-if: 2 is twice the bandwidth); several, comma-separated, make a sweep")
	fl.Float64SliceVar(&f.latScale, "lat-scale", []float64{1}, "multiply every link's latency by this (several: a sweep)")
	fl.Float64SliceVar(&f.speedScale, "speed-scale", []float64{1}, "multiply every host's speed by this (several: a sweep)")
	fl.BoolVar(&f.analytic, "analytic", false, "contention-free analytic model (fast what-ifs)")
	fl.StringVar(&f.timed, "timed-trace", "", "write the simulated run as a timed trace to this file")
	fl.StringVar(&f.timedFormat, "to", "", "format of --timed-trace (default: from its extension; "+format.WritableNames()+")")
	fl.StringVar(&f.perfetto, "perfetto", "", "write a Perfetto / Chrome trace JSON timeline to this file")
	fl.StringVar(&f.paje, "paje", "", "write a Paje trace (for ViTE) to this file")
	fl.StringVar(&f.svg, "svg", "", "draw the run (each rank's computation, communication and time blocked on late partners) or the sweep (time against the scale) as SVG in this file")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "print every action's end date and duration, as SimGrid's verbose replay")
	fl.BoolVar(&f.perRank, "ranks", false, "print every rank's finish time and breakdown")
	fl.BoolVar(&f.json, "json", false, "print the results as JSON")
	return cmd
}

// simulateJSON is the stable JSON form of a simulation's results.
type simulateJSON struct {
	Trace          string           `json:"trace"`
	Platform       string           `json:"platform"`
	Model          string           `json:"model"`
	SimulatedTime  float64          `json:"simulated_time"`
	Actions        int64            `json:"actions"`
	Messages       int64            `json:"messages"`
	Bytes          int64            `json:"bytes"`
	Unreceived     int64            `json:"unreceived,omitempty"` // sends no receive matched (sim.Result.Unreceived)
	Solver         string           `json:"solver"`
	Engine         string           `json:"engine"`             // events, or dependencies (an analytic replay without an event queue)
	Handover       string           `json:"handover,omitempty"` // why the dependency-driven engine handed the replay to the event engine
	SkippedPeriods int64            `json:"skipped_periods"`    // periods not replayed again (kairos/skip-periods)
	Work           workJSON         `json:"engine_work"`
	Ranks          []simulateRankJS `json:"ranks"`
	Energy         *simulateEnergy  `json:"energy,omitempty"`
	LinkEnergy     *linkEnergyJSON  `json:"link_energy,omitempty"`
	TimedTrace     string           `json:"timed_trace,omitempty"`
	PerfettoOutput string           `json:"perfetto,omitempty"`
	// UntimedAt is the speed (flop/s) a timed trace's computation was
	// measured at (smpi/host-speed).
	UntimedAt float64 `json:"untimed_at,omitempty"`
	// Recorded is how long the timed trace's recorded run lasted, from
	// MPI_Init's return to MPI_Finalize's entry (trace.UntimedSource).
	Recorded float64 `json:"recorded_time,omitempty"`
	// Unreplayed is the mean time (s) a rank of the timed trace spent in
	// calls a replay gives no time (probes, flushes with nothing to
	// complete...), part of Recorded that the replay has not.
	Unreplayed float64 `json:"unreplayed_time,omitempty"`
	// Instances are the applications replayed side by side (--instances).
	Instances []instanceJSON `json:"instances,omitempty"`
	// Notes are the reader's, on how it read the trace (what every verb
	// prints on its standard error).
	Notes []string `json:"reader_notes,omitempty"`
	// Polling says where SMPI's test back-off took time, if it did.
	Polling *pollingJSON `json:"polling,omitempty"`
}

// workJSON is what the replay cost the engine (sim.Work): the dates its
// clock advanced to, the max-min re-solves, the shares they changed, and
// the actions dated in its event queue.
type workJSON struct {
	Advances int64 `json:"advances"`
	Solves   int64 `json:"solves"`
	Reported int64 `json:"changed_shares"`
	Dated    int64 `json:"datings"`
}

type simulateRankJS struct {
	Rank    int     `json:"rank"`
	Host    string  `json:"host"`
	Finish  float64 `json:"finish"`
	Compute float64 `json:"compute"`
	Comm    float64 `json:"comm"`
	Wait    float64 `json:"wait"`
	// Backoff is SMPI's sleep before the rank's MPI_Test actions
	// (sim.RankResult.Backoff); Tests and FailedTests count them.
	Backoff     float64 `json:"test_backoff"`
	Tests       int64   `json:"tests,omitempty"`
	FailedTests int64   `json:"failed_tests,omitempty"`
	IO          float64 `json:"io,omitempty"`
}

// simulateEnergy is the energy model's report (--cfg plugin:host_energy).
type simulateEnergy struct {
	Total float64          `json:"total_joules"`
	Used  float64          `json:"used_hosts_joules"`
	Idle  float64          `json:"unused_hosts_joules"`
	Hosts []hostEnergyJSON `json:"hosts"`
}

// linkEnergyJSON is the link energy model's report (--cfg
// plugin:link_energy).
type linkEnergyJSON struct {
	Total float64          `json:"total_joules"`
	Links []linkJoulesJSON `json:"links"`
}

type linkJoulesJSON struct {
	Link   string  `json:"link"`
	Joules float64 `json:"joules"`
}

type hostEnergyJSON struct {
	Host   string  `json:"host"`
	Joules float64 `json:"joules"`
	Used   bool    `json:"used"`
}

// maxSweep bounds the runs of a sweep: a slip of the shell (a range of a
// thousand values twice) would run for days.
const maxSweep = 10_000

// openReplayed opens the trace at path for simulate. A TI trace has np
// ranks unless np is 0 (-np, as smpirun's: the size of MPI_COMM_WORLD,
// whatever the ranks a shared TI file names), and is opened without the regions of
// its location lines unless the timed trace or the Paje trace, which
// keep them, is written: that spares reading every rank's file at open.
func openReplayed(path string, np int, f *simulateFlags) (trace.Source, format.Format, error) {
	tf, err := format.Detect(path)
	if err != nil {
		return nil, tf, err
	}
	if np < 0 || np > trace.MaxRanks {
		return nil, tf, usagef("-np %d: expected 1 to %d ranks", np, trace.MaxRanks)
	}
	if tf.Name != "ti" {
		src, err := tf.Open(path)
		if err == nil {
			sayNotes(path, src)
			err = replayable(path, src)
		}
		if err == nil {
			src, err = expandReduced(path, src)
		}
		if err == nil {
			f.traceRanks = src.NumRanks()
			err = replayable(path, src)
		}
		if err == nil && np == 0 {
			err = claimed(path, src)
		}
		return src, tf, err
	}
	t, err := ti.OpenWith(path, ti.ReaderOptions{NumRanks: np, NoRegions: f.timed == "" && f.paje == ""})
	var nr *ti.NumRanksError
	if errors.As(err, &nr) {
		return nil, tf, usageError{err}
	}
	if err != nil {
		return nil, tf, err
	}
	f.traceRanks = t.NamedRanks()
	// As for the other formats (a tracer's note on threads it did not record).
	sayNotes(path, t)
	if np == 0 { // -np sets the ranks: those beyond the trace's are idle
		if err := claimed(path, t); err != nil {
			return nil, tf, err
		}
	}
	src, err := expandReduced(path, t)
	return src, tf, err
}

func runSimulate(cmd *cobra.Command, path string, f *simulateFlags) error {
	cfg, given, err := simulateConfig(f)
	if err != nil {
		return err
	}
	if err := tracingSettings(f); err != nil {
		return err
	}
	simulateLogs(cmd.ErrOrStderr(), f)
	if f.jobs && (f.instances || f.hostfile != "") {
		return usagef("--jobs places the ranks on the hosts the jobs name: not with --instances or --hostfile")
	}
	if len(f.noise) != 2 || f.noise[0] < 0 || f.noise[1] < 0 || f.noise[0] > 1<<20 || f.noise[1] > 1<<20 {
		return usagef("--noise takes two counts of actors, INITIAL,BETWEEN_JOBS (from 0 to %d), not %v", 1<<20, f.noise)
	}
	if !f.jobs && (f.noise[0] != 0 || f.noise[1] != 0) {
		return usagef("--noise only changes a --jobs replay")
	}
	var src trace.Source
	var tf format.Format
	if f.instances || f.jobs {
		src, f.replayed, tf, err = openInstances(path, f, cfg.Compat)
		if err == nil {
			f.traceRanks = src.NumRanks()
		}
		cfg.StartDelays = startDelays(f.replayed)
		if f.jobs {
			cfg.StartDates = startDates(f.replayed)
			if cfg.Compat {
				cfg.ActorKeys = jobActorKeys(f.replayed, [2]int{f.noise[0], f.noise[1]})
			}
		}
	} else {
		src, tf, err = openReplayed(path, f.np, f)
	}
	if err != nil {
		return err
	}
	src = eventProgress(readAhead(src, tf.Name), filepath.Base(path))
	floorRanks(src.NumRanks())
	// What the reader tolerated but SimGrid would not replay the same
	// way (a dropped last line, a wait SimGrid aborts on...) is said
	// after the result.
	defer printSourceWarnings(cmd.ErrOrStderr(), src)
	if np := f.np; np != 0 && np != src.NumRanks() {
		return usagef("-np %d but the trace %s has %d ranks", np, path, src.NumRanks())
	}

	if runs := len(f.bwScale) * len(f.latScale) * len(f.speedScale); runs > maxSweep {
		return usagef("a sweep of %d runs (--bw-scale x --lat-scale x --speed-scale): at most %d", runs, maxSweep)
	} else if runs > 1 {
		return runSweep(cmd, path, tf, src, f, cfg, given)
	}
	mc, err := simulateMachine(f, cfg, given, src.NumRanks(), scales{f.bwScale[0], f.latScale[0], f.speedScale[0]})
	if err != nil {
		return err
	}
	p, m, names, cfg := mc.p, mc.m, mc.names, mc.cfg
	printMap(cmd.ErrOrStderr(), f, names)
	np := src.NumRanks()
	untimed, err := untimeForReplay(cmd.ErrOrStderr(), path, tf, src, mc)
	if err != nil {
		return err
	}
	if untimed != nil {
		src = untimed
	}
	var obs sim.Observers
	if f.verbose {
		obs = append(obs, &sim.Verbose{W: cmd.OutOrStdout(), Hosts: names})
	}
	var timed *sim.TimedTrace
	var outFormat format.Format
	if f.timed != "" {
		if outFormat, err = format.ForOutput(f.timed, f.timedFormat); err != nil {
			return usagef("--timed-trace: %v", err)
		}
	}
	if f.timed != "" || f.paje != "" {
		timed = sim.NewTimedTrace(np, src.Meta())
		timed.NoMessages = f.paje == ""
		obs = append(obs, timed)
	}
	var pf *sim.Perfetto
	var pfile *fileio.File
	if f.perfetto != "" {
		if pfile, err = fileio.Create(f.perfetto); err != nil {
			return err
		}
		defer pfile.Abort()
		pf = sim.NewPerfetto(pfile, names)
		obs = append(obs, pf)
	}
	var o sim.Observer
	if len(obs) > 0 {
		o = obs
	} else if untimed != nil {
		untimed.DropUnreplayed() // no timeline lists the calls a replay does nothing for
	}
	began := time.Now()
	res, err := sim.Run(src, m, cfg, o)
	if err != nil {
		err = naming(path, err) // a replay's error names a rank, and its file:line where the reader knows it
		fmt.Fprintln(cmd.ErrOrStderr(), "kairos:", err)
		if dl := (*sim.DeadlockError)(nil); errors.As(err, &dl) {
			if empty, n := trace.EmptyRanks(src); n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s has no events of %s (one rank's file opened alone? its description names every rank's)\n",
					path, count(n, "rank")+" "+trace.RankRanges(len(empty), 8, func(r int) bool { return empty[r] }))
			}
		}
		return reported{err}
	}
	took := time.Since(began)
	if pf != nil {
		if err := pf.Close(); err != nil {
			return fmt.Errorf("%s: %w", f.perfetto, err)
		}
		if err := pfile.Commit(); err != nil {
			return err
		}
	}
	if err := writeRunFiles(cmd.ErrOrStderr(), f, outFormat, timed, res, names, filepath.Base(path)+" on "+p.Name); err != nil {
		return err
	}
	f.notes = readerNotes(src)
	if res.Unreceived > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s never received: the replay ends without them, as SimGrid's does (kairos check lists them)\n",
			path, count(int(res.Unreceived), "message"))
	}
	if err := printSimulation(cmd.OutOrStdout(), path, p.Name, cfg, res, names, f, untimed); err != nil {
		return err
	}
	if res.Actions == 0 {
		// A trace of a program without MPI (Score-P's of a GPU code, say).
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s holds no MPI call to replay (%d ranks, none with an event)\n", path, np)
	}
	if f.displayTiming {
		// SimGrid's smpi/display-timing report, its figures formatted as
		// C's %g; a replay runs no application code.
		fmt.Fprintf(cmd.ErrOrStderr(), "Simulated time: %.6g seconds. \n\nThe simulation took %.6g seconds (after parsing and platform setup)\n0 seconds were actual computation of the application\n",
			res.Time, took.Seconds())
	}
	return nil
}

// tracingSettings applies the SimGrid settings that smpirun's -map,
// -analyze and -trace set: smpi/map prints the placement (--show-map),
// smpi/display-timing the replay's wall time after a single run; tracing and
// tracing/smpi write the replay to tracing/filename (SimGrid's default
// simgrid.trace), as a Paje trace, or as a TI trace under
// tracing/smpi/format:TI.
func tracingSettings(f *simulateFlags) error {
	on := func(key string) (bool, error) {
		v, ok := f.settings[key]
		if !ok {
			return false, nil
		}
		b, err := sim.ParseBool(key, v)
		if err != nil {
			return false, usageError{err}
		}
		return b, nil
	}
	show, err := on("smpi/map")
	if err != nil {
		return err
	}
	f.showMap = f.showMap || show
	if f.displayTiming, err = on("smpi/display-timing"); err != nil {
		return err
	}
	tracing, err := on("tracing")
	if err != nil {
		return err
	}
	smpi, err := on("tracing/smpi")
	if err != nil || !tracing || !smpi {
		return err
	}
	file := cmp.Or(f.settings["tracing/filename"], "simgrid.trace")
	switch format := f.settings["tracing/smpi/format"]; format {
	case "", "Paje":
		f.paje = cmp.Or(f.paje, file)
	case "TI":
		if f.timed == "" {
			f.timed, f.timedFormat = file, "ti"
		}
	default:
		return usagef("--cfg tracing/smpi/format:%s: want Paje or TI", format)
	}
	return nil
}

// printMap prints each rank's host if asked (--show-map), as SimGrid's
// smpi/map does.
func printMap(w io.Writer, f *simulateFlags, names []string) {
	if !f.showMap {
		return
	}
	for i, name := range names {
		fmt.Fprintf(w, "[rank %d] -> %s\n", i, name)
	}
}

// writeRunFiles writes the files a run's flags ask for after it: the
// timed trace (in format out; what the format cannot hold is said on
// stderr), the Paje trace and the figure (titled title).
func writeRunFiles(stderr io.Writer, f *simulateFlags, out format.Format, timed *sim.TimedTrace, res *sim.Result, names []string, title string) error {
	if f.timed != "" {
		dropped, err := writeTrace(out, f.timed, timed.T, 0)
		if err != nil {
			return err
		}
		if dropped != "" {
			fmt.Fprintf(stderr, "warning: %s: %s\n", f.timed, dropped)
		}
	}
	if f.paje != "" {
		if err := fileio.WriteFile(f.paje, func(w io.Writer) error { return sim.WritePaje(w, timed.T, timed.Messages, names) }); err != nil {
			return err
		}
	}
	if f.svg != "" {
		return fileio.WriteFile(f.svg, func(w io.Writer) error { return report.RankTimes(w, res, title) })
	}
	return nil
}

// scales are the what-if factors of one run.
type scales struct{ bw, lat, speed float64 }

// machineRun is what one run needs from the flags: the platform, the
// machine with the ranks deployed, their hosts' names and the settings.
type machineRun struct {
	p     *platform.Platform
	m     *sim.Machine
	names []string
	cfg   sim.Config
	// rank0Speed is the speed of rank 0's host as the platform describes
	// it, before --speed and --speed-scale.
	rank0Speed float64
}

// simulateMachine loads the machine, scaled, and deploys np ranks on it.
func simulateMachine(f *simulateFlags, cfg sim.Config, given map[string]bool, np int, sc scales) (*machineRun, error) {
	p, err := simulatePlatform(f)
	if err != nil {
		return nil, err
	}
	hosts, err := simulateDeploy(p, f, np)
	if err != nil {
		return nil, err
	}
	var rank0Speed float64
	if len(hosts) > 0 {
		rank0Speed = hosts[0].Speed
	}
	if sc != (scales{1, 1, 1}) {
		if err := p.Scale(sc.bw, sc.lat, sc.speed); err != nil {
			return nil, usageError{err}
		}
	}
	if err := sim.ApplyPlatformConfig(&cfg, p, given); err != nil {
		return nil, err
	}
	m, err := sim.FromPlatform(p, hosts)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.Name
	}
	return &machineRun{p, m, names, cfg, rank0Speed}, nil
}

// quietReplay prepares src's replay on machine (a --cluster description)
// as simulate would, with its defaults: the machine loaded and src's ranks
// deployed on it (round robin where it has fewer hosts), and src untimed if
// it is timed, without the note. reduce --accuracy and report replay so.
func quietReplay(path string, src trace.Source, machine string, analytic bool) (*machineRun, trace.Source, error) {
	sf := &simulateFlags{cluster: machine, analytic: analytic, traceRanks: src.NumRanks()}
	cfg, given, err := simulateConfig(sf)
	if err != nil {
		return nil, nil, err
	}
	mc, err := simulateMachine(sf, cfg, given, src.NumRanks(), scales{1, 1, 1})
	if err != nil {
		return nil, nil, err
	}
	if u, err := untimeForReplay(io.Discard, path, format.Format{}, src, mc); err != nil {
		return nil, nil, err
	} else if u != nil {
		src = u
	}
	return mc, src, nil
}

// untimeForReplay returns src untimed for the replay if it is timed, nil
// if it is not. A timed trace (OTF2, DUMPI, a timed .ktr) is made
// time-independent as SMPI measures real code: the time between MPI calls
// becomes computation at smpi/host-speed, the speed of the machine it was
// recorded on, dropping computations shorter than smpi/cpu-threshold.
// Without smpi/host-speed, that is the speed of rank 0's host as the
// platform describes it, so that the computation keeps its recorded
// durations there and --speed and --speed-scale change them; a note says
// so.
func untimeForReplay(w io.Writer, path string, tf format.Format, src trace.Source, mc *machineRun) (*trace.UntimedSource, error) {
	if tf.Name == "ti" {
		return nil, nil // never timed
	}
	timed, err := anyPartTimed(src)
	if err != nil {
		return nil, naming(path, err)
	}
	if !timed {
		return nil, nil
	}
	speed := mc.cfg.HostSpeed
	if speed == 0 {
		speed = mc.rank0Speed
		what := path + " is timed: the time between its MPI calls"
		if merged(src) != nil {
			what = "instances of " + path + " are timed: the time between their MPI calls"
		}
		fmt.Fprintf(w, "note: %s becomes computation at %g flop/s, the speed of host %s, where rank 0 runs (--cfg smpi/host-speed sets the speed of the machine it was recorded on)\n",
			what, speed, mc.names[0])
	}
	shortest := trace.Time(math.MaxInt64) // smpi/cpu-threshold:-1 drops all
	if th := mc.cfg.CPUThreshold; th < math.MaxInt64/1e12 {
		shortest = trace.FromSeconds(th)
	}
	return trace.UntimedAbove(src, speed, shortest), nil
}

// untimedJSON returns the speed a timed trace was untimed at and the
// length of its recorded run, or zeros.
func untimedJSON(u *trace.UntimedSource) (speed, recorded float64) {
	if u == nil {
		return 0, 0
	}
	d, _ := u.Recorded()
	return u.Speed(), d.Seconds()
}

// anyPartTimed reports whether src is timed (its first event is), or for
// merged instances, whether one of them is: untiming passes the untimed
// ones' events unchanged.
func anyPartTimed(src trace.Source) (bool, error) {
	m := merged(src)
	if m == nil {
		return firstTimed(src)
	}
	for _, p := range m.Parts() {
		if timed, err := anyPartTimed(p); timed || err != nil {
			return timed, err
		}
	}
	return false, nil
}

// merged returns the instances src reads (through its wrappers), or nil.
func merged(src trace.Source) *trace.Merged {
	for {
		switch s := src.(type) {
		case *trace.Merged:
			return s
		case interface{ Unwrap() trace.Source }:
			src = s.Unwrap()
		default:
			return nil
		}
	}
}

// printRecorded prints how long a timed trace's recorded run lasted, next
// to the simulated time: how well the platform and models describe the
// machine it ran on.
func printRecorded(w io.Writer, u *trace.UntimedSource, simulated float64) {
	if u == nil {
		return
	}
	if d, ok := u.Recorded(); ok && d > 0 {
		fmt.Fprintf(w, "recorded run %.9f s (the trace's, from MPI_Init's return to MPI_Finalize's entry, the span a replay simulates): simulated / recorded %.3f\n", d.Seconds(), simulated/d.Seconds())
		if mean := unreplayedMean(u); mean >= unreplayedNoted*d.Seconds() {
			fmt.Fprintf(w, "note: the ranks spent %.6f s each on average (%.1f%% of the recorded run) in calls a replay gives no time: probes, flushes with nothing to complete, calls replayed where they complete, communicators' creation (polling on oversubscribed cores?)\n",
				mean, 100*mean/d.Seconds())
		}
	}
}

// unreplayedNoted is the least share of the recorded run that the ranks'
// mean time in calls a replay gives no time must reach for simulate to
// say so: below it, it hardly explains a replay shorter than the run.
const unreplayedNoted = 0.01

// unreplayedMean returns the mean time (s) a rank of u spent in calls a
// replay gives no time (trace.UntimedSource.Unreplayed), 0 if none.
func unreplayedMean(u *trace.UntimedSource) float64 {
	if u == nil {
		return 0
	}
	if d, n := u.Unreplayed(); n > 0 {
		return d.Seconds() / float64(n)
	}
	return 0
}

func printSimulation(w io.Writer, path, plat string, cfg sim.Config, res *sim.Result, hosts []string, f *simulateFlags, untimed *trace.UntimedSource) error {
	model := cfg.Model
	if cfg.Analytic {
		model += " (analytic)"
	}
	if f.json {
		out := simulateJSON{Trace: path, Platform: plat, Model: model, SimulatedTime: res.Time, Actions: res.Actions,
			Messages: res.Messages, Bytes: res.Bytes, Unreceived: res.Unreceived, Solver: solverName(res, cfg), Engine: res.Engine, Handover: res.Handover, SkippedPeriods: res.Skipped, Work: workJSON(res.Work), TimedTrace: f.timed, PerfettoOutput: f.perfetto}
		out.UntimedAt, out.Recorded = untimedJSON(untimed)
		out.Notes = f.notes
		if f.replayed != nil {
			out.Recorded = 0 // instances recorded apart have no run in common
		} else {
			out.Unreplayed = unreplayedMean(untimed)
		}
		for i, r := range res.Ranks {
			out.Ranks = append(out.Ranks, simulateRankJS{i, hosts[i], r.Finish, r.Compute, r.Comm, r.Wait, r.Backoff, r.Tests, r.FailedTests, r.IO})
		}
		if e := res.Energy; e != nil {
			out.Energy = &simulateEnergy{Total: e.Total, Used: e.Used, Idle: e.Total - e.Used}
			for _, h := range e.Hosts {
				out.Energy.Hosts = append(out.Energy.Hosts, hostEnergyJSON(h))
			}
		}
		if e := res.LinkEnergy; e != nil {
			out.LinkEnergy = &linkEnergyJSON{Total: e.Total}
			for _, l := range e.Links {
				out.LinkEnergy.Links = append(out.LinkEnergy.Links, linkJoulesJSON(l))
			}
		}
		out.Instances = instanceResults(f.replayed, res)
		out.Polling = polling(res, cfg)
		return writeJSON(w, out)
	}
	defer printInstances(w, instanceResults(f.replayed, res), f.jobs)
	// SimGrid prints %f (6 decimals); more digits follow for comparisons.
	skipped := ""
	if res.Skipped > 0 {
		skipped = fmt.Sprintf(", %d repeated periods skipped", res.Skipped)
	}
	fmt.Fprintf(w, "Simulation time %f (%.9f s; %d actions, %d messages, %s model%s)\n", res.Time, res.Time, res.Actions, res.Messages, model, skipped)
	if f.replayed == nil {
		// Instances recorded apart have no run in common.
		printRecorded(w, untimed, res.Time)
	}
	if e := res.Energy; e != nil {
		// As SimGrid's host_energy plugin says it.
		fmt.Fprintf(w, "Total energy consumption: %f Joules (used hosts: %f Joules; unused/idle hosts: %f)\n", e.Total, e.Used, e.Total-e.Used)
	}
	if e := res.LinkEnergy; e != nil {
		fmt.Fprintf(w, "Total energy over all links: %f\n", e.Total) // SimGrid's words
	}
	var comp, comm, wait, io float64
	for _, r := range res.Ranks {
		comp += r.Compute
		comm += r.Comm
		wait += r.Wait
		io += r.IO
	}
	n := float64(len(res.Ranks))
	extra := ""
	if io > 0 {
		extra = fmt.Sprintf(", I/O %.6f s (as recorded)", io/n)
	}
	if b := res.Backoff(); b > 0 {
		extra += fmt.Sprintf(", test back-off %.6f s", b/n)
	}
	fmt.Fprintf(w, "mean per rank: compute %.6f s, communication %.6f s, blocked on late partners %.6f s%s\n", comp/n, comm/n, wait/n, extra)
	printPolling(w, polling(res, cfg))
	if f.perRank {
		fmt.Fprint(w, res.Summary())
		if res.Energy != nil {
			for _, h := range res.Energy.Hosts {
				fmt.Fprintf(w, "Energy consumption of host %s: %f Joules\n", h.Host, h.Joules)
			}
		}
		if res.LinkEnergy != nil {
			for _, l := range res.LinkEnergy.Links {
				fmt.Fprintf(w, "Energy consumption of link '%s': %f Joules\n", l.Link, l.Joules)
			}
		}
	}
	return nil
}

// simulateLogs reads smpirun's --log settings: the replay's verbose log is
// --verbose; SimGrid's other logs have no equivalent and are said to be
// ignored, so that an smpirun command line runs as it is.
func simulateLogs(stderr io.Writer, f *simulateFlags) {
	var ignored []string
	for _, l := range f.logs {
		switch l {
		case "smpi_replay.thresh:verbose", "smpi_replay.thr:verbose", "smpi_replay.thresh:debug":
			f.verbose = true
		default:
			ignored = append(ignored, l)
		}
	}
	if len(ignored) > 0 {
		fmt.Fprintf(stderr, "warning: SimGrid's logs are not reproduced: --log %s ignored\n", strings.Join(ignored, ", "))
	}
}

// simulateConfig returns the model settings of the flags, and the keys
// the --cfg flags set (which a platform's <config> does not override).
func simulateConfig(f *simulateFlags) (sim.Config, map[string]bool, error) {
	cfg := sim.DefaultConfig()
	given := map[string]bool{}
	f.settings = map[string]string{}
	for _, kv := range f.cfg {
		k, v, ok := strings.Cut(strings.TrimPrefix(kv, "--cfg="), ":")
		if !ok {
			return cfg, nil, usagef("--cfg %q: want key:value", kv)
		}
		if err := cfg.Set(k, v); err != nil {
			return cfg, nil, usageError{err}
		}
		given[k] = true
		f.settings[k] = v
	}
	if f.speed != "" {
		s, err := platform.ParseSpeed(f.speed)
		if err != nil || s <= 0 {
			return cfg, nil, usagef("--speed %q: want a speed such as 1Gf", f.speed)
		}
		cfg.Speed = s
	}
	cfg.Analytic = f.analytic
	return cfg, given, nil
}

func simulatePlatform(f *simulateFlags) (*platform.Platform, error) {
	switch {
	case f.platform != "" && f.cluster != "":
		return nil, usagef("give --platform or --cluster, not both")
	case f.platform != "":
		// The settings that shape the platform (the implicit loopback)
		// win over its <config>, as in SimGrid.
		return platform.LoadWith(f.platform, f.settings)
	case f.cluster != "":
		p, err := platform.ParseCluster(f.cluster)
		if err != nil {
			return nil, usageError{err}
		}
		return p, nil
	}
	return nil, usagef("simulate needs a machine: --platform FILE.xml or --cluster SPEC")
}

func simulateDeploy(p *platform.Platform, f *simulateFlags, np int) ([]*platform.Host, error) {
	mp, err := platform.ParseMapping(f.mapping)
	if err != nil {
		return nil, usageError{err}
	}
	var names []string
	switch {
	case f.jobs:
		if names, err = jobHosts(p, f.replayed); err != nil {
			return nil, err
		}
	case f.hostfile != "":
		if names, err = platform.ReadHostfileFor(p, f.hostfile); err != nil {
			return nil, err
		}
	}
	// Ranks beyond the trace's idle, as smpirun runs them; each must have
	// a slot of its own, so that a slip of -np does not make a replay
	// allocate for ranks that neither the trace nor the machine has.
	slots := len(names)
	if slots == 0 {
		slots = len(p.Hosts)
	}
	if np > f.traceRanks && np > slots {
		return nil, usagef("-np %d: the trace has %d ranks and the machine %d host slots; ranks beyond the trace's (idle) are allowed up to the slots", np, f.traceRanks, slots)
	}
	return platform.Deploy(p, names, np, mp)
}

// solverName says how the max-min sharing was solved, for --json.
func solverName(res *sim.Result, cfg sim.Config) string {
	switch {
	case cfg.Analytic:
		return "analytic"
	case cfg.NetworkFull:
		return "full" // every change re-solved whole (network/optim:Full)
	case res.Solver == sim.SolverSimGrid:
		return "simgrid"
	}
	return "incremental"
}

// pollingJSON says where SMPI's test back-off took time in a replay: a
// program that polls with MPI_Test (or Testany, Testsome) sleeps
// smpi/test times one more than the failed tests since the last success
// before each test, a sleep that grows with the polling, as SimGrid's
// does.
type pollingJSON struct {
	TestSleep   float64           `json:"smpi_test"`       // the setting, seconds
	Backoff     float64           `json:"backoff_seconds"` // over all ranks
	Share       float64           `json:"share"`           // of the ranks' summed time
	Tests       int64             `json:"tests"`
	FailedTests int64             `json:"failed_tests"`
	Ranks       []pollingRankJSON `json:"ranks"` // those that slept, the most first
	ranks       int               // in the replay
}

type pollingRankJSON struct {
	Rank        int     `json:"rank"`
	Backoff     float64 `json:"backoff_seconds"`
	Share       float64 `json:"share"` // of the rank's time
	Tests       int64   `json:"tests"`
	FailedTests int64   `json:"failed_tests"`
}

// polling returns where the test back-off took time, nil if nowhere.
func polling(res *sim.Result, cfg sim.Config) *pollingJSON {
	if res.Backoff() <= 0 {
		return nil
	}
	p := &pollingJSON{TestSleep: cfg.TestSleep, ranks: len(res.Ranks)}
	var total float64
	for i, r := range res.Ranks {
		t := r.Finish - r.Init
		total += t
		p.Backoff += r.Backoff
		p.Tests += r.Tests
		p.FailedTests += r.FailedTests
		if r.Backoff > 0 {
			p.Ranks = append(p.Ranks, pollingRankJSON{Rank: i, Backoff: r.Backoff, Share: r.Backoff / max(t, r.Backoff), Tests: r.Tests, FailedTests: r.FailedTests})
		}
	}
	p.Share = p.Backoff / max(total, p.Backoff)
	sort.SliceStable(p.Ranks, func(i, j int) bool { return p.Ranks[i].Backoff > p.Ranks[j].Backoff })
	return p
}

// printPolling says where the test back-off took time and how to replay
// without it.
func printPolling(w io.Writer, p *pollingJSON) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "test back-off: SMPI slept %.6f s on %d of %d ranks (%.1f%% of all ranks' time) before MPI_Test, smpi/test (%g s) times one more than the failed tests since the last success; %d tests, %d failed\n",
		p.Backoff, len(p.Ranks), p.ranks, 100*p.Share, p.TestSleep, p.Tests, p.FailedTests)
	const shown = 5
	for _, r := range p.Ranks[:min(shown, len(p.Ranks))] {
		fmt.Fprintf(w, "  rank %d: %.6f s, %.1f%% of its time, %d tests, %d failed\n", r.Rank, r.Backoff, 100*r.Share, r.Tests, r.FailedTests)
	}
	if len(p.Ranks) > shown {
		fmt.Fprintf(w, "  and %d more ranks\n", len(p.Ranks)-shown)
	}
	fmt.Fprintln(w, "  SimGrid 3.32 replays the polling alike; --cfg smpi/test:0 replays the tests without the back-off, and without the time the run spent in them (where a thread polled while other threads computed, as a task runtime's progression thread does, that replay ends far sooner than the run)")
}
