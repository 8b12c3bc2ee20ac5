package main

import (
	"io"

	"github.com/spf13/cobra"

	"kairos/compare"
	"kairos/stats"
)

func init() { addVerb("compare", newCompareCmd) }

func newCompareCmd() *cobra.Command {
	var (
		asJSON bool
		out    string
		top    int
	)
	cmd := &cobra.Command{
		Use:   "compare [flags] BASELINE TRACE...",
		Short: "Set timed runs side by side: what takes more or less time, and where",
		Long: `Compare summarises two or more timed traces of one program and sets them
side by side, the first as the baseline: a run before and after a change,
at two scales, recorded on one machine and simulated on another (kairos
simulate --timed-trace writes the simulated run as a timed trace). It
answers what Cube's cube_diff, Scalasca's scaling analysis and Pipit's
multirun analysis answer.

For each run: its ranks and events, its time (the longest rank's), a
rank's mean time out of and in MPI calls, its efficiency (the baseline's
rank-seconds, run time times ranks, over the run's: the parallel
efficiency against the baseline where the ranks differ, the speed-up
where they do not) and its messages. Then the time a rank (the mean over
ranks, so that runs on different numbers of ranks compare) of each
activity (computation, each MPI function) and of each activity at each call
path of the program's functions (as kairos stats lists them; where every
run's trace names call paths, or else the runs whose traces name none,
whose time no call path of the others matches: the tracer's archive
beside a TI trace replayed into OTF2, which wraps each rank in "main"),
the largest changes between the baseline and the last run first, with
their ratio. --json gives every line, with each run's sum over ranks and least
and most loaded rank.

Each trace may be in any format Kairos reads; an untimed one (a TI
trace) is refused: replay it first.`,
		Example: `  kairos compare before.otf2 after.otf2
  kairos simulate --cluster 64x1Gf,1.25GBps,5us --timed-trace fast.ktr run.otf2
  kairos compare run.otf2 fast.ktr
  kairos compare --json --top 30 p16.ktr p32.ktr p64.ktr`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("%s takes two traces or more, got %d", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if top < 1 {
				return usagef("--top must be at least 1, got %d", top)
			}
			var sums []*stats.Stats
			for _, path := range args {
				src, err := openTrace(path)
				if err != nil {
					return err
				}
				s, err := stats.Collect(src, stats.DefaultTop)
				if err != nil {
					return naming(path, err)
				}
				sums = append(sums, s)
			}
			c, err := compare.Of(args, sums)
			if err != nil {
				return err
			}
			return writeOutput(cmd, out, func(w io.Writer) error {
				if asJSON {
					return writeJSON(w, c)
				}
				return c.WriteText(w, top)
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the comparison as JSON, every line")
	f.IntVar(&top, "top", compare.DefaultTop, "number of lines of each table the text shows")
	f.StringVarP(&out, "output", "o", "-", "write to this file instead of standard output")
	return cmd
}
