package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	_ "kairos/format/alawneh" // the seed paper authors' traces, to compare with their results
	"kairos/internal/fileio"
	"kairos/pattern"
	"kairos/report"
	"kairos/trace"
	"kairos/waitstate"
)

func init() {
	addVerb("patterns", newPatternsCmd)
	addVerb("phases", newPhasesCmd)
	addVerb("slow", newSlowCmd)
}

// detectPatterns opens a trace and runs pattern detection on it.
func detectPatterns(path string, m pattern.Method) (*pattern.Patterns, error) {
	src, err := openWhole(path)
	if err != nil {
		return nil, err
	}
	p, err := pattern.DetectMethod(src, m)
	if err != nil {
		return nil, naming(path, err)
	}
	return p, nil
}

// patternsJSON is the --json form of kairos patterns.
type patternsJSON struct {
	Ranks     int                      `json:"ranks"`
	Timed     bool                     `json:"timed"`
	Unmatched int                      `json:"unmatched"`
	Comm      []pattern.CommPattern    `json:"communication_patterns"`
	Process   []pattern.ProcessPattern `json:"process_patterns"`
	Sequence  []int32                  `json:"sequence"`
	Instances []pattern.Instance       `json:"instances,omitempty"`
}

// paperUsage is the help of --paper.
const paperUsage = "Alawneh et al.'s method as published: contexts end only at user functions and MPI_Waitall, phases count instances"

// method returns the detection method --paper chooses.
func method(paper bool) pattern.Method {
	if paper {
		return pattern.Paper
	}
	return pattern.Iterations
}

func newPatternsCmd() *cobra.Command {
	var (
		asJSON, process, sequence, paper bool
		out                              string
	)
	cmd := &cobra.Command{
		Use:   "patterns [flags] TRACE",
		Short: "Find the communication patterns of a trace and its sequence of pattern instances",
		Long: `Patterns finds the repeated communication of a trace (Alawneh et al.,
steps 1 and 2). Each rank's MPI calls are cut into contexts at every
MPI_Waitall and wherever the enclosing user function changes, then at
the iterations of its loops (a body of calls repeated at least three
times in a row, which a time step is even without user functions), and
each context is covered by maximal repeats (process patterns, found with
a suffix array); --paper keeps the paper's contexts as published.
Process-pattern instances that exchange messages or join the same
collectives are linked into communication-pattern instances;
each distinct set of process patterns is one pattern, CP1, CP2... in
order of first appearance. Instances are ordered by happened-before (Enter
time, or Lamport clocks in an untimed trace).

Calls are written S3 (send to rank 3), R1 (receive from rank 1), SR2/1
(sendrecv), or the collective's name; ranks are 0-based.

  --process    the process patterns of every rank (the paper's Table 2)
  --sequence   every instance in order, with its timing (Table 4)
  --json       everything, instances included`,
		Example: `  kairos patterns run.ktr
  kairos patterns --process run.ktr
  kairos patterns --sequence -o sequence.txt run.ktr
  kairos patterns --json run.ktr`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && (process || sequence) {
				return usagef("--json already holds the process patterns and the sequence")
			}
			p, err := detectPatterns(args[0], method(paper))
			if err != nil {
				return err
			}
			return writeOutput(cmd, out, func(w io.Writer) error {
				switch {
				case asJSON:
					return writeJSON(w, patternsJSON{Ranks: p.Ranks, Timed: p.Timed, Unmatched: p.Unmatched,
						Comm: p.Comm, Process: p.Process, Sequence: p.Symbols(), Instances: p.Sequence})
				case process:
					return p.WriteProcess(w)
				case sequence:
					return p.WriteSequence(w)
				}
				fmt.Fprintf(w, "%s: ", args[0])
				if err := p.WriteSummary(w); err != nil {
					return err
				}
				return p.WriteComm(w)
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the patterns, the process patterns and the instances as JSON")
	f.BoolVar(&process, "process", false, "print the process patterns of every rank")
	f.BoolVar(&sequence, "sequence", false, "print the sequence of pattern instances")
	f.BoolVar(&paper, "paper", false, paperUsage)
	f.StringVarP(&out, "output", "o", "-", "write to this file instead of standard output")
	return cmd
}

// segmentFlags are the pattern and segmentation options phases and slow
// share.
type segmentFlags struct {
	criterion string
	depth     int
	minLength int
	phases    int
	paper     bool
	cmd       *cobra.Command
}

func (s *segmentFlags) add(cmd *cobra.Command) {
	d := pattern.DefaultSegmentOptions()
	s.cmd = cmd
	f := cmd.Flags()
	f.StringVar(&s.criterion, "criterion", "", "model selection that decides a split: aic or bic (default: bic; aic with --paper)")
	f.IntVar(&s.depth, "depth", -1, "maximum depth of the segmentation tree, the root at 0 (-1: 3 with --paper, no limit otherwise)")
	f.IntVar(&s.minLength, "min-length", d.MinLength, "do not split segments shorter than this")
	f.IntVar(&s.phases, "phases", pattern.DefaultMaxPhases, "at most this many phases, splitting the segment that removes the most entropy first (0: every split the criterion allows, breadth first, as --paper does)")
	f.BoolVar(&s.paper, "paper", false, paperUsage)
}

func (s *segmentFlags) options() (pattern.SegmentOptions, error) {
	o := method(s.paper).SegmentOptions()
	if s.criterion != "" {
		c, err := pattern.ParseCriterion(s.criterion)
		if err != nil {
			return o, usagef("--criterion: %v", err)
		}
		o.Criterion = c
	}
	if s.depth < -1 {
		return o, usagef("--depth must be at least 0 (or -1), got %d", s.depth)
	}
	if s.depth >= 0 {
		o.MaxDepth = s.depth
	}
	if s.minLength < 2 {
		return o, usagef("--min-length must be at least 2, got %d", s.minLength)
	}
	o.MinLength = s.minLength
	if s.phases < 0 {
		return o, usagef("--phases must be at least 0, got %d", s.phases)
	}
	if !s.paper || s.cmd.Flags().Changed("phases") {
		o.MaxPhases = s.phases
	}
	return o, nil
}

// analyse detects the patterns of src, the trace at path, and runs the
// remaining steps.
func analyse(path string, src trace.Source, opt pattern.Options) (*pattern.Analysis, error) {
	p, err := pattern.DetectMethod(src, opt.Method)
	if err != nil {
		return nil, naming(path, err)
	}
	a, err := pattern.AnalyzePatterns(p, opt)
	if err != nil {
		return nil, naming(path, err)
	}
	return a, nil
}

// phasesJSON is the --json form of kairos phases.
type phasesJSON struct {
	Method    string            `json:"method"`
	Criterion string            `json:"criterion"`
	MaxDepth  int               `json:"max_depth"`
	MinLength int               `json:"min_length"`
	MaxPhases int               `json:"max_phases"`
	Length    int               `json:"length"`
	Weighted  bool              `json:"weighted"` // instances weigh by time (pattern.Analysis.Weights)
	Segments  []pattern.Segment `json:"segments"`
	Phases    []pattern.Phase   `json:"phases"`
}

func newPhasesCmd() *cobra.Command {
	var (
		sf      segmentFlags
		asJSON  bool
		out     string
		curve   string
		segment int
	)
	cmd := &cobra.Command{
		Use:   "phases [flags] TRACE",
		Short: "Segment a trace's pattern sequence into execution phases",
		Long: `Phases splits the sequence of pattern instances (see kairos patterns)
recursively at the point of maximum Jensen-Shannon divergence, while the
segmentation strength s of the chosen criterion is positive (AIC:
s = (N·D − K)/K, the default; BIC: s = (2N·D − K ln N)/(K ln N)), the
tree is shallower than --depth and the segment at least --min-length
long. Entropies use natural logarithms. In a timed trace each instance
weighs its share of the run's time (the time from its start to the next
instance's, or to its own finish if later), so that a benchmark of one
long instance is a phase beside one of thousands of short ones; N stays
the number of instances (--paper counts instances, as published). It
prints the segmentation tree and the phases (its leaves) with the time
they cover, the user functions they run in and, in a timed trace, their
slow instances (see kairos slow).

  --curve FILE   writes the D_JS curve of segment --segment (S0, the whole
                 sequence, by default) as CSV: position, D_JS`,
		Example: `  kairos phases run.ktr
  kairos phases --criterion bic --depth 6 run.ktr
  kairos phases --curve djs.csv --segment 2 run.ktr
  kairos phases --paper shared/traces/alawneh/smg2000-4p   # the paper's method, its Table 10`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			so, err := sf.options()
			if err != nil {
				return err
			}
			if segment < 0 {
				return usagef("--segment must be at least 0, got %d", segment)
			}
			src, err := openWhole(args[0])
			if err != nil {
				return err
			}
			a, err := analyse(args[0], src, pattern.Options{Method: method(sf.paper), Segment: so, Cutoff: pattern.DefaultCutoff})
			if err != nil {
				return err
			}
			if curve != "" {
				if segment >= len(a.Segments) {
					return usagef("--segment %d: the tree has segments S0..S%d", segment, len(a.Segments)-1)
				}
				if err := writeOutput(cmd, curve, func(w io.Writer) error { return a.WriteCurve(w, segment) }); err != nil {
					return err
				}
			}
			return writeOutput(cmd, out, func(w io.Writer) error {
				if asJSON {
					return writeJSON(w, phasesJSON{Method: a.Method.String(), Criterion: so.Criterion.String(), MaxDepth: so.MaxDepth, MinLength: so.MinLength,
						MaxPhases: so.MaxPhases, Length: len(a.Sequence), Weighted: a.Weights != nil, Segments: a.Segments, Phases: a.Phases})
				}
				if err := a.WriteSegments(w); err != nil {
					return err
				}
				fmt.Fprintln(w)
				return a.WritePhases(w)
			})
		},
	}
	sf.add(cmd)
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the segmentation tree and the phases as JSON")
	f.StringVar(&curve, "curve", "", "write the D_JS curve of a segment to this CSV file (\"-\": standard output)")
	f.IntVar(&segment, "segment", 0, "the segment whose curve --curve writes")
	f.StringVarP(&out, "output", "o", "-", "write to this file instead of standard output")
	return cmd
}

// slowJSON is the --json form of kairos slow: the root causes of
// waiting first, then the paper's slow instances.
type slowJSON struct {
	RootCauses *waitstate.Analysis `json:"root_causes"`
	Cutoff     float64             `json:"cutoff"`
	Phases     []pattern.Phase     `json:"phases"`
	Slow       []pattern.Slow      `json:"slow"`
}

// rootCauses finds the wait states of src, the timed trace at path, and
// their root causes.
func rootCauses(path string, src trace.Source) (*waitstate.Analysis, error) {
	a, err := waitstate.Analyze(src, waitstate.Options{})
	if err != nil {
		return nil, naming(path, err)
	}
	return a, nil
}

func newSlowCmd() *cobra.Command {
	var (
		sf                      segmentFlags
		asJSON, summary, causes bool
		out, svg, machine       string
		z                       float64
		top                     int
	)
	cmd := &cobra.Command{
		Use:   "slow [flags] TRACE",
		Short: "Find abnormally slow pattern instances, who was late, and which to inspect first",
		Long: `Slow compares every communication-pattern instance with the other
instances of its pattern that move the same number of bytes, over the
whole trace: an instance is slow when its modified Z-score
M = 0.6745 (x − median)/MAD is above --z (3.5). Medians are lower medians
(the element ⌊(n−1)/2⌋ of the sorted sample); when MAD is 0, M is
(x − median)/(1.253314 · mean absolute deviation), and 0 when all
durations are equal. The duration of an instance runs from its first
call's entry to its last call's completion (non-blocking calls end at the
Wait or Waitall that completes them).

For each slow instance: its phase and place in it (i), processes (np),
events (ne), bytes, duration, the group's median and the duration where M
reaches --z (threshold), all in µs; the last process to start (PLS) and
to finish (PLF); whether the last process to start was a late process in
a collective, else a late sender (it sends in the instance), else a late
receiver; and its inspection
affinity (IA): AHP over the phase's slow instances with severity
(duration ÷ bytes) and complexity (processes × events), High above 60°,
Low below 30°. A time-independent trace (SimGrid's TI, an untimed .ktr)
has no times of its own: its replay on --machine, SimGrid's model on a
crossbar cluster (kairos simulate --timed-trace), is analysed instead, and
a note says so, as kairos report does.

The last process to start is often a victim, late because it waited for
another. The root causes of waiting follow every wait state back to the
delay that caused it, as Scalasca's root-cause analysis does (Böhme et
al.): wait states (late sender, late receiver, wait at N×N, barrier and
finalize, late broadcast, early reduce, early scan) are charged to the
excess time of the rank they waited for since the two last synchronized
(its delay), by activity (computation or MPI call, in its region), and
waiting that a wait state caused in turn is passed back along the chain
to the delay at its start. Causes are ranked by the waiting they cost
over all ranks: directly, at the next synchronization, or propagated.

  --summary   a short story instead: the root causes of waiting first,
              then the most frequent patterns, the phases, the slow
              instances by kind of lateness, the ranks most often last to
              start, and the --top slow instances to inspect first (High
              affinity first, the most time lost first within each: a
              large M says an instance is unusual, not that it costs)
  --causes    only the root causes of waiting: the wait states by kind,
              the --top causes with their direct and propagated costs,
              the ranks that waited and caused most, and the critical
              path with each activity's critical-path imbalance
  --json      the root causes of waiting, the phases and the slow
              instances`,
		Example: `  kairos slow run.ktr
  kairos slow --z 5 --depth 6 run.ktr
  kairos slow --json -o slow.json run.ktr
  kairos slow --summary --top 10 run.ktr
  kairos slow --causes run.ktr
  kairos slow shared/traces/alawneh/smg2000-4p   # the paper's authors' own trace`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			so, err := sf.options()
			if err != nil {
				return err
			}
			if !(z > 0) {
				return usagef("--z must be positive, got %g", z)
			}
			if top < 1 {
				return usagef("--top must be at least 1, got %d", top)
			}
			if asJSON && summary {
				return usagef("--json and --summary cannot be combined")
			}
			if causes && (asJSON || summary || svg != "") {
				return usagef("--causes cannot be combined with --json, --summary or --svg")
			}
			src, err := openWhole(args[0])
			if err != nil {
				return err
			}
			// Read twice or more (patterns, wait states): an archive
			// decodes faster copied.
			src = inMemory(src)
			if pattern.Untimed(src) {
				// As the report: the instances and waits of its replay.
				if src, err = replayedRun(cmd.ErrOrStderr(), args[0], src, machine); err != nil {
					return err
				}
			} else if machine != "" {
				return usagef("--machine %s: %s is timed, and slow analyses its recorded times (kairos simulate --timed-trace writes its replay on a machine)", machine, args[0])
			}
			if causes {
				rc, err := rootCauses(args[0], src)
				if err != nil {
					return err
				}
				return writeOutput(cmd, out, func(w io.Writer) error { return rc.WriteReport(w, top) })
			}
			a, err := analyse(args[0], src, pattern.Options{Method: method(sf.paper), Segment: so, Cutoff: z})
			if err != nil {
				return err
			}
			if !a.Timed {
				return fmt.Errorf("%s: %w", args[0], pattern.ErrUntimed)
			}
			if svg != "" {
				if err := fileio.WriteFile(svg, func(w io.Writer) error { return report.SlowInstances(w, a, args[0], top) }); err != nil {
					return err
				}
			}
			var rc *waitstate.Analysis
			if asJSON || summary {
				if rc, err = rootCauses(args[0], src); err != nil {
					return err
				}
			}
			return writeOutput(cmd, out, func(w io.Writer) error {
				switch {
				case asJSON:
					return writeJSON(w, slowJSON{RootCauses: rc, Cutoff: z, Phases: a.Phases, Slow: a.Slow})
				case summary:
					if err := rc.WriteSummary(w, top); err != nil {
						return err
					}
					fmt.Fprintln(w)
					return a.WriteStory(w, top)
				}
				return a.WriteSlow(w)
			})
		},
	}
	sf.add(cmd)
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the root causes of waiting, the phases and the slow instances as JSON")
	f.Float64Var(&z, "z", pattern.DefaultCutoff, "modified Z-score above which an instance is slow")
	f.BoolVar(&summary, "summary", false, "print a short story of the trace, the root causes of waiting first, instead of every slow instance")
	f.BoolVar(&causes, "causes", false, "print only the root causes of waiting: wait states, delay costs, critical path")
	f.IntVar(&top, "top", 5, "with --summary and --causes: how many causes, patterns, ranks and slow instances to name (with --svg: patterns to draw)")
	f.StringVar(&svg, "svg", "", "also draw the durations of the --top most frequent patterns' instances along the sequence, the slow ones marked, as SVG in this file")
	f.StringVarP(&out, "output", "o", "-", "write to this file instead of standard output")
	f.StringVar(&machine, "machine", "", `for a time-independent trace, the crossbar cluster whose replay is analysed (default "N x 1Gf,125MBps,50us")`)
	return cmd
}

// replayedRun returns the timed trace of src's replay on machine (N hosts
// of 1 Gf, 125 MBps and 50 us if ""), and says so on w.
func replayedRun(w io.Writer, path string, src trace.Source, machine string) (trace.Source, error) {
	if machine == "" {
		machine = fmt.Sprintf("%dx1Gf,125MBps,50us", src.NumRanks())
	}
	fmt.Fprintf(w, "note: %s has no timestamps: its replay on %s (SimGrid's model) is analysed (--machine sets the machine)\n", path, machine)
	_, run, err := simulateRun(path, src, machine, false, true)
	if err != nil {
		return nil, err
	}
	return run, nil
}
