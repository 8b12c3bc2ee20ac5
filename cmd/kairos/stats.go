package main

import (
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"kairos/internal/fileio"
	"kairos/report"
	"kairos/stats"
)

func init() { addVerb("stats", newStatsCmd) }

func newStatsCmd() *cobra.Command {
	var (
		asJSON, asCSV    bool
		everyRank        bool
		matrix, out, svg string
		top              int
	)
	cmd := &cobra.Command{
		Use:   "stats [flags] TRACE",
		Short: "Summarise a trace: events by kind, volumes, per-rank totals, communication matrix",
		Long: `Stats summarises a trace: ranks, events by kind, point-to-point and
collective bytes, per-rank totals (events, messages and bytes sent and
received, collectives, flops, and time in MPI and in all when the trace is
timed), the heaviest communicating pairs and partners, and the
point-to-point messages by size in powers of two. A timed trace
also gets its flat profile: the time in each kind of MPI call over all
ranks, its share of the MPI time, the mean time a call, and the least, mean
and most one rank spent in it (with the rank), most time first, and its
time by call path: each activity (computation, the time before a call
counted at the call's caller, or an MPI function) at each call path of the
program's functions, the 15 costliest. Kinds are
the model's (waitall, allgatherv); calls that move nothing in it (local
and deferred: MPI_Comm_rank, a non-blocking collective's start, which a
replay makes where it completes, a wait that completes nothing) and
MPI-IO calls, whose kinds stand for several functions, are listed by
their MPI function (MPI_Iallgatherv, MPI_Waitall, MPI_File_set_view)
where the trace names it.

Volumes are counted on the sending side: the messages and bytes a rank
received are those sent to it, received or not (check lists the messages
no receive matches). Collective bytes are the send
buffer each member passes (alltoall: count per peer times members; bcast
and scatter: the root's only).

  --matrix bytes|count  prints the point-to-point matrix instead (rows are
                        sources, columns destinations; as a list of
                        non-zero pairs above 32 ranks unless --csv)
  --csv                 the matrix, or else the per-rank table, as CSV
  --json                everything, with the matrix as a list of pairs

Above ` + strconv.Itoa(stats.RankListLimit) + ` ranks with events, the per-rank table is summarised, as the
HTML report summarises it: each quantity's least, median and most with
their ranks, and its outliers (modified Z-score above 3.5); --per-rank
lists every rank and its top partners (--csv and --json always do).`,
		Example: `  kairos stats run.ti
  kairos stats --matrix bytes --csv -o matrix.csv run.ktr
  kairos stats --json --top 3 run.ktr`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if top < 1 {
				return usagef("--top must be at least 1, got %d", top)
			}
			var measure stats.Measure
			if matrix != "" {
				m, err := stats.ParseMeasure(matrix)
				if err != nil {
					return usagef("--matrix: %v", err)
				}
				measure = m
			}
			if asJSON && (asCSV || matrix != "") {
				return usagef("--json cannot be combined with --csv or --matrix")
			}
			src, err := openTrace(args[0])
			if err != nil {
				return err
			}
			s, err := stats.Collect(src, top)
			if err != nil {
				return naming(args[0], err)
			}
			s.Notes = readerNotes(src)
			if svg != "" {
				if err := fileio.WriteFile(svg, func(w io.Writer) error { return report.Matrix(w, s, measure, args[0]) }); err != nil {
					return err
				}
			}
			return writeOutput(cmd, out, func(w io.Writer) error {
				switch {
				case asJSON:
					return writeJSON(w, s)
				case matrix != "":
					return s.WriteMatrix(w, measure, asCSV)
				case asCSV:
					return s.WriteRanksCSV(w)
				}
				return s.WriteText(w, everyRank)
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the statistics as JSON")
	f.BoolVar(&asCSV, "csv", false, "print the matrix (with --matrix) or the per-rank table as CSV")
	f.BoolVar(&everyRank, "per-rank", false, "list every rank in the per-rank table and its top partners, whatever the number of ranks")
	f.StringVar(&matrix, "matrix", "", "print the point-to-point matrix of bytes or count")
	f.IntVar(&top, "top", stats.DefaultTop, "number of top pairs and partners per rank")
	f.StringVar(&svg, "svg", "", "also draw the point-to-point matrix (of --matrix's measure, bytes by default) as an SVG heat map in this file")
	f.StringVarP(&out, "output", "o", "-", "write to this file instead of standard output")
	return cmd
}
