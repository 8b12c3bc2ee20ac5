package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"kairos/check"
)

func init() { addVerb("check", newCheckCmd) }

func newCheckCmd() *cobra.Command {
	var (
		protocol   string
		asJSON     bool
		eagerLimit int64
		max        int
	)
	cmd := &cobra.Command{
		Use:   "check [flags] TRACE",
		Short: "Validate a trace: matched messages, completed requests, collectives, deadlock freedom",
		Long: `Check validates a trace: every point-to-point message is matched (per
communicator, source, destination and tag, in order; a receive smaller
than its message is a truncation), every request is completed exactly
once, every collective is entered by every member of its communicator in
the same order with the same root, and no size, count, flop or sleep
amount is negative or not a number.

With --protocol other than none it also replays the trace without timing
and reports a deadlock, with every blocked rank and what it waits for:
  eager       every send is buffered and completes at once
  rendezvous  every blocking send waits for its receive
  simgrid     sends below --eager-limit bytes are buffered, larger ones
              rendezvous, and leftover requests are waited for at the end
              (SimGrid 3.32's replay)

A valid trace passes silently with exit status 0. Problems are printed one
per line as "FILE:LINE: rank R event I: message" (FILE alone, the trace
named, when the format has no lines: OTF2, DUMPI, .ktr) and the exit
status is 1. Requests never completed are warnings, one a rank with how
many: printed after the errors, but the trace stays valid.`,
		Example: `  kairos check run.ti
  kairos check --protocol rendezvous stencil.ktr
  kairos check --json --max-problems 20 broken.ti`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := check.ParseProtocol(protocol)
			if err != nil {
				return usagef("--protocol: %v", err)
			}
			if eagerLimit < 0 {
				return usagef("--eager-limit %d: expected a size in bytes, 0 or more", eagerLimit)
			}
			src, err := openSource(args[0], true)
			if err == nil && p != check.None {
				if err = replayable(args[0], src); err != nil {
					err = fmt.Errorf("%w; --protocol none checks it without replaying", err)
				}
			}
			if err != nil {
				return err
			}
			rep, err := check.Check(src, check.Options{Protocol: p, EagerLimit: eagerLimit, MaxProblems: max})
			if err != nil {
				return naming(args[0], err)
			}
			placeIn(rep, args[0])
			if asJSON {
				err = writeJSON(cmd.OutOrStdout(), rep)
			} else {
				err = printProblems(cmd.OutOrStdout(), rep)
			}
			if err != nil {
				return err
			}
			if rep.Unreceived > 0 && src.Meta().Attrs["format"] == "dumpi" {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %s: sst-dumpi records no MPI_Mprobe, MPI_Improbe, MPI_Mrecv nor MPI_Imrecv: "+
					"messages a program received with them (Boost.MPI, mpi4py's objects) read as never received\n", args[0])
			}
			if !rep.OK() {
				return errFailed
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&protocol, "protocol", "simgrid", "deadlock replay: none, eager, rendezvous or simgrid")
	f.BoolVar(&asJSON, "json", false, "print the whole report as JSON")
	f.Int64Var(&eagerLimit, "eager-limit", check.DefaultEagerLimit, "simgrid protocol: size in bytes from which sends are rendezvous")
	f.IntVar(&max, "max-problems", check.DefaultMaxProblems, "stop listing problems after this many (-1: no limit)")
	return cmd
}

// placeIn names path as the place of the problems whose reader gave no
// line (a binary trace), so that every problem says which file it is in.
func placeIn(rep *check.Report, path string) {
	for i := range rep.Problems {
		if rep.Problems[i].Pos == "" {
			rep.Problems[i].Pos = path
		}
	}
}

func printProblems(w io.Writer, rep *check.Report) error {
	for _, p := range rep.Problems {
		if _, err := fmt.Fprintln(w, p.String()); err != nil {
			return err
		}
	}
	if rep.Omitted > 0 {
		if _, err := fmt.Fprintf(w, "... and %d more problems\n", rep.Omitted); err != nil {
			return err
		}
	}
	if rep.Unfinalized > 0 {
		if _, err := fmt.Fprintf(w, "warning: %d of the %d ranks end without MPI_Finalize (%s): the run was cut short (MPI_Abort, a crash, a job killed) or its trace lost its end\n",
			rep.Unfinalized, rep.Ranks, rep.UnfinalizedList); err != nil {
			return err
		}
	}
	if rep.EmptyRanks > 0 {
		verb := "have"
		if rep.EmptyRanks == 1 {
			verb = "has"
		}
		_, err := fmt.Fprintf(w, "warning: %d of the %d ranks %s no events (%s)\n", rep.EmptyRanks, rep.Ranks, verb, rep.EmptyList)
		return err
	}
	return nil
}
