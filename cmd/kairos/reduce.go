package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"kairos/cluster"
	"kairos/format"
	"kairos/sim"
	"kairos/trace"
)

func init() { verbs = append(verbs, newReduceCmd) }

// reduceFlags are reduce's flags.
type reduceFlags struct {
	method, out, machine string
	k                    int
	tolerance            float64
	accuracy, json       bool
	exact, loops         bool
}

func newReduceCmd() *cobra.Command {
	f := &reduceFlags{}
	def := cluster.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "reduce [flags] TRACE",
		Short: "Cluster the ranks by behaviour and keep one trace per cluster",
		Long: `Reduce clusters the ranks of a trace by behaviour, from constant-size
signatures of each rank's events, and keeps one representative trace per
cluster: the trace tracers would need to collect at scale.

Methods (--method):
  callpath   Bahmani and Mueller's two levels (the default): main clusters of
             equal call-path signatures (each call's stack signature, times
             its sequence number mod 10 plus 1, XORed), split by the 64-bit
             parameter signature of their Table 1 (average count, relative
             destination and source, datatypes, communicators), average
             counts within --count-tolerance (5%) being the same
  reference  equal event sequences, every parameter kept (the exact,
             costly baseline)
  acurdion   ACURDION's single-step K-farthest clustering (--k, 9, raised to
             the number of distinct call paths) over its eleven signatures,
             normalised, in three importance groups
  acurdion2  ACURDION's double step: K-farthest over call paths, then within
             each over the other signatures

--loops prints each representative's calls folded into loops (ScalaTrace's
RSDs and power-RSDs, over which the call-path signature is taken), such as
"init1 1000×(100×(send1 recv1) barrier1) finalize1".

Representatives are the clusters' heads (their lowest rank for callpath and
reference). Signatures of averages can merge ranks whose calls differ: the
output counts such inexact members, and --exact splits their clusters until
every member's calls are its representative's. -o writes the reduced trace (.ktr): the representatives' events
and, for each, the ranklist of the ranks it stands for. Every verb reads it
as the whole trace, each member replaying its representative's events with
its point-to-point end-points moved by its offset (ScalaReplay's relative
end-points): kairos simulate reduced.ktr replays all ranks.

--accuracy replays the trace and its reduction on a crossbar cluster
(--machine, default N x 1Gf,125MBps,50us) with SimGrid's SMPI model and
prints ACC = 1 - |t - t'| / t, the papers' replay accuracy.`,
		Example: `  kairos reduce app.ti
  kairos reduce --method acurdion --k 9 -o app.reduced.ktr app.otf2
  kairos reduce --accuracy --json run.ktr`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReduce(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.method, "method", string(def.Method), "clustering method: callpath, reference, acurdion or acurdion2")
	fl.IntVar(&f.k, "k", def.K, "number of clusters of acurdion and acurdion2")
	fl.Float64Var(&f.tolerance, "count-tolerance", def.CountTolerance, "relative difference of average counts taken as equal (callpath)")
	fl.StringVarP(&f.out, "output", "o", "", "write the reduced trace (.ktr) to this file")
	fl.BoolVar(&f.loops, "loops", false, "print each representative's calls folded into loops")
	fl.BoolVar(&f.exact, "exact", false, "split the clusters until every member's calls are its representative's")
	fl.BoolVar(&f.accuracy, "accuracy", false, "replay the trace and its reduction and print the replay accuracy")
	fl.StringVar(&f.machine, "machine", "", `crossbar cluster of --accuracy (default "N x 1Gf,125MBps,50us")`)
	fl.BoolVar(&f.json, "json", false, "print the clusters as JSON")
	return cmd
}

// reduceJSON is the stable JSON form of a reduction.
type reduceJSON struct {
	Trace           string        `json:"trace"`
	Method          string        `json:"method"`
	Ranks           int           `json:"ranks"`
	MainClusters    int           `json:"main_clusters"`
	K               int           `json:"k,omitempty"`
	Representatives int           `json:"representatives"`
	Format          []string      `json:"differing_signatures"`
	Inexact         int           `json:"inexact_ranks"`
	Events          int64         `json:"events"`
	EventsKept      int64         `json:"events_kept"`
	Groups          []groupJSON   `json:"clusters"`
	Accuracy        *accuracyJSON `json:"accuracy,omitempty"`
}

type groupJSON struct {
	Rep      int32  `json:"representative"`
	Main     int    `json:"main_cluster"`
	Size     int    `json:"ranks"`
	Inexact  int    `json:"inexact_ranks"`
	Ranklist string `json:"ranklist"`
	CallPath string `json:"callpath_signature"`
	Param    string `json:"parameter_signature"`
	Loops    string `json:"loops,omitempty"`
}

// accuracyJSON is how well a reduction stands for its trace: the
// parameters its ranks replay (ACURDION's Table II) and the replay
// accuracy ACC = 1 - |t - t'| / t, unless the reduction does not replay.
type accuracyJSON struct {
	Matching cluster.Matching `json:"matching_percent"`
	Machine  string           `json:"machine"`
	Original float64          `json:"original_time"`
	Reduced  float64          `json:"reduced_time,omitempty"`
	ACC      float64          `json:"acc,omitempty"`
	Failure  string           `json:"replay_failure,omitempty"`
}

func runReduce(cmd *cobra.Command, path string, f *reduceFlags) error {
	opt := cluster.Options{Method: cluster.Method(f.method), K: f.k, CountTolerance: f.tolerance, Exact: f.exact}
	var outFormat format.Format
	if f.out != "" {
		var err error
		if outFormat, err = format.ForOutput(f.out, ""); err != nil || outFormat.Name != "ktr" {
			return usagef("-o %s: a reduced trace is written as .ktr, which keeps its clusters' ranklists", f.out)
		}
	}
	src, err := openTrace(path)
	if err != nil {
		return err
	}
	out, reduced, err := reduceTrace(path, src, opt, f)
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := outFormat.Write(f.out, reduced); err != nil {
			return naming("writing "+f.out, err)
		}
	}
	if f.json {
		err = writeJSON(cmd.OutOrStdout(), out)
	} else {
		err = writeReduceText(cmd.OutOrStdout(), out)
	}
	if err == nil && out.Accuracy != nil && out.Accuracy.Failure != "" {
		return errFailed
	}
	return err
}

// reduceTrace clusters src's ranks with opt and returns the reduction's
// summary (with the representatives' loops and the replay accuracy if f
// asks for them) and the reduced trace.
func reduceTrace(path string, src trace.Source, opt cluster.Options, f *reduceFlags) (*reduceJSON, trace.Source, error) {
	sigs, err := cluster.SignAll(src)
	if err != nil {
		return nil, nil, naming(path, err)
	}
	res, err := cluster.Cluster(sigs, opt)
	if err != nil {
		return nil, nil, usageError{err}
	}
	out := &reduceJSON{Trace: path, Method: string(res.Method), Ranks: res.Ranks, MainClusters: res.Main, K: res.K,
		Representatives: len(res.Groups), Format: res.Format, Inexact: res.Inexact()}
	for _, g := range res.Groups {
		s := sigs[g.Rep]
		out.Groups = append(out.Groups, groupJSON{g.Rep, g.Main + 1, len(g.Members), g.Inexact, cluster.NewRanklist(g.Members).String(),
			fmt.Sprintf("%016x", s.CallPath), fmt.Sprintf("%016x", s.Param), ""})
		out.EventsKept += int64(s.Events)
	}
	for _, s := range sigs {
		out.Events += int64(s.Events)
	}
	if f.loops {
		if err := representativeLoops(src, out.Groups); err != nil {
			return nil, nil, naming(path, err)
		}
	}
	reduced := cluster.Representatives(src, res)
	if f.accuracy {
		if out.Accuracy, err = replayAccuracy(path, src, reduced, sigs, res, f.machine); err != nil {
			return nil, nil, err
		}
	}
	return out, reduced, nil
}

// loopsWidth is about how much of a representative's folded calls reduce
// --loops prints.
const loopsWidth = 240

// representativeLoops sets each group's representative's calls folded
// into loops.
func representativeLoops(src trace.Source, groups []groupJSON) error {
	for i := range groups {
		rd, err := src.OpenRank(int(groups[i].Rep))
		if err != nil {
			return err
		}
		groups[i].Loops, err = cluster.Structure(rd, loopsWidth)
		rd.Close()
		if err != nil {
			return fmt.Errorf("rank %d: %w", groups[i].Rep, err)
		}
	}
	return nil
}

// replayAccuracy compares each rank's calls with those it replays from the
// reduction, then simulates the trace and the reduction, expanded, on a
// crossbar cluster and compares their times. A reduction that does not
// replay is said in Failure.
func replayAccuracy(path string, src, reduced trace.Source, sigs []cluster.Signatures, res *cluster.Result, machine string) (*accuracyJSON, error) {
	if machine == "" {
		machine = fmt.Sprintf("%dx1Gf,125MBps,50us", res.Ranks)
	}
	whole, err := cluster.Expand(reduced, res.Ranks, res.Groups)
	if err != nil {
		return nil, err
	}
	acc := &accuracyJSON{Machine: machine}
	if acc.Matching, err = cluster.Match(src, whole, sigs, res); err != nil {
		return nil, naming(path, err)
	}
	for i, s := range []trace.Source{src, whole} {
		sf := &simulateFlags{cluster: machine}
		cfg, given, err := simulateConfig(sf)
		if err != nil {
			return nil, err
		}
		mc, err := simulateMachine(sf, cfg, given, s.NumRanks(), scales{1, 1, 1})
		if err != nil {
			return nil, err
		}
		what := path
		if i == 1 {
			what += " reduced"
		}
		if u, err := untimeForReplay(io.Discard, what, format.Format{}, s, mc); err != nil {
			return nil, err
		} else if u != nil {
			s = u
		}
		r, err := sim.Run(s, mc.m, mc.cfg, nil)
		if err != nil && i == 1 {
			acc.Failure = strings.SplitN(err.Error(), "\n", 2)[0]
			if n := res.Inexact(); n > 0 {
				acc.Failure = fmt.Sprintf("%d ranks replay calls that are not theirs (--exact keeps every rank's): %s", n, acc.Failure)
			}
			return acc, nil
		}
		if err != nil {
			return nil, fmt.Errorf("replaying %s: %w", what, err)
		}
		if i == 0 {
			acc.Original = r.Time
		} else {
			acc.Reduced = r.Time
		}
	}
	if acc.Original > 0 {
		acc.ACC = 1 - math.Abs(acc.Original-acc.Reduced)/acc.Original
	}
	return acc, nil
}

func writeReduceText(w io.Writer, r *reduceJSON) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d ranks -> %s (%s", r.Trace, r.Ranks, count(r.Representatives, "representative"), r.Method)
	if r.K > 0 {
		fmt.Fprintf(&b, ", K = %d", r.K)
	}
	if r.Method == string(cluster.CallPathParam) || r.Method == string(cluster.Acurdion2) {
		fmt.Fprintf(&b, ": %s", count(r.MainClusters, "main cluster"))
	}
	b.WriteString(")\n")
	if len(r.Format) == 0 {
		b.WriteString("every rank has the same signatures\n")
	} else {
		fmt.Fprintf(&b, "signatures that differ across ranks: %s\n", strings.Join(r.Format, ", "))
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  rep\tmain\tranks\tinexact\tranklist\tcall path\tparameters")
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%s\t%s\t%s\n", g.Rep, g.Main, g.Size, g.Inexact, g.Ranklist, g.CallPath, g.Param)
	}
	tw.Flush()
	for _, g := range r.Groups {
		if g.Loops != "" {
			fmt.Fprintf(&b, "  rank %d: %s\n", g.Rep, g.Loops)
		}
	}
	if r.Inexact > 0 {
		fmt.Fprintf(&b, "%d ranks replay a representative whose calls differ from theirs (--exact splits their clusters)\n", r.Inexact)
	}
	fmt.Fprintf(&b, "events kept: %d of %d (%.1f%%)\n", r.EventsKept, r.Events, 100*float64(r.EventsKept)/math.Max(float64(r.Events), 1))
	if a := r.Accuracy; a != nil {
		m := a.Matching
		fmt.Fprintf(&b, "parameters replayed as recorded (ACURDION's Table II): count %.2f%%, loop %.2f%%, events %.2f%%, src %.2f%%, dest %.2f%%, tag %.2f%%\n",
			m.Count, m.Loop, m.Events, m.Src, m.Dest, m.Tag)
		if a.Failure != "" {
			fmt.Fprintf(&b, "replay on %s: %.9f s; the reduction does not replay: %s\n", a.Machine, a.Original, a.Failure)
		} else {
			fmt.Fprintf(&b, "replay on %s: %.9f s, reduced %.9f s: ACC = %.4f\n", a.Machine, a.Original, a.Reduced, a.ACC)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// count says n things, in the singular for one.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
