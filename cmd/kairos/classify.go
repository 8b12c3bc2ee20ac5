package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"kairos/clock"
	"kairos/internal/fileio"
	"kairos/report"
	"kairos/trace"
)

func init() { addVerb("classify", newClassifyCmd) }

// modelFlags are the replay model's flags, shared by classify and
// predict.
type modelFlags struct {
	speed, protocol, table, intraTable string
	eagerLimit                         int64
	ranksPerNode, workers              int
	intraBW, intraLat, memcpy          float64
}

func (m *modelFlags) register(f *pflag.FlagSet) {
	f.StringVar(&m.speed, "speed", "", "flop rate turning a time-independent trace's volumes into time (e.g. 1Gf, 2.5e9)")
	f.StringVar(&m.protocol, "protocol", "eager", "point-to-point protocol: eager, or rendezvous from --eager-limit bytes")
	f.Int64Var(&m.eagerLimit, "eager-limit", clock.DefaultEagerLimit, "with --protocol rendezvous: smallest message sent by rendezvous, in bytes")
	f.StringVar(&m.table, "table", "", "ping-pong CSV (size in bytes, one-way time in us) for inter-node messages instead of Hockney's model")
	f.StringVar(&m.intraTable, "intra-table", "", "ping-pong CSV for messages within a node")
	f.IntVar(&m.ranksPerNode, "ranks-per-node", 1, "ranks per node (consecutive ranks share a node)")
	f.Float64Var(&m.intraBW, "intra-bw", clock.DefaultIntraBW, "bandwidth within a node, Gbit/s")
	f.Float64Var(&m.intraLat, "intra-lat", clock.DefaultIntraLat, "latency within a node, us")
	f.Float64Var(&m.memcpy, "memcpy-bw", clock.DefaultMemcpyGBs, "memory-copy bandwidth of eager sends, GB/s")
	f.IntVarP(&m.workers, "jobs", "j", 1, "split the configurations among this many concurrent replays")
}

// options turns the flags into replay options.
func (m *modelFlags) options() (clock.Options, error) {
	o := clock.DefaultOptions()
	if m.speed != "" {
		s, err := parseSpeed(m.speed)
		if err != nil {
			return o, usagef("--speed: %v", err)
		}
		o.Speed = s
	}
	switch m.protocol {
	case "eager":
	case "rendezvous":
		o.Protocol = clock.Rendezvous
	default:
		return o, usagef("--protocol must be eager or rendezvous, got %q", m.protocol)
	}
	if m.eagerLimit < 0 || m.ranksPerNode < 1 || m.workers < 1 || !(m.memcpy > 0) {
		return o, usagef("--eager-limit must not be negative, --ranks-per-node and -j must be at least 1, --memcpy-bw positive")
	}
	o.EagerLimit, o.RanksPerNode, o.Workers, o.MemcpyGBs = m.eagerLimit, m.ranksPerNode, m.workers, m.memcpy
	o.Intra = clock.Config{BW: m.intraBW, Lat: m.intraLat}
	if !o.Intra.Valid() {
		return o, usagef("--intra-bw must be positive and --intra-lat not negative")
	}
	var err error
	if o.Table, err = readTable(m.table); err != nil {
		return o, err
	}
	if o.IntraTable, err = readTable(m.intraTable); err != nil {
		return o, err
	}
	return o, nil
}

func readTable(path string) (*clock.Table, error) {
	if path == "" {
		return nil, nil
	}
	f, err := fileio.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return clock.ParseTable(f, path)
}

// replayErr adds the flag to use to a missing-speed error.
func replayErr(path string, err error) error {
	if errors.Is(err, clock.ErrNoSpeed) {
		// A flag is missing: bad usage (exit status 2), found in the trace.
		return usagef("%s: %w (the trace is time-independent: use --speed)", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// warnUnmatched says which messages of the trace at path the replay
// found no partner for: they took no part in it (a real program may end
// with a message it never receives).
func warnUnmatched(w io.Writer, path string, u *clock.UnmatchedError) {
	if u != nil {
		fmt.Fprintf(w, "warning: %s: %v\n(they take no part in the replay)\n", path, u)
	}
}

func newClassifyCmd() *cobra.Command {
	var (
		model          modelFlags
		extra          configFlags
		networks       []string
		custom         []string
		asJSON, curves bool
		asCSV          bool
		out, svg       string
		th             = clock.DefaultThresholds()
	)
	cmd := &cobra.Command{
		Use:   "classify [flags] TRACE...",
		Short: "Classify a trace as computation-, load-imbalance-, bandwidth-, latency- or communication-bound",
		Long: `Classify replays a trace once with a logical clock per rank for every network
configuration (Tong, Pakin, Lang and Yuan, IPDPS 2016), and says what bounds
the application on each interconnect.

For each interconnect (BW, L) it predicts the 21 configurations of the
paper's Table III: the latency set (BW, L/8)..(BW, 8L), the bandwidth set
(BW/8, L)..(8BW, L) and the joint set (BW/8, 8L)..(8BW, L/8). Each
prediction splits every rank's time into computation, wait, latency and
bandwidth time, counting only what computation does not overlap. Rules
C1-C5 then give the class (Table IV's names):

  Comp.     C1: computation >= 90% and the total time moves < 5% over the sets
  Imb.      C2: wait >= 25% and the wait moves < 5% over the sets
  BW        C3: communication >= 25%, moves < 5% over the latency set,
                and falls 2x from BW/2 to 2BW
  Latency   C4: communication >= 25%, moves < 5% over the bandwidth set,
                and falls 2x from 2L to L/2
  Comm.     C5: communication >= 25% and falls 2x from (BW/2, 2L) to (2BW, L/2)

With communication between 10% and 25%, the same tests give the
"-sensitive" classes Imb.-s, BW-s, Latency-s and Comm.-s (C2 then asks for
a 10% wait). Every threshold is a flag. Communication time is wait +
latency + bandwidth time; shares are of the ranks' summed time at (BW, L).

Interconnects: --network takes 1gbe (1 Gbit/s, 50 us), 10gbe (10 Gbit/s,
5 us) and qdr (InfiniBand QDR, 32 Gbit/s, 1.3 us), the paper's Table I;
--custom adds (BW, L) pairs in Gbit/s and microseconds. With --table and
neither flag, the interconnect is the table's own (its smallest message's
time and its slope).

Models: Hockney's alpha + n*beta, or a ping-pong table (--table) scaled to
each configuration; --ranks-per-node puts consecutive ranks on one node,
which talk at --intra-bw/--intra-lat; eager sends leave after a copy at
--memcpy-bw; collectives synchronise their members, then cost Thakur and
Gropp's model of each operation. A time-independent trace needs --speed; a
timed one keeps its computation gaps, every one of them, and counts the
time in non-blocking calls (isend, irecv) as computation (Tong et al.'s
Section III-D), where simulate and a TI trace drop gaps under the CPU
threshold and replay those calls: the TI trace and the OTF2 archive of one
run may classify differently.

Output: per interconnect the class, the shares and ratios that decided it
and the rules' outcomes, then a Table IV row. --curves adds the 21
predictions (time and the four counters summed over ranks); --csv prints
them as CSV instead (the data of the paper's Figures 4-7); --json prints
everything.
--bw/--lat, --config and --configs (as in "kairos predict") add other
configurations to the same replay, reported after the verdicts. Several
traces are classified one after the other and summed up in one Table IV
(--json then prints an array).`,
		Example: `  kairos classify --speed 1Gf run.ktr
  kairos classify --network 1gbe,qdr --custom hdr=200,0.6 --speed 2Gf run.ti
  kairos classify --table pingpong.csv --ranks-per-node 16 --curves timed.otf2
  kairos classify --speed 1Gf --csv -o curves.csv run.ktr
  kairos classify --speed 1Gf --json -o verdicts.json run.ktr
  kairos classify --speed 1Gf --config 200,0.6 --configs machines.txt run.ktr
  kairos classify --speed 1Gf --network 1gbe,10gbe,qdr amg8.ktr amg27.ktr amg216.ktr`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := model.options()
			if err != nil {
				return err
			}
			if err := checkThresholds(th); err != nil {
				return err
			}
			if asCSV && len(args) > 1 {
				return usagef("--csv prints the curves of one trace; give one trace or drop --csv")
			}
			if asCSV && asJSON {
				return usagef("--json and --csv cannot be combined")
			}
			ics, err := interconnects(cmd.Flags().Changed("network"), networks, custom, opt.Table)
			if err != nil {
				return err
			}
			if opt.Configs, err = extra.configs(cmd.ErrOrStderr()); err != nil {
				return err
			}
			cls := make([]*clock.Classification, len(args))
			for i, path := range args {
				src, err := openReplay(path)
				if err != nil {
					return err
				}
				if cls[i], err = clock.Classify(src, ics, opt, th); err != nil {
					return replayErr(path, err)
				}
				warnUnmatched(cmd.ErrOrStderr(), path, cls[i].Unmatched)
			}
			if svg != "" {
				if err := fileio.WriteFile(svg, func(w io.Writer) error { return report.Classes(w, args, cls) }); err != nil {
					return err
				}
			}
			return writeOutput(cmd, out, func(w io.Writer) error {
				switch {
				case asJSON:
					return writeClassificationsJSON(w, args, cls)
				case asCSV:
					return cls[0].WriteCSV(w)
				}
				for i, cl := range cls {
					if i > 0 {
						fmt.Fprintln(w)
					}
					if err := cl.WriteText(w, args[i], curves); err != nil {
						return err
					}
				}
				if len(cls) > 1 {
					fmt.Fprintln(w)
					return clock.WriteTableIV(w, args, cls)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	model.register(f)
	extra.register(f)
	f.StringSliceVar(&networks, "network", []string{"1gbe", "10gbe", "qdr"}, "interconnects of Table I: 1gbe, 10gbe, qdr")
	f.StringArrayVar(&custom, "custom", nil, "add an interconnect BW,L (Gbit/s, us), or NAME=BW,L; repeatable")
	f.Float64Var(&th.Comp, "comp-share", th.Comp, "C1: least computation share")
	f.Float64Var(&th.Wait, "wait-share", th.Wait, "C2: least wait share")
	f.Float64Var(&th.Comm, "comm-share", th.Comm, "C3-C5: least communication share")
	f.Float64Var(&th.CommSensitive, "sensitive-share", th.CommSensitive, "least communication (and wait) share of the -sensitive classes")
	f.Float64Var(&th.Insensitive, "insensitive", th.Insensitive, "largest relative change that counts as insensitive")
	f.Float64Var(&th.Factor, "factor", th.Factor, "least decrease of communication time over the ranges")
	f.BoolVar(&curves, "curves", false, "print the 21 predictions of every interconnect")
	f.BoolVar(&asCSV, "csv", false, "print the sensitivity curves (every configuration's time and counters) as CSV")
	f.BoolVar(&asJSON, "json", false, "print the verdicts, evidence and predictions as JSON")
	f.StringVarP(&out, "output", "o", "-", "write to this file instead of standard output")
	f.StringVar(&svg, "svg", "", "also draw, for each trace and interconnect, the predicted time split into computation, wait, latency and bandwidth, as SVG in this file")
	return cmd
}

// writeClassificationsJSON writes one trace's classification as an
// object, several as an array.
func writeClassificationsJSON(w io.Writer, names []string, cls []*clock.Classification) error {
	type named struct {
		Trace string `json:"trace"`
		*clock.Classification
	}
	if len(cls) == 1 {
		return writeJSON(w, named{names[0], cls[0]})
	}
	all := make([]named, len(cls))
	for i := range cls {
		all[i] = named{names[i], cls[i]}
	}
	return writeJSON(w, all)
}

// checkThresholds rejects thresholds that make no sense.
func checkThresholds(th clock.Thresholds) error {
	for _, s := range []float64{th.Comp, th.Wait, th.Comm, th.CommSensitive, th.Insensitive} {
		if !(s >= 0 && s <= 1) {
			return usagef("shares and --insensitive are fractions between 0 and 1 (0.25 is 25%%)")
		}
	}
	if th.CommSensitive > th.Comm {
		return usagef("--sensitive-share (%g) must not exceed --comm-share (%g)", th.CommSensitive, th.Comm)
	}
	if !(th.Factor >= 1) {
		return usagef("--factor must be at least 1, got %g", th.Factor)
	}
	return nil
}

// interconnects returns the interconnects the flags name.
func interconnects(named bool, networks, custom []string, table *clock.Table) ([]clock.Interconnect, error) {
	var ics []clock.Interconnect
	if named || len(custom) == 0 && table == nil {
		for _, n := range networks {
			ic, err := clock.ParseInterconnect(n)
			if err != nil || !isNamed(n) {
				return nil, usagef("--network: %q is not one of 1gbe, 10gbe, qdr (use --custom for a (BW, L) pair)", n)
			}
			ics = append(ics, ic)
		}
	}
	for _, c := range custom {
		ic, err := clock.ParseInterconnect(c)
		if err != nil {
			return nil, usagef("--custom: %v", err)
		}
		ics = append(ics, ic)
	}
	if len(ics) == 0 && table != nil {
		ics = append(ics, clock.Interconnect{Name: "table", Label: "table", Config: table.Base()})
	}
	if len(ics) == 0 {
		return nil, usagef("no interconnect: give --network or --custom")
	}
	return ics, nil
}

func isNamed(s string) bool {
	for _, ic := range clock.Interconnects {
		if strings.EqualFold(s, ic.Name) || strings.EqualFold(s, ic.Label) {
			return true
		}
	}
	return false
}

// classifyDemo classifies src on the three interconnects of Table I
// with the paper's defaults and speed flops/s, and writes the verdicts
// and a Table IV row to w under name. It is what "kairos demo" shows.
func classifyDemo(w io.Writer, src trace.Source, name string, speed float64) error {
	opt := clock.DefaultOptions()
	opt.Speed = speed
	cl, err := clock.Classify(src, clock.Interconnects, opt, clock.DefaultThresholds())
	if err != nil {
		return replayErr(name, err)
	}
	return cl.WriteText(w, name, false)
}
