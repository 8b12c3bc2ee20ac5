package waitstate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

func pct(x, of float64) string {
	if of <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*x/of)
}

// dur writes seconds in the unit that suits them.
func dur(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0 s"
	case a >= 1:
		return fmt.Sprintf("%.3f s", s)
	case a >= 1e-3:
		return fmt.Sprintf("%.3f ms", s*1e3)
	case a >= 1e-6:
		return fmt.Sprintf("%.3f µs", s*1e6)
	}
	return fmt.Sprintf("%.0f ns", s*1e9)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteSummary prints the root causes first, in a few lines: how much of
// the ranks' time was waiting, and the top causes with the share of all
// the waiting each caused, directly or propagated.
func (a *Analysis) WriteSummary(w io.Writer, top int) error {
	fmt.Fprintf(w, "Root causes of waiting (Scalasca's delay costs): %s of waiting over %d ranks, %s of their time.\n",
		dur(a.Waiting), a.Ranks, pct(a.Waiting, a.RankTime))
	if a.Waiting == 0 {
		fmt.Fprintln(w, "  No rank waited for another.")
		return a.writeAlltoallv(w)
	}
	tw := table(w)
	for i, c := range a.Causes[:min(top, len(a.Causes))] {
		fmt.Fprintf(tw, "  %d.\trank %d\t%s:\t%s of all waiting\t(direct %s%s; propagated %s)\n", i+1, c.Rank, c.Where(),
			pct(c.Cost, a.Waiting), pct(c.Direct, a.Waiting), mainKind(c.DirectKinds), pct(c.Propagated, a.Waiting))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "  Wait states: %s; %s not traced to a delay.\n", a.kindList(), pct(a.Unexplained, a.Waiting))
	return a.writeAlltoallv(w)
}

// writeAlltoallv says how much of the ranks' time was in MPI_Alltoallv
// and MPI_Alltoallw, where no wait state is sought, if any.
func (a *Analysis) writeAlltoallv(w io.Writer) error {
	if a.Alltoallv <= 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "  Not analysed: %s in MPI_Alltoallv and MPI_Alltoallw (%s of the ranks' time), as Scalasca leaves them: an exchange that may be sparse need not synchronize.\n",
		dur(a.Alltoallv), pct(a.Alltoallv, a.RankTime))
	return err
}

// mainKind names the kind of wait state most of a direct cost went to, as
// ": late sender".
func mainKind(kinds map[string]float64) string {
	best, v := "", 0.0
	for k, x := range kinds {
		if x > v || x == v && k < best {
			best, v = k, x
		}
	}
	if best == "" {
		return ""
	}
	return ": " + best
}

// kindList names the kinds of wait states with their share of the
// waiting, the largest first.
func (a *Analysis) kindList() string {
	var s []string
	for _, k := range a.Kinds {
		s = append(s, fmt.Sprintf("%s %s", k.Kind, pct(k.Seconds, a.Waiting)))
	}
	return strings.Join(s, ", ")
}

// WriteReport prints the whole analysis: the wait states by kind, the top
// root causes, the ranks that waited and caused most, and the critical
// path.
func (a *Analysis) WriteReport(w io.Writer, top int) error {
	fmt.Fprintf(w, "Wait states: %s over %d ranks, %s of their time (%s); %s traced to delays.\n",
		dur(a.Waiting), a.Ranks, pct(a.Waiting, a.RankTime), dur(a.RankTime), pct(a.Waiting-a.Unexplained, a.Waiting))
	tw := table(w)
	fmt.Fprintln(tw, "  kind\tcount\twaiting\tshare\tdirect\tindirect")
	for _, k := range a.Kinds {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\n", k.Kind, k.Count, dur(k.Seconds), pct(k.Seconds, a.Waiting),
			pct(k.Direct, k.Seconds), pct(k.Indirect, k.Seconds))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := a.writeAlltoallv(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nRoot causes (delay costs: direct, the waiting at the next synchronization; propagated, further along chains of wait states):")
	tw = table(w)
	fmt.Fprintln(tw, "  rank\tactivity\tcall path\tcost\tshare\tdirect\tpropagated")
	for _, c := range a.Causes[:min(top, len(a.Causes))] {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Rank, c.Activity, orDash(c.CallPath), dur(c.Cost),
			pct(c.Cost, a.Waiting), pct(c.Direct, a.Waiting), pct(c.Propagated, a.Waiting))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nWaited most: %s.\n", topRanks(a.RankWaiting, a.Waiting, top))
	fmt.Fprintf(w, "Caused most: %s.\n", topRanks(a.RankCost, a.Waiting, top))
	cp := &a.CriticalPath
	fmt.Fprintf(w, "\nCritical path: %s (the run: %s)", dur(cp.Seconds), dur(a.Runtime))
	var ranks []string
	for _, r := range cp.Ranks[:min(top, len(cp.Ranks))] {
		ranks = append(ranks, fmt.Sprintf("rank %d %s", r.Rank, pct(r.Seconds, cp.Seconds)))
	}
	if len(ranks) > 0 {
		fmt.Fprintf(w, "; on %s", strings.Join(ranks, ", "))
	}
	fmt.Fprintln(w, ".")
	tw = table(w)
	fmt.Fprintln(tw, "  activity\tcall path\ton the path\tmean per rank\timbalance")
	for _, p := range cp.Activities[:min(top, len(cp.Activities))] {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", p.Activity, orDash(p.CallPath), dur(p.Seconds), dur(p.Mean), dur(p.Imbalance))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if a.Unmatched > 0 {
		fmt.Fprintf(w, "%d messages or collectives without all their ends make no wait states.\n", a.Unmatched)
	}
	if a.ClockViolations > 0 {
		fmt.Fprintf(w, "%d receives or collective calls ended before their partner entered (clock-condition violations): their waits are clipped to the calls.\n",
			a.ClockViolations)
	}
	return nil
}

// topRanks names the top ranks by v, with their share of total.
func topRanks(v []float64, total float64, top int) string {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case v[i] > v[j]:
			return -1
		case v[i] < v[j]:
			return 1
		}
		return 0
	})
	var s []string
	for _, r := range idx[:min(top, len(idx))] {
		if v[r] > 0 {
			s = append(s, fmt.Sprintf("rank %d %s", r, pct(v[r], total)))
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
