package compare

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// DefaultTop is how many lines of each table the text shows.
const DefaultTop = 15

// WriteText writes the runs, then the top lines of largest change by
// activity and by call path: each run's mean time a rank, the last run's
// change and its ratio to the baseline; or, where some runs' traces
// name no call path, which.
func (c *Comparison) WriteText(w io.Writer, top int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\ttrace\tranks\tevents\trun s\tcompute s/rank\tMPI s/rank\tMPI %\tefficiency\tp2p messages\tp2p bytes\tcollectives")
	for i, r := range c.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.6f\t%.6f\t%.6f\t%.1f\t%.3f\t%d\t%d\t%d\n", label(i), r.Name, r.Ranks, r.Events, r.Seconds,
			r.ComputeSeconds, r.MPISeconds, r.MPIPercent, r.Efficiency, r.P2PMessages, r.P2PBytes, r.Collectives)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nefficiency: %s's rank-seconds (run time x ranks) over each run's\n", label(0))
	if err := c.writeLines(w, "time a rank by activity", c.Activities, top, false); err != nil {
		return err
	}
	if len(c.Unnamed) > 0 {
		which, its := "the trace of "+c.Unnamed[0]+" names", "its"
		if len(c.Unnamed) > 1 {
			which, its = "the traces of "+strings.Join(c.Unnamed, ", ")+" name", "their"
		}
		_, err := fmt.Fprintf(w, "\ncall paths not compared: %s none (%s time is outside any function, which no call path of the other runs matches)\n", which, its)
		return err
	}
	for _, l := range c.Paths {
		if l.Path != "" { // a table of call paths where the traces name some
			return c.writeLines(w, "time a rank by call path", c.Paths, top, true)
		}
	}
	return nil
}

// writeLines writes a table of lines, the top of them.
func (c *Comparison) writeLines(w io.Writer, title string, lines []Line, top int, paths bool) error {
	lines = timed(lines)
	if len(lines) == 0 {
		return nil
	}
	n := min(top, len(lines))
	last := label(len(c.Runs) - 1)
	fmt.Fprintf(w, "\n%s (mean over ranks, s), the %d largest changes of %d\n", title, n, len(lines))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"activity"}
	if paths {
		head = append(head, "call path")
	}
	for i := range c.Runs {
		head = append(head, label(i))
	}
	fmt.Fprintln(tw, strings.Join(append(head, last+"-"+label(0), last+"/"+label(0)), "\t"))
	for _, l := range lines[:n] {
		row := []string{l.Activity}
		if paths {
			row = append(row, pathOrDash(l.Path))
		}
		for _, sp := range l.Runs {
			row = append(row, fmt.Sprintf("%.6f", sp.MeanRankSeconds))
		}
		row = append(row, fmt.Sprintf("%+.6f", l.Change), ratio(l.Runs[len(l.Runs)-1].MeanRankSeconds, l.Runs[0].MeanRankSeconds))
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// timed returns the lines that take time in some run (the calls a
// simulated run times at 0 take none in any).
func timed(lines []Line) []Line {
	var out []Line
	for _, l := range lines {
		for _, sp := range l.Runs {
			if sp.Seconds > 0 {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// label names run i: A, B, ... Z, then R27, R28...
func label(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("R%d", i+1)
}

func pathOrDash(p string) string {
	if p == "" {
		return "-"
	}
	return p
}

// ratio is a/b to two decimals, "new" where b is 0 and a is not.
func ratio(a, b float64) string {
	switch {
	case b > 0:
		return fmt.Sprintf("%.2f", a/b)
	case a > 0:
		return "new"
	}
	return "-"
}
