package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"kairos/check"
	"kairos/cluster"
	"kairos/format"
	"kairos/format/rsd"
	"kairos/internal/fileio"
	"kairos/prsd"
	"kairos/sim"
	"kairos/trace"
	"kairos/waitstate"
)

func init() { addVerb("reduce", newReduceCmd) }

// reduceFlags are reduce's flags.
type reduceFlags struct {
	method, out, machine  string
	k                     int
	tolerance, timeError  float64
	aggregate             float64
	plugins               []string
	table1, noFilter      bool
	histograms            bool
	accuracy, json, loops bool
	analytic              bool
	// original returns the trace's replay time on machine, with the
	// model analytic says, where the caller knows it (the report's
	// simulation, which it may wait for), 0 otherwise; nil or 0: --accuracy
	// replays the trace too.
	original func() float64
	// exactEvents keeps the times of the clusters kept as their events
	// exact (prsd.Options.ExactEvents): the report's, so that a real
	// program's reduction is not replayed a second time.
	exactEvents bool
	// skipWaiting leaves the wait states uncompared (the report's, which
	// analyses the trace's own).
	skipWaiting bool
	// keepWaits lowers the time error of a timed trace's reduction until
	// its wait states stay within it (--keep-wait-states).
	keepWaits bool
}

func newReduceCmd() *cobra.Command {
	f := &reduceFlags{}
	def := cluster.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "reduce [flags] TRACE",
		Short: "Cluster the ranks by behaviour and compress each cluster into one structure",
		Long: `Reduce clusters the ranks of a trace by behaviour, from signatures of
each rank's calls, and compresses each cluster into one structure of loops
(ScalaTrace's RSDs and power-RSDs) whose calls carry the ranklist of the
ranks that make them and their parameters per group of ranks: every rank
replays its own calls, so the reduction replays as the trace does, and K
bounds the number of structures, not the accuracy. Computations and times
are kept as statistics: each rank's mean per call, shared by ranks within
--time-error (1%), a time (a gap, a call's duration) only where ranks
differ by less than their noise, so that their clocks stay together;
instances that stray from the mean on a scale within the time error.
--time-histograms keeps a call's instances as their
distribution (ScalaTrace's histograms), not their order, where that
takes fewer bytes: in groups of values within the time error of each
other, each instance's group kept in order, each still within the time
error of its own, each group's sum kept; ranks that differ by a factor
read one histogram, each scaled to its own sum. A noisy loop's
structure then no longer grows with its iterations, nor its ranks' by
more than a byte or two a rank. A cluster whose calls do not fold into
loops of half their bytes (a real program's) is kept as its events, each
time and computation rounded to its most significant bits within half
the time error (a call's end as its distance from its start as rounded,
so that the ranks' clocks do not drift apart and wait states stay as
recorded); --time-error 0 keeps them exact.

Of a timed trace, whose wait states turn on who arrived first, the time
error is lowered (to a quarter, a sixteenth, then exact times) until no
kind of wait state of the reduction, nor its whole waiting, moves by
more than that share of the trace's waiting, as slow finds them; the
output says so. --keep-wait-states=false keeps the time error asked.

Methods (--method):
  callpath   Bahmani and Mueller's two levels (the default): main clusters of
             equal call paths, split into sub-clusters of equal parameter
             signatures (Table 1: average count, relative destination and
             source, datatypes, operations, communicators), average counts
             within --count-tolerance (5%) of the sub-cluster's average;
             past half as many sub-clusters as ranks (and more than --k),
             each main cluster stays whole (the filtering function, unless
             --no-filter)
  reference  equal call sequences with every parameter (the exact, costly
             baseline)
  acurdion   ACURDION's single-step K-farthest clustering (--k, 9) over its
             eleven signatures, normalised, in three importance groups
  acurdion2  ACURDION's double step: K-farthest over call paths, then
             within each over the other signatures, K clusters in all

Signatures are exact (no truncated average, no saturated count); --table1
compares the papers' 64-bit signatures instead, to see what they merge.
--plugin names user plug-ins whose parameters the signatures leave out:
cg (NAS CG's transpose partner, which the compressed trace also encodes
end-points relative to) and ft (NAS FT's split colour and key).

--aggregate-counts F records each alltoallv instance whose every count
lies within F (a fraction) of the instance's mean as that mean (seed 001's
averaged counts): a data-bound code's random counts, P² an instance, then
take one series whatever the ranks, each count read back within F of its
own. Off (0) by default: the reduction keeps every parameter.

-o writes the reduction (.rsd), after checking that every rank reads back
its calls and that it replays without deadlock and without errors other
than the trace's own (which it keeps, with a note); a reduction that would
not is refused with the reason, and no file is written. Every verb reads
it as the whole trace.

--loops prints each cluster head's calls folded into loops, such as
"init1 1000×(100×(send1 recv1) barrier1) finalize1". --accuracy compares
each rank's calls with those it reads back (ACURDION's Table II), for the
reduction as written (with -o or not) and for the cluster heads alone
(the papers' reduction, every member replaying its head's calls), then
replays the trace and the reduction on a crossbar cluster (--machine, default N x 1Gf,125MBps,50us)
with SimGrid's SMPI model and prints ACC = 1 - |t - t'| / t (a reduction
that reads back every event as recorded, times included, is not replayed
again: its replay is the trace's). Of a timed trace it compares the wait
states too (the waiting slow finds, and its share not traced to a delay),
which a reduction's times, within the time error, move. --analytic
replays with the contention-free model instead: alltoallv on hundreds of
ranks takes SMPI's model minutes, the analytic one seconds.`,
		Example: `  kairos reduce app.ti
  kairos reduce --method acurdion --k 9 -o app.rsd app.otf2
  kairos reduce --plugin cg --accuracy --json cg.ktr`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReduce(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.method, "method", string(def.Method), "clustering method: callpath, reference, acurdion or acurdion2")
	fl.IntVar(&f.k, "k", def.K, "number of clusters of acurdion and acurdion2")
	fl.Float64Var(&f.tolerance, "count-tolerance", def.CountTolerance, "relative difference of average counts taken as equal (callpath)")
	fl.StringSliceVar(&f.plugins, "plugin", nil, "user plug-ins: cg, ft")
	fl.BoolVar(&f.table1, "table1", false, "compare the papers' 64-bit signatures instead of exact ones")
	fl.BoolVar(&f.noFilter, "no-filter", false, "keep every sub-cluster (callpath), however many")
	fl.Float64Var(&f.aggregate, "aggregate-counts", 0, "record alltoallv instances whose counts lie within this fraction of their mean as the mean (0: off)")
	fl.Float64Var(&f.timeError, "time-error", prsd.DefaultOptions().TimeError, "relative error within which ranks share a timing statistic")
	fl.BoolVar(&f.keepWaits, "keep-wait-states", true, "lower the time error of a timed trace until no kind of wait state moves by more than that share of the waiting")
	fl.BoolVar(&f.histograms, "time-histograms", false, "keep computations and times as their distribution, not their order, where smaller (ScalaTrace's histograms)")
	fl.StringVarP(&f.out, "output", "o", "", "write the reduction (.rsd) to this file")
	fl.BoolVar(&f.loops, "loops", false, "print each cluster head's calls folded into loops")
	fl.BoolVar(&f.accuracy, "accuracy", false, "compare and replay the trace and its reduction and print the replay accuracy")
	fl.StringVar(&f.machine, "machine", "", `crossbar cluster of --accuracy (default "N x 1Gf,125MBps,50us")`)
	fl.BoolVar(&f.analytic, "analytic", false, "replay --accuracy with the contention-free analytic model (fast)")
	fl.BoolVar(&f.json, "json", false, "print the clusters as JSON")
	return cmd
}

// reduceJSON is the stable JSON form of a reduction.
type reduceJSON struct {
	encoded      []byte          // the reduction's file
	Trace        string          `json:"trace"`
	Method       string          `json:"method"`
	Ranks        int             `json:"ranks"`
	MainClusters int             `json:"main_clusters"`
	SubClusters  int             `json:"sub_clusters,omitempty"`
	K            int             `json:"k,omitempty"`
	Clusters     int             `json:"clusters"`
	Plugins      []string        `json:"plugins,omitempty"`
	Format       []string        `json:"differing_signatures"`
	Events       int64           `json:"events"`
	Compressed   compressedJSON  `json:"compressed"`
	Aggregated   *aggregatedJSON `json:"aggregated_counts,omitempty"`
	Groups       []groupJSON     `json:"clusters_list"`
	Accuracy     *accuracyJSON   `json:"accuracy,omitempty"`
}

// compressedJSON is the size of a reduction.
type compressedJSON struct {
	Bytes      int     `json:"bytes"`
	TimeError  float64 `json:"time_error"`
	Histograms bool    `json:"time_histograms,omitempty"`
	// AsEvents is how many clusters the file keeps as their events (their
	// calls did not fold into loops of half their bytes).
	AsEvents int `json:"clusters_as_events"`
	// EventsExact tells that those clusters keep their times exact
	// (--time-error 0, or the report's reduction); else each is rounded
	// within half the time error.
	EventsExact bool `json:"events_exact"`
	// Lowered says why the time error is below the one asked, if it is.
	Lowered *loweredJSON `json:"lowered,omitempty"`
}

// loweredJSON says why a timed trace's reduction keeps its times within a
// smaller error than the one asked: at that one, a kind of wait state
// ("waiting": all of them) moved by more than that share of the trace's
// waiting.
type loweredJSON struct {
	Asked   float64 `json:"asked_time_error"`
	Kind    string  `json:"wait_state"`
	Moved   float64 `json:"moved_s"`
	Waiting float64 `json:"trace_waiting_s"`
}

// aggregatedJSON says which alltoallv instances --aggregate-counts
// recorded as their mean.
type aggregatedJSON struct {
	Tolerance  float64 `json:"tolerance"`
	Instances  int     `json:"instances"`
	Aggregated int     `json:"aggregated"`
	MaxError   float64 `json:"max_error"`
}

type groupJSON struct {
	Head     int32  `json:"head"`
	Main     int    `json:"main_cluster"`
	Size     int    `json:"ranks"`
	Subs     int    `json:"filtered_subclusters,omitempty"`
	Ranklist string `json:"ranklist"`
	CallPath string `json:"callpath_signature"`
	Param    string `json:"parameter_signature"`
	Loops    string `json:"loops,omitempty"`
}

// accuracyJSON is how well a reduction stands for its trace: the
// parameters its ranks read back (ACURDION's Table II), those the cluster
// heads alone would give (the papers' reduction), and the replay accuracy
// ACC = 1 - |t - t'| / t (1 where both replays take no time, 0 where only
// the trace's does).
type accuracyJSON struct {
	Matching     cluster.Matching  `json:"matching_percent"`
	Heads        *cluster.Matching `json:"heads_matching_percent,omitempty"`
	HeadsFailure string            `json:"heads_failure,omitempty"`
	Machine      string            `json:"machine"`
	Analytic     bool              `json:"analytic,omitempty"`
	Original     float64           `json:"original_time"`
	Reduced      float64           `json:"reduced_time"`
	// Same says the reduction reads back every event as recorded, times
	// included: its replay is the trace's, not run again.
	Same bool    `json:"same_as_trace,omitempty"`
	ACC  float64 `json:"acc"`
	// Waiting compares the wait states of a timed trace and of its
	// reduction, which ACC, a replay's length, does not see.
	Waiting *waitingJSON `json:"waiting,omitempty"`
}

// waitingJSON is the waiting of a timed trace and of its reduction, as
// slow finds it, and the part of each not traced to a delay (seconds):
// times read back within the time error move the ranks' arrivals, and
// with them the wait states, by up to that share of each call.
type waitingJSON struct {
	Trace           float64 `json:"trace_s"`
	TraceUntraced   float64 `json:"trace_not_traced_s"`
	Reduced         float64 `json:"reduced_s"`
	ReducedUntraced float64 `json:"reduced_not_traced_s"`
}

func runReduce(cmd *cobra.Command, path string, f *reduceFlags) error {
	opt := cluster.Options{Method: cluster.Method(f.method), K: f.k, CountTolerance: f.tolerance, Table1: f.table1, NoFilter: f.noFilter}
	if !(f.timeError >= 0 && f.timeError < 1) {
		return usagef("--time-error %g: the time error must be in [0, 1)", f.timeError)
	}
	if !(f.aggregate >= 0 && f.aggregate < 1) {
		return usagef("--aggregate-counts %g: the tolerance must be in [0, 1)", f.aggregate)
	}
	for _, p := range f.plugins {
		if !slices.Contains(cluster.Plugins, p) {
			return usagef("--plugin %s: unknown plug-in (known: %s)", p, strings.Join(cluster.Plugins, ", "))
		}
	}
	if f.out != "" {
		if of, err := format.ForOutput(f.out, ""); err != nil || of.Name != "rsd" {
			return usagef("-o %s: a reduction is written as .rsd (a compressed trace every verb reads)", f.out)
		}
	}
	src, err := openWhole(path)
	if err != nil {
		return err
	}
	// Read four times or more (signatures, compression, proof, replays):
	// an archive decodes faster copied.
	out, reduced, of, err := reduceTrace(path, inMemory(src), opt, f)
	if err != nil {
		return err
	}
	if f.out != "" {
		note, err := checkReduction(of, reduced)
		if err != nil {
			return fmt.Errorf("%s: not written: %w", f.out, err)
		}
		if note != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "note: %s: %s\n", path, note)
		}
		if err := fileio.WriteFile(f.out, func(w io.Writer) error { _, err := w.Write(out.encoded); return err }); err != nil {
			return naming("writing "+f.out, err)
		}
	}
	if f.json {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	return writeReduceText(cmd.OutOrStdout(), out)
}

// checkReduction proves a reduction of src before it is written: every
// rank reads back its own calls, and it passes check (SimGrid's protocol)
// or replays with exactly the errors of src itself (a real program's
// message never received, say), which it keeps as it keeps every call:
// the note returned says so. A reduction that deadlocks is never written.
// The read-back and the check run at once, on two cores, where src's
// ranks may be read at once (the check reads the clusters kept as their
// events from src too).
func checkReduction(src trace.Source, reduced *prsd.Trace) (note string, err error) {
	verified := make(chan error, 1)
	if trace.ConcurrentRanks(src) {
		go func() { verified <- prsd.Verify(src, reduced) }()
	} else if err := prsd.Verify(src, reduced); err != nil {
		return "", err
	} else {
		verified <- nil
	}
	opt := check.Options{Protocol: check.SimGrid, MaxProblems: 1, ErrorsOnly: true}
	rep, err := check.Check(reduced, opt)
	if verr := <-verified; verr != nil {
		return "", verr
	}
	if err != nil || rep.OK() {
		return "", err
	}
	orig, err := check.Check(src, opt)
	if err != nil {
		return "", err
	}
	if rep.Deadlock || orig.Errors != rep.Errors {
		return "", fmt.Errorf("the reduction does not pass check: %s", rep.Problems[0])
	}
	return fmt.Sprintf("the trace itself does not pass check (%s, the first: %s); the reduction, which keeps every rank's calls, has the same",
		count(orig.Errors, "error"), orig.Problems[0]), nil
}

// reduceTrace clusters src's ranks with opt and compresses each cluster;
// it returns the reduction's summary (with the heads' loops and the
// replay accuracy if f asks for them), the reduction, and the trace it
// reduces (src, its counts aggregated if f asks for it).
func reduceTrace(path string, src trace.Source, opt cluster.Options, f *reduceFlags) (*reduceJSON, *prsd.Trace, trace.Source, error) {
	sigs, err := cluster.SignAll(src, cluster.SignOptions{Plugins: f.plugins, Reference: opt.Method == cluster.Reference})
	if err != nil {
		return nil, nil, nil, naming(path, err)
	}
	res, err := cluster.Cluster(sigs, opt)
	if err != nil {
		return nil, nil, nil, usageError{err}
	}
	groups := make([][]int32, len(res.Groups))
	for i, g := range res.Groups {
		groups[i] = g.Members
	}
	of, agg, err := aggregated(src, f.aggregate)
	if err != nil {
		return nil, nil, nil, naming(path, err)
	}
	w := &waitFit{check: f.keepWaits && !f.skipWaiting}
	c, err := compressFitting(path, of, groups, f, w)
	if err != nil {
		return nil, nil, nil, err
	}
	reduced := c.reduced
	out := &reduceJSON{encoded: c.enc, Aggregated: agg, Trace: path, Method: string(res.Method), Ranks: res.Ranks, MainClusters: res.Main, SubClusters: res.Sub,
		K: res.K, Clusters: len(res.Groups), Plugins: f.plugins, Format: res.Format,
		Compressed: compressedJSON{Bytes: len(c.enc), TimeError: c.timeError, Histograms: f.histograms, AsEvents: c.asEvents,
			EventsExact: f.exactEvents || c.timeError == 0, Lowered: w.lowered}}
	for _, g := range res.Groups {
		s := sigs[g.Rep]
		out.Groups = append(out.Groups, groupJSON{g.Rep, g.Main + 1, len(g.Members), g.Subs, prsd.NewRanklist(g.Members).String(),
			fmt.Sprintf("%016x", s.CallPath), fmt.Sprintf("%016x", s.Param), ""})
	}
	for _, s := range sigs {
		out.Events += int64(s.Events)
	}
	if f.loops {
		if err := headLoops(src, out.Groups); err != nil {
			return nil, nil, nil, naming(path, err)
		}
	}
	if f.accuracy {
		same := c.same && f.aggregate == 0 // not where its counts were aggregated (of is src)
		if out.Accuracy, err = replayAccuracy(path, src, reduced, same, sigs, res, f, w); err != nil {
			return nil, nil, nil, err
		}
	}
	return out, reduced, of, nil
}

// compression is a reduction as written: its file, the reduction read
// back from it, the clusters it keeps as their events and its time error;
// same tells that it keeps them all, exactly: it reads back every event
// of the trace compressed, times included.
type compression struct {
	enc       []byte
	reduced   *prsd.Trace
	asEvents  int
	same      bool
	timeError float64
}

// compress builds src's reduction into groups at time error eps and reads
// it back: what is checked, matched and replayed is the reduction as
// written (a cluster kept as its events reads back with its times rounded
// as written, not as the loops it was not written as).
func compress(path string, src trace.Source, groups [][]int32, f *reduceFlags, eps float64) (*compression, error) {
	built, err := rsd.Build(src, groups, prsd.Options{TimeError: eps, Histograms: f.histograms, Plugins: cluster.CompressPlugins(f.plugins),
		ExactEvents: f.exactEvents})
	if err != nil {
		return nil, naming(path, err)
	}
	c := &compression{timeError: eps}
	if c.enc, c.asEvents, c.same, err = rsd.EncodeCounting(built); err != nil {
		return nil, naming(path, err)
	}
	built = nil // let go before the copy read back
	if c.reduced, err = rsd.Decode(c.enc); err != nil {
		return nil, fmt.Errorf("%s: the reduction does not read back: %w", path, err)
	}
	return c, nil
}

// waitFit keeps a timed trace's wait states through its reduction: the
// trace's analysis and the reduction's (nil for an untimed trace), and,
// where the time error had to be lowered, why.
type waitFit struct {
	check          bool // fit the time error to the wait states
	trace, reduced *waitstate.Analysis
	lowered        *loweredJSON
}

// compressFitting compresses src at f.timeError; where w.check and src is
// timed, and a kind of wait state (or the whole waiting) of the reduction
// moves by more than that share of the trace's waiting, it compresses
// again at a quarter of the time error, then a sixteenth, then with exact
// times, and says why in w.lowered.
func compressFitting(path string, src trace.Source, groups [][]int32, f *reduceFlags, w *waitFit) (*compression, error) {
	eps := f.timeError
	var traced func() (*waitstate.Analysis, error)
	if w.check && eps > 0 {
		traced = analyzing(path, src) // on a core of its own, beside the first compression
	}
	for {
		w.reduced = nil
		c, err := compress(path, src, groups, f, eps)
		if traced != nil && w.trace == nil {
			a, aerr := traced()
			if err == nil && aerr != nil {
				return nil, aerr
			}
			w.trace = a
		}
		if err != nil || w.trace == nil || eps == 0 {
			return c, err
		}
		if c.same {
			w.reduced = w.trace // the same events: the same wait states
			return c, nil
		}
		if w.reduced, err = waitstate.Analyze(c.reduced, waitstate.Options{}); err != nil {
			return nil, naming(path+" reduced", err)
		}
		what, by := waitstate.Moved(w.trace, w.reduced)
		// Waiting under 0.01% of the ranks' time is too little to move.
		if by <= f.timeError*max(w.trace.Waiting, 1e-4*w.trace.RankTime) {
			return c, nil
		}
		if w.lowered == nil {
			w.lowered = &loweredJSON{Asked: f.timeError, Kind: what, Moved: by, Waiting: w.trace.Waiting}
		}
		if eps /= 4; eps < f.timeError/16 {
			eps = 0
		}
	}
}

// analyzing analyses the wait states of src on a goroutine of its own and
// returns the function that waits for them.
func analyzing(path string, src trace.Source) func() (*waitstate.Analysis, error) {
	type analysed struct {
		a   *waitstate.Analysis
		err error
	}
	done := make(chan analysed, 1)
	go func() {
		a, err := analyzeTimed(path, src)
		done <- analysed{a, err}
	}()
	return func() (*waitstate.Analysis, error) {
		r := <-done
		return r.a, r.err
	}
}

// analyzeTimed analyses the wait states of src; nil for an untimed trace.
func analyzeTimed(path string, src trace.Source) (*waitstate.Analysis, error) {
	// An untimed trace, most often, is told by its first event, not by
	// reading it whole.
	timed, err := firstTimed(src)
	if err != nil {
		return nil, naming(path, err)
	}
	if !timed {
		return nil, nil
	}
	a, err := waitstate.Analyze(src, waitstate.Options{})
	if errors.Is(err, waitstate.ErrUntimed) {
		return nil, nil
	}
	if err != nil {
		return nil, naming(path, err)
	}
	return a, nil
}

// aggregated returns src with its alltoallv counts aggregated within tol
// (src itself if tol is 0), and what was aggregated.
func aggregated(src trace.Source, tol float64) (trace.Source, *aggregatedJSON, error) {
	if tol == 0 {
		return src, nil, nil
	}
	a, err := prsd.AggregateCounts(src, tol)
	if err != nil {
		return nil, nil, err
	}
	return a.Source(src), &aggregatedJSON{tol, a.Instances, a.Aggregated, a.MaxError}, nil
}

// loopsWidth is about how much of a head's folded calls reduce --loops
// prints.
const loopsWidth = 240

// headLoops sets each group's head's calls folded into loops.
func headLoops(src trace.Source, groups []groupJSON) error {
	for i := range groups {
		rd, err := src.OpenRank(int(groups[i].Head))
		if err != nil {
			return err
		}
		groups[i].Loops, err = cluster.Structure(rd, loopsWidth)
		rd.Close()
		if err != nil {
			return fmt.Errorf("rank %d: %w", groups[i].Head, err)
		}
	}
	return nil
}

// replayAccuracy compares each rank's calls with those it reads back from
// the reduction and from the cluster heads alone, then simulates the trace
// and the reduction on a crossbar cluster and compares their times; same
// tells that the reduction is known to read back every event of src as
// recorded (trace.SameReplay need not read them).
func replayAccuracy(path string, src trace.Source, reduced *prsd.Trace, same bool, sigs []cluster.Signatures, res *cluster.Result, f *reduceFlags, w *waitFit) (*accuracyJSON, error) {
	machine, analytic := f.machine, f.analytic
	if machine == "" {
		machine = fmt.Sprintf("%dx1Gf,125MBps,50us", res.Ranks)
	}
	acc := &accuracyJSON{Machine: machine, Analytic: analytic}
	own := traceTime(path, src, machine, analytic, f.original)
	var err error
	if acc.Matching, err = cluster.Match(src, reduced, sigs); err != nil {
		return nil, naming(path, err)
	}
	heads, err := cluster.Expand(cluster.Representatives(src, res), res.Ranks, res.Groups)
	if err == nil {
		var m cluster.Matching
		if m, err = cluster.Match(src, heads, sigs); err == nil {
			acc.Heads = &m
		}
	}
	if err != nil {
		acc.HeadsFailure = firstLine(err.Error())
	}
	acc.Same = same
	if !same {
		if acc.Same, err = trace.SameReplay(src, reduced); err != nil {
			return nil, naming(path, err)
		}
	}
	if !acc.Same {
		if acc.Reduced, err = replayTime(path+" reduced", reduced, machine, analytic); err != nil {
			if _, ownErr := own(); ownErr != nil {
				err = ownErr // the trace's own fault (a cut run's deadlock), not the reduction's
			}
			return nil, noAccuracy(err)
		}
	}
	if acc.Original, err = own(); err != nil {
		return nil, noAccuracy(err)
	}
	if acc.Same {
		acc.Reduced = acc.Original
	}
	switch {
	case acc.Original > 0:
		acc.ACC = 1 - math.Abs(acc.Original-acc.Reduced)/acc.Original
	case acc.Reduced == 0: // a run that takes no time, and so does its reduction's
		acc.ACC = 1
	}
	if !acc.Same && !f.skipWaiting {
		if acc.Waiting, err = compareWaiting(path, src, reduced, w); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// noAccuracy says that a replay's failure leaves no accuracy to give.
func noAccuracy(err error) error {
	return fmt.Errorf("no replay accuracy: %w", err)
}

// share returns x as a percentage of total, 0 where total is not positive.
func share(x, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return 100 * x / total
}

// compareWaiting compares the wait states of src and of its reduction
// (those w already has, else analysed now); nil for an untimed trace.
func compareWaiting(path string, src trace.Source, reduced trace.Source, w *waitFit) (*waitingJSON, error) {
	var err error
	if w.trace == nil {
		if w.trace, err = analyzeTimed(path, src); w.trace == nil {
			return nil, err
		}
	}
	if w.reduced == nil {
		if w.reduced, err = waitstate.Analyze(reduced, waitstate.Options{}); err != nil {
			return nil, naming(path+" reduced", err)
		}
	}
	return &waitingJSON{Trace: w.trace.Waiting, TraceUntraced: w.trace.Unexplained,
		Reduced: w.reduced.Waiting, ReducedUntraced: w.reduced.Unexplained}, nil
}

// traceTime returns the function that gives the trace's own replay time
// on machine: the caller's (original, waiting for it: the report
// simulates the trace meanwhile) where it has one, else a replay begun
// now on a goroutine of its own, beside the comparisons and the
// reduction's replay. Where the caller fails before asking for it, that
// replay runs to its end unread (the verb is exiting).
func traceTime(path string, src trace.Source, machine string, analytic bool, original func() float64) func() (float64, error) {
	if original != nil {
		return func() (float64, error) {
			if t := original(); t > 0 {
				return t, nil
			}
			return replayTime(path, src, machine, analytic)
		}
	}
	type replayed struct {
		t   float64
		err error
	}
	done := make(chan replayed, 1)
	go func() {
		t, err := replayTime(path, src, machine, analytic)
		done <- replayed{t, err}
	}()
	return func() (float64, error) {
		r := <-done
		return r.t, r.err
	}
}

// replayTime simulates s (untimed first if it is timed) on machine, with
// the analytic model if analytic.
func replayTime(what string, s trace.Source, machine string, analytic bool) (float64, error) {
	mc, s, err := quietReplay(what, s, machine, analytic)
	if err != nil {
		return 0, err
	}
	r, err := sim.Run(s, mc.m, mc.cfg, nil)
	if err != nil {
		return 0, fmt.Errorf("replaying %s: %w", what, err)
	}
	return r.Time, nil
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

func writeReduceText(w io.Writer, r *reduceJSON) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d ranks -> %s (%s", r.Trace, r.Ranks, count(r.Clusters, "cluster"), r.Method)
	if r.K > 0 {
		fmt.Fprintf(&b, ", K = %d", r.K)
	}
	if r.Method == string(cluster.CallPathParam) {
		fmt.Fprintf(&b, ": %s, %s", count(r.MainClusters, "main cluster"), count(r.SubClusters, "sub-cluster"))
	} else if r.Method == string(cluster.Acurdion2) {
		fmt.Fprintf(&b, ": %s", count(r.MainClusters, "call-path cluster"))
	}
	if len(r.Plugins) > 0 {
		fmt.Fprintf(&b, ", plug-ins %s", strings.Join(r.Plugins, ", "))
	}
	b.WriteString(")\n")
	if len(r.Format) == 0 {
		b.WriteString("every rank has the same signatures\n")
	} else {
		fmt.Fprintf(&b, "signatures that differ across ranks: %s\n", strings.Join(r.Format, ", "))
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	// The paper's 64-bit signatures, which may collide: the main clusters
	// are of exact call paths (but with --table1), so two of them may
	// show one call-path signature.
	fmt.Fprintln(tw, "  head\tmain\tranks\tranklist\tcall-path signature\tparameter signature")
	for _, g := range r.Groups {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%s\t%s\t%s\n", g.Head, g.Main, g.Size, g.Ranklist, g.CallPath, g.Param)
	}
	tw.Flush()
	for _, g := range r.Groups {
		if g.Subs > 0 {
			fmt.Fprintf(&b, "filtering: %d sub-clusters in all, more than half the ranks: main cluster %d keeps its %d together\n", r.SubClusters, g.Main, g.Subs)
		}
	}
	for _, g := range r.Groups {
		if g.Loops != "" {
			fmt.Fprintf(&b, "  rank %d: %s\n", g.Head, g.Loops)
		}
	}
	hist := ""
	if r.Compressed.Histograms {
		hist = " (noise as histograms)"
	}
	perEvent := ""
	if r.Events > 0 {
		perEvent = fmt.Sprintf(" (%.3g bytes an event)", float64(r.Compressed.Bytes)/float64(r.Events))
	}
	fmt.Fprintf(&b, "compressed: %s bytes for %s events%s; every rank's calls kept, times within %g%%%s\n",
		thousands(int64(r.Compressed.Bytes)), thousands(r.Events), perEvent, 100*r.Compressed.TimeError, hist)
	if l := r.Compressed.Lowered; l != nil {
		fmt.Fprintf(&b, "  lowered from the %g%% asked, at which the %s moved by %.3g s, %.2g%% of the trace's %.6g s of waiting (--keep-wait-states=false keeps %g%%)\n",
			100*l.Asked, l.Kind, l.Moved, share(l.Moved, l.Waiting), l.Waiting, 100*l.Asked)
	}
	if n := r.Compressed.AsEvents; n > 0 {
		times := "times exact"
		if !r.Compressed.EventsExact {
			times = fmt.Sprintf("each time and computation rounded within %g%%", 50*r.Compressed.TimeError)
		}
		fmt.Fprintf(&b, "  %d of the %s kept as their events, %s: their calls do not fold into loops of half their bytes\n", n, count(r.Clusters, "cluster"), times)
	}
	if g := r.Aggregated; g != nil {
		fmt.Fprintf(&b, "aggregated counts: %d of %d alltoallv instances recorded as their mean, every count within %g%% of its own (at most %.3g%%)\n",
			g.Aggregated, g.Instances, 100*g.Tolerance, 100*g.MaxError)
	}
	if a := r.Accuracy; a != nil {
		fmt.Fprintf(&b, "read back as recorded (ACURDION's Table II): %s\n", matchingText(a.Matching))
		if a.Heads != nil {
			fmt.Fprintf(&b, "the heads alone, every member replaying its head's calls: %s\n", matchingText(*a.Heads))
		} else {
			fmt.Fprintf(&b, "the heads alone cannot stand for their members: %s\n", a.HeadsFailure)
		}
		model := ""
		if a.Analytic {
			model = " (analytic)"
		}
		same := ""
		if a.Same {
			same = " (every event read back as recorded, times included: the same replay)"
		}
		fmt.Fprintf(&b, "replay on %s%s: %.9f s, reduced %.9f s%s: ACC = %.4f\n", a.Machine, model, a.Original, a.Reduced, same, a.ACC)
		if w := a.Waiting; w != nil {
			fmt.Fprintf(&b, "wait states (as slow finds them): %.6g s of waiting, %.1f%% not traced to a delay; reduced %.6g s, %.1f%%\n",
				w.Trace, share(w.TraceUntraced, w.Trace), w.Reduced, share(w.ReducedUntraced, w.Reduced))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func matchingText(m cluster.Matching) string {
	return fmt.Sprintf("count %.2f%%, loop %.2f%%, events %.2f%%, src %.2f%%, dest %.2f%%, tag %.2f%%",
		m.Count, m.Loop, m.Events, m.Src, m.Dest, m.Tag)
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// count says n things, in the singular for one.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
