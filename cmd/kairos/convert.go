package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"kairos/format"
	"kairos/format/goal"
	"kairos/format/ti"
	"kairos/prsd"
	"kairos/trace"
)

func init() { addVerb("convert", newConvertCmd) }

func newConvertCmd() *cobra.Command {
	var to, speed, output string
	var shortest float64
	cmd := &cobra.Command{
		Use:   "convert [flags] IN OUT",
		Short: "Convert a trace from any readable format to any writable one",
		Long: `Convert reads IN in any format Kairos reads and writes OUT in the format
its name ends with (.ktr, .ti, .txt, ...; .gz and .zst compress) or that
--to names. OUT is written atomically; "-" is standard output, in the
format --to names (a TI trace as one stream). OUT may also be given as
-o OUT, as the other verbs take their output.

A TI trace is one file if OUT ends in .ti, else a description OUT (made
in its directory, which is created if need be) and a file per rank in
OUT_files/, which it names relative to its own directory: run "smpirun
-replay" from that directory, as SimGrid reads them from its working
directory (every Kairos verb reads them from anywhere).

An OTF2 archive (OUT ending in .otf2, its anchor file: NAME.def and the
directory NAME are written beside it) opens in Vampir and Scalasca. OTF2
records when every call happens: it is written of a timed trace only (an
OTF2, DUMPI or timed .ktr trace, or "kairos simulate --timed-trace" of a
time-independent one), its computations being the time between calls.

--speed FLOPS turns a timed trace into a time-independent one on the way:
the time between MPI calls (and inside local calls such as MPI_Wtime)
becomes compute events of time x FLOPS flops, and timestamps are dropped.
FLOPS is a number of flop/s, optionally with a SimGrid-style suffix
(100Mf, 1.5Gf, 2e9). Computations shorter than --min-compute (1e-6 s,
SimGrid's smpi/cpu-threshold, which its tracer and "kairos simulate" of a
timed trace apply too) are dropped; 0 keeps them all, so that "kairos
convert --speed S" then "kairos simulate" gives the time of "kairos simulate
--cfg smpi/host-speed:S" on the timed trace (with smpi/cpu-threshold set
alike). Converting a timed trace to a time-independent
format without --speed loses the computation between calls; convert says
so.

A GOAL schedule (.goal, LogGOPSim's input: run its txt2bin on it) has
times in nanoseconds: computations are timed at --speed (default 1Gf, one
nanosecond per flop), and collectives become the point-to-point
algorithms LogGOPSim's Schedgen uses.`,
		Example: `  kairos convert run.ti run.ktr
  kairos convert run.ktr run-ti/index.txt
  kairos convert --speed 1Gf timed.ktr replayable.ti
  kairos convert --speed 2Gf run.ti run.goal
  kairos convert run.dumpi/ out/traces.otf2`,
		Args: func(cmd *cobra.Command, args []string) error {
			want, with := 2, ""
			if cmd.Flags().Changed("output") {
				want, with = 1, " besides -o"
			}
			if len(args) != want {
				return usagef("kairos convert takes IN and OUT, or IN and -o OUT: got %d argument(s)%s", len(args), with)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], output
			if len(args) == 2 {
				out = args[1]
			}
			f, err := format.ForOutput(out, to)
			if err != nil {
				return usagef("%v", err)
			}
			var flops float64
			if speed != "" {
				if flops, err = parseSpeed(speed); err != nil {
					return usagef("--speed: %v", err)
				}
			}
			if !(shortest >= 0) || math.IsInf(shortest, 0) {
				return usagef("--min-compute must be a finite number of seconds, 0 or more, got %g", shortest)
			}
			src, err := openTrace(in)
			if err != nil {
				return err
			}
			if flops > 0 {
				src = trace.UntimedAbove(src, flops, trace.FromSeconds(shortest))
			} else if timed, err := firstTimed(src); err != nil {
				return naming(in, err)
			} else if timed && (f.Name == "ti" || f.Name == "goal") {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s is timed; the time-independent output keeps no computation between calls (use --speed)\n", in)
			}
			if r, ok := src.(*prsd.Trace); ok && r.TimeError > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is a reduction: its computations and times read back within its time error (%g%%), and %s has them so\n",
					in, 100*r.TimeError, out)
			}
			if why := src.Meta().Attrs[trace.AttrNoReplay]; why != "" && (f.Name == "ti" || f.Name == "goal") {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: a replay of %s will not follow the run: %s\n", in, out, why)
			}
			dropped, err := writeTrace(f, out, src, flops)
			if err != nil {
				return naming("writing "+out, err)
			}
			if dropped != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s: %s\n", out, dropped)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "write OUT here, the input being the only argument")
	cmd.Flags().StringVar(&to, "to", "", "output format ("+format.WritableNames()+"); default: from OUT's extension")
	cmd.Flags().StringVar(&speed, "speed", "", "untime a timed trace at this many flop/s (e.g. 1Gf)")
	cmd.Flags().Float64Var(&shortest, "min-compute", 1e-6, "with --speed: drop computations shorter than this many seconds (0 keeps all)")
	return cmd
}

// writeTrace writes src to out in format f and says which events the
// format could not hold ("" if none, or if the format does not tell).
// A GOAL schedule times computations at flops flop/s (goal's default if
// 0).
func writeTrace(f format.Format, out string, src trace.Source, flops float64) (string, error) {
	switch f.Name {
	case "ti":
		st, err := ti.WriteFile(out, src, ti.WriteOptions{Layout: ti.LayoutFor(out)})
		return st.String(), err
	case "goal":
		return "", goal.WriteFile(out, src, goal.Options{Speed: flops})
	}
	return "", f.Write(out, src)
}

// naming prefixes err with what, unless the message already names it (as
// the readers' and writers' own errors do).
func naming(what string, err error) error {
	if strings.Contains(err.Error(), strings.TrimPrefix(what, "writing ")) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// flopRate is a flag holding a flop rate written as parseSpeed reads it.
type flopRate float64

func (r *flopRate) String() string { return strconv.FormatFloat(float64(*r), 'g', -1, 64) }

func (r *flopRate) Set(s string) error {
	v, err := parseSpeed(s)
	*r = flopRate(v)
	return err
}

func (r *flopRate) Type() string { return "speed" }

// parseSpeed reads a flop rate: a number with an optional k, M, G, T, P
// or E multiplier and an optional "f" (SimGrid's "1.5Gf").
func parseSpeed(s string) (float64, error) {
	num := strings.TrimSuffix(s, "f")
	mult := 1.0
	if n := len(num); n > 0 {
		if i := strings.IndexByte("kMGTPE", num[n-1]); i >= 0 {
			mult = math.Pow(1000, float64(i+1))
			num = num[:n-1]
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v*mult, 0) {
		return 0, fmt.Errorf("%q is not a positive flop rate (like 2e9 or 1.5Gf)", s)
	}
	return v * mult, nil
}

// firstTimed reports whether the first event of the first non-empty rank
// carries timestamps.
func firstTimed(src trace.Source) (bool, error) {
	for r := 0; r < src.NumRanks(); r++ {
		rd, err := src.OpenRank(r)
		if err != nil {
			return false, err
		}
		ok := rd.Next()
		timed := ok && rd.Event().HasTime
		err = rd.Err()
		rd.Close()
		if err != nil || ok {
			return timed, err
		}
	}
	return false, nil
}

// printSourceWarnings prints what a reader or writer noticed but
// tolerated (such as the TI reader's dropped unterminated last lines), if
// the source, or one it wraps or merges, keeps such notes.
func printSourceWarnings(w io.Writer, src trace.Source) {
	for src != nil {
		if m, ok := src.(interface{ Parts() []trace.Source }); ok {
			for _, p := range m.Parts() {
				printSourceWarnings(w, p)
			}
			return
		}
		if ws, ok := src.(interface{ Warnings() []string }); ok {
			for _, s := range ws.Warnings() {
				fmt.Fprintln(w, "warning:", s)
			}
			return
		}
		u, ok := src.(interface{ Unwrap() trace.Source })
		if !ok {
			return
		}
		src = u.Unwrap()
	}
}
