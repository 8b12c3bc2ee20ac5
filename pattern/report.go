package pattern

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// maxListed bounds the lists a text table prints in one cell.
const maxListed = 8

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// list joins the first maxListed items and says how many are left out.
func list(items []string, sep string) string {
	if len(items) <= maxListed {
		return strings.Join(items, sep)
	}
	return strings.Join(items[:maxListed], sep) + fmt.Sprintf("%s… (+%d)", sep, len(items)-maxListed)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteSummary prints the counts of a detection.
func (p *Patterns) WriteSummary(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%d ranks, %d pattern instances, %d communication patterns, %d process patterns, %d unmatched messages\n",
		p.Ranks, len(p.Sequence), len(p.Comm), len(p.Process), p.Unmatched)
	return err
}

// WriteComm prints the communication patterns (Table 3).
func (p *Patterns) WriteComm(w io.Writer) error { return writeComm(w, p.Comm) }

// WriteCommMost prints the n most frequent communication patterns, most
// frequent first (ties in order of appearance), and how many it leaves
// out; all of them, as WriteComm, where there are n or fewer.
func (p *Patterns) WriteCommMost(w io.Writer, n int) error {
	if len(p.Comm) <= n {
		return p.WriteComm(w)
	}
	most := slices.Clone(p.Comm)
	slices.SortStableFunc(most, func(a, b CommPattern) int { return b.Frequency - a.Frequency })
	if err := writeComm(w, most[:n]); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "… and %d patterns more, each of %d instances or fewer\n", len(most)-n, most[n].Frequency)
	return err
}

func writeComm(w io.Writer, comm []CommPattern) error {
	tw := table(w)
	fmt.Fprintln(tw, "pattern\tcount\tranks\tevents\tfunctions\tprocess patterns\tcalls")
	for _, c := range comm {
		pts := make([]string, len(c.Process))
		for i, id := range c.Process {
			pts[i] = "PT" + strconv.Itoa(id)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", c.Name(), c.Frequency, c.Ranks, c.Events, orDash(list(c.Functions, ", ")),
			list(pts, " "), list(c.Words, "  "))
	}
	return tw.Flush()
}

// WriteProcess prints the process patterns of every rank (Table 2).
func (p *Patterns) WriteProcess(w io.Writer) error {
	tw := table(w)
	fmt.Fprintln(tw, "rank\tpattern\tfunction\tcalls\tpositions\tcount")
	for _, pt := range p.Process {
		pos := make([]string, len(pt.Positions))
		for i, v := range pt.Positions {
			pos[i] = strconv.Itoa(v)
		}
		word := pt.Word()
		if n := len(pt.Symbols); n > maxWord {
			word = strings.Join(pt.Symbols[:maxWord], "·") + "·… (+" + strconv.Itoa(n-maxWord) + " calls)"
		}
		if !pt.Maximal {
			word += " (once)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\n", pt.Rank, pt.Name(), orDash(pt.Function), word, list(pos, ", "), len(pt.Positions))
	}
	return tw.Flush()
}

// WriteSequence prints the pattern sequence (Table 4), one instance a
// line, with its timing when the trace is timed.
func (p *Patterns) WriteSequence(w io.Writer) error {
	tw := table(w)
	if !p.Timed {
		fmt.Fprintln(tw, "position\tpattern\tranks\tevents\tbytes")
		for _, in := range p.Sequence {
			fmt.Fprintf(tw, "%d\tCP%d\t%d\t%d\t%d\n", in.Position, in.Pattern, len(in.Ranks), in.Events, in.Bytes)
		}
		return tw.Flush()
	}
	fmt.Fprintln(tw, "position\tpattern\tranks\tevents\tbytes\tstart (µs)\tduration (µs)\tfirst to start\tlast to start\tlast to finish")
	for _, in := range p.Sequence {
		fmt.Fprintf(tw, "%d\tCP%d\t%d\t%d\t%d\t%.3f\t%.3f\t%d\t%d\t%d\n", in.Position, in.Pattern, len(in.Ranks), in.Events, in.Bytes,
			micro(in.Start), micro(in.Duration()), in.FirstStart, in.LastStart, in.LastFinish)
	}
	return tw.Flush()
}

// WriteSegments prints the segmentation tree (Table 12).
func (a *Analysis) WriteSegments(w io.Writer) error {
	o := a.Options.Segment
	how := fmt.Sprintf("depth %d", o.MaxDepth)
	if o.MaxDepth < 0 {
		how = "any depth"
	}
	if o.MaxPhases > 0 {
		how = fmt.Sprintf("best first, at most %d phases, %s", o.MaxPhases, how)
	}
	how += fmt.Sprintf(", minimum length %d", o.MinLength)
	if a.Weights != nil {
		how += "; instances weigh half by count, half by time"
	}
	fmt.Fprintf(w, "segmentation of %d instances (%s, %s; natural logarithms)\n", len(a.Sequence), o.Criterion, how)
	tw := table(w)
	fmt.Fprintln(tw, "segment\tdepth\tfrom\tto\tD_JS\tsplit\tK\ts_AIC\ts_BIC\tparent")
	for _, s := range a.Segments {
		parent := "-"
		if s.Parent >= 0 {
			parent = "S" + strconv.Itoa(s.Parent)
		}
		if s.Split == 0 {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t-\t-\t-\t-\t-\t%s\n", s.Name(), s.Depth, s.From, s.To, parent)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.4f\t%d\t%d\t%.3f\t%.3f\t%s\n", s.Name(), s.Depth, s.From, s.To, s.DJS, s.Split, s.K, s.SAIC, s.SBIC, parent)
	}
	return tw.Flush()
}

// WritePhases prints the phases (Tables 10, 13, 15).
func (a *Analysis) WritePhases(w io.Writer) error {
	tw := table(w)
	slow := "slow"
	if !a.Timed {
		slow = "slow (untimed)"
	}
	if !a.Timed {
		fmt.Fprintf(tw, "phase\tfrom\tto\tinstances\t%s\tuser functions\n", slow)
		for _, ph := range a.Phases {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%s\n", ph.Number, ph.From, ph.To, ph.To-ph.From+1, ph.Slow, orDash(list(ph.Functions, ", ")))
		}
		return tw.Flush()
	}
	fmt.Fprintf(tw, "phase\tfrom\tto\tinstances\ttime (s)\ttime %%\t%s\tuser functions\n", slow)
	for _, ph := range a.Phases {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%.6f\t%.1f\t%d\t%s\n", ph.Number, ph.From, ph.To, ph.To-ph.From+1, ph.Seconds, 100*ph.Share, ph.Slow,
			orDash(list(ph.Functions, ", ")))
	}
	return tw.Flush()
}

// WriteSlow prints the slow instances phase by phase, with the columns of
// Tables 11, 14, 16, 18 and 21 (times in microseconds).
func (a *Analysis) WriteSlow(w io.Writer) error {
	if !a.Timed {
		return ErrUntimed
	}
	fmt.Fprintf(w, "%d slow instances of %d (modified Z-score above %g within each pattern and byte count)\n",
		len(a.Slow), len(a.Sequence), a.Options.Cutoff)
	i := 0
	for _, ph := range a.Phases {
		if ph.Slow == 0 {
			continue
		}
		fmt.Fprintf(w, "\nphase %d (%d-%d, %s): %d slow\n", ph.Number, ph.From, ph.To, orDash(list(ph.Functions, ", ")), ph.Slow)
		tw := table(w)
		fmt.Fprintln(tw, "pattern\ti\tposition\tnp\tne\tbytes\tduration (µs)\tmedian (µs)\tthreshold (µs)\tM\tPLS\tPLF\tlate\tIA")
		for ; i < len(a.Slow) && a.Slow[i].Phase == ph.Number; i++ {
			s := &a.Slow[i]
			fmt.Fprintf(tw, "CP%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.2f\t%d\t%d\t%s\t%s\n", s.Pattern, s.InPhase, s.Position,
				s.Ranks, s.Events, s.Bytes, s.Duration, s.Median, s.Threshold, s.Z, s.LastStart, s.LastFinish, orDash(s.Late), s.Affinity)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// WriteCurve writes the D_JS curve of segment id as CSV: the position of
// each split point in the sequence (the last position of the left part)
// and D_JS there.
func (a *Analysis) WriteCurve(w io.Writer, id int) error {
	if id < 0 || id >= len(a.Segments) {
		return fmt.Errorf("no segment S%d (the tree has S0..S%d)", id, len(a.Segments)-1)
	}
	s := a.Segments[id]
	var weight []float64
	if a.Weights != nil {
		weight = a.Weights[s.From-1 : s.To]
	}
	curve := DJSCurveWeighted(a.Symbols()[s.From-1:s.To], weight)
	b := []byte("position,djs\n")
	for i, v := range curve {
		b = strconv.AppendInt(b, int64(s.From+i), 10)
		b = append(b, ',')
		b = strconv.AppendFloat(b, v, 'g', 8, 64)
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// MostFrequent returns the n communication patterns with the most
// instances, the most frequent first (ties in order of first appearance).
func (p *Patterns) MostFrequent(n int) []*CommPattern {
	byFreq := make([]*CommPattern, len(p.Comm))
	for i := range p.Comm {
		byFreq[i] = &p.Comm[i]
	}
	sort.SliceStable(byFreq, func(i, j int) bool { return byFreq[i].Frequency > byFreq[j].Frequency })
	return byFreq[:min(max(n, 0), len(byFreq))]
}

// WriteStory prints the analysis as a short story, for a first look at a
// trace: how many patterns and which are the most frequent, the phases,
// how many instances are slow and who was late most often, and the top
// slow instances to inspect first (High inspection affinity first, then
// Medium, then Low; the most time lost first within each: InspectFirst).
func (a *Analysis) WriteStory(w io.Writer, top int) error {
	fmt.Fprintf(w, "%d pattern instances of %d communication patterns on %d ranks.\n", len(a.Sequence), len(a.Comm), a.Ranks)
	var most []string
	for _, c := range a.MostFrequent(top) {
		most = append(most, fmt.Sprintf("%s (%d×, %d ranks, %d calls)", c.Name(), c.Frequency, c.Ranks, c.Events))
	}
	fmt.Fprintf(w, "Most frequent: %s.\n", orNone(strings.Join(most, ", ")))
	var phases []string
	for _, ph := range a.Phases {
		s := fmt.Sprintf("%d-%d", ph.From, ph.To)
		if len(ph.Functions) > 0 {
			s += " " + ph.Functions[0]
		}
		phases = append(phases, s)
	}
	fmt.Fprintf(w, "%d phases (%s): %s.\n", len(a.Phases), a.Options.Segment.Criterion, orNone(list(phases, "; ")))
	if !a.Timed {
		_, err := fmt.Fprintln(w, "The trace has no timestamps: no slow instances.")
		return err
	}
	late := map[string]int{}
	lateRank := map[int32]int{}
	for _, s := range a.Slow {
		late[s.Late]++
		lateRank[s.LastStart]++
	}
	fmt.Fprintf(w, "%d slow instances (modified Z-score above %g): %d late senders, %d late receivers, %d late processes in collectives.\n",
		len(a.Slow), a.Options.Cutoff, late["late sender"], late["late receiver"], late["late process"])
	if len(a.Slow) == 0 {
		return nil
	}
	ranks := make([]int32, 0, len(lateRank))
	for r := range lateRank {
		ranks = append(ranks, r)
	}
	sort.Slice(ranks, func(i, j int) bool {
		if lateRank[ranks[i]] != lateRank[ranks[j]] {
			return lateRank[ranks[i]] > lateRank[ranks[j]]
		}
		return ranks[i] < ranks[j]
	})
	var who []string
	for _, r := range ranks[:min(top, len(ranks))] {
		who = append(who, fmt.Sprintf("rank %d (%d)", r, lateRank[r]))
	}
	fmt.Fprintf(w, "Last to start most often: %s.\n", strings.Join(who, ", "))
	order := InspectFirst(a.Slow)
	fmt.Fprintln(w, "Look at these first:")
	tw := table(w)
	fmt.Fprintln(tw, "  IA\tphase\tposition\tpattern\tnp\tne\tbytes\tduration (µs)\tmedian (µs)\tM\tlate")
	for _, i := range order[:min(top, len(order))] {
		s := &a.Slow[i]
		late := fmt.Sprintf("rank %d, %s", s.LastStart, s.Late)
		if s.Late == "" {
			late = fmt.Sprintf("rank %d alone", s.LastStart)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\tCP%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.2f\t%s\n", s.Affinity, s.Phase, s.Position, s.Pattern,
			s.Ranks, s.Events, s.Bytes, s.Duration, s.Median, s.Z, late)
	}
	return tw.Flush()
}
