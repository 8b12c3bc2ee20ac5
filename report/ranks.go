package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"kairos/stats"
	"kairos/trace"
)

// Column is one per-rank quantity of a table: its name, its values by
// rank and how to write them.
type Column struct {
	Name   string
	Values []float64
	Format func(float64) string
}

// RankTable is a per-rank table: columns of values, a value per rank
// listed in Ranks (nil: every rank, in order).
type RankTable struct {
	Title   string
	Columns []Column
	Ranks   []int
}

// SpreadRow is a column of a RankTable summarised: Same is set when every
// rank has the same value.
type SpreadRow struct {
	Name                string
	Least, Median, Most string
	LeastRank, MostRank int
	Same                bool
	Outliers            string
}

// Summary returns the table's columns summarised, one row each.
func (t *RankTable) Summary() []SpreadRow {
	var rows []SpreadRow
	for _, c := range t.Columns {
		s := stats.SpreadOver(c.Values, t.Ranks)
		rows = append(rows, SpreadRow{Name: c.Name, Least: c.Format(s.Least), Median: c.Format(s.Median), Most: c.Format(s.Most),
			LeastRank: s.LeastRank, MostRank: s.MostRank, Same: s.Same(), Outliers: s.OutliersText()})
	}
	return rows
}

// RankRow is a rank's row of a RankTable, its cells as text.
type RankRow struct {
	Rank  int
	Cells []string
}

// Rows returns the table's rows, a row per rank.
func (t *RankTable) Rows() []RankRow {
	if len(t.Columns) == 0 {
		return nil
	}
	rows := make([]RankRow, len(t.Columns[0].Values))
	for i := range rows {
		rows[i].Rank = i
		if t.Ranks != nil {
			rows[i].Rank = t.Ranks[i]
		}
		for _, c := range t.Columns {
			rows[i].Cells = append(rows[i].Cells, c.Format(c.Values[i]))
		}
	}
	return rows
}

// RankTables returns the page's per-rank tables: the trace's volumes,
// the timed run's time in each state, the simulation's breakdown.
func (r *Report) RankTables() []RankTable {
	var out []RankTable
	count := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	if s := r.Stats; s != nil {
		cols := []Column{{Name: "events", Format: count}, {Name: "messages sent", Format: count}, {Name: "bytes sent", Format: bytesText},
			{Name: "messages received", Format: count}, {Name: "bytes received", Format: bytesText}, {Name: "collectives", Format: count},
			{Name: "flops", Format: func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }}}
		for _, p := range s.PerRank {
			for i, v := range []float64{float64(p.Events), float64(p.MessagesSent), float64(p.BytesSent), float64(p.MessagesRecvd),
				float64(p.BytesRecvd), float64(p.Collectives), p.Flops} {
				cols[i].Values = append(cols[i].Values, v)
			}
		}
		out = append(out, RankTable{Title: "What each rank does (the trace)", Columns: nonZero(cols), Ranks: s.ListedRanks()})
	}
	if tl := r.Timeline; tl != nil {
		cols := make([]Column, numStates)
		for s := range numStates {
			cols[s] = Column{Name: State(s).String(), Format: seconds}
			for _, tot := range tl.Totals {
				cols[s].Values = append(cols[s].Values, tot[s].Seconds())
			}
		}
		out = append(out, RankTable{Title: "Where each rank's time goes (" + r.runName() + ")", Columns: nonZero(cols)})
	}
	if c := r.Causes; c != nil && c.Waiting > 0 {
		cols := []Column{{Name: "waiting", Format: seconds, Values: c.RankWaiting}, {Name: "waiting caused (root causes)", Format: seconds, Values: c.RankCost}}
		out = append(out, RankTable{Title: "Each rank's waiting, and the waiting it caused", Columns: cols})
	}
	if r.Sim != nil {
		cols := []Column{{Name: "finish", Format: seconds}, {Name: "computation", Format: seconds},
			{Name: "communication", Format: seconds}, {Name: "blocked on late partners", Format: seconds}, {Name: "I/O", Format: seconds},
			{Name: "test back-off", Format: seconds}} // SMPI's sleeps before the tests of a polling rank
		for _, rk := range r.Sim.Ranks {
			for i, v := range []float64{rk.Finish, rk.Compute, rk.Comm, rk.Wait, rk.IO, rk.Backoff} {
				cols[i].Values = append(cols[i].Values, v)
			}
		}
		cols = append(cols[:4], nonZero(cols[4:])...) // no I/O, no back-off: no column
		out = append(out, RankTable{Title: "Simulated on " + r.Options.Machine, Columns: cols})
	}
	return out
}

// nonZero returns the columns with a value other than zero: a column of
// zeros (no flops in an OTF2 trace, no rank ever waiting) says nothing.
func nonZero(cols []Column) []Column {
	var out []Column
	for _, c := range cols {
		if slices.ContainsFunc(c.Values, func(v float64) bool { return v != 0 }) {
			out = append(out, c)
		}
	}
	return out
}

// runName says which run the timeline and patterns are of.
func (r *Report) runName() string {
	if r.Recorded {
		return "the recorded run"
	}
	return "the run simulated on " + r.Options.Machine
}

// bytesText writes a byte count with a binary prefix.
func bytesText(v float64) string {
	for _, p := range []struct {
		f float64
		s string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if v >= p.f {
			return strconv.FormatFloat(v/p.f, 'f', 1, 64) + " " + p.s
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " B"
}

// CallRow is one kind of call in the timed run, over all ranks: the
// function summary of Vampir, with the waiting part apart.
type CallRow struct {
	Call                string
	Total, Share        string
	Waiting             string
	Least, Median, Most string
	LeastRank, MostRank int
	total               trace.Time
}

// CallRows returns the time of the timed run by kind of call, the most
// first: its total over the ranks and share of their time, its waiting
// part, and its spread over the ranks.
func (r *Report) CallRows() []CallRow {
	tl := r.Timeline
	if tl == nil {
		return nil
	}
	var all trace.Time
	for _, tot := range tl.Totals {
		for _, t := range tot {
			all += t
		}
	}
	// The time by MPI function: a kind's calls and those the trace names
	// (local, deferred and MPI-IO calls) may be one function (an
	// MPI_Waitall that completes requests, and one of none, a deferred
	// call), which is one row.
	byName := map[string]*NamedCalls{}
	add := func(name string, per []trace.Time, wait trace.Time) {
		n := byName[name]
		if n == nil {
			n = &NamedCalls{Ranks: make([]trace.Time, len(per))}
			byName[name] = n
		}
		for rk, t := range per {
			n.Ranks[rk] += t
		}
		n.Waiting += wait
	}
	// The local, deferred and MPI-IO calls are one row, but for the MPI
	// functions the trace names, each a row of its own.
	other := make([]trace.Time, len(tl.Lanes))
	var otherWait trace.Time
	for k := range trace.NumKinds {
		busy, waiting := tl.Calls[k], tl.Calls[k|codeWaiting]
		if busy == nil && waiting == nil {
			continue
		}
		per := make([]trace.Time, len(tl.Lanes))
		var wait trace.Time
		for rk := range per {
			if busy != nil {
				per[rk] += busy[rk]
			}
			if waiting != nil {
				per[rk] += waiting[rk]
				wait += waiting[rk]
			}
		}
		if trace.Kind(k).NamedByRegion() {
			for rk, t := range per {
				other[rk] += t
			}
			otherWait += wait
			continue
		}
		add(mpiName(trace.Kind(k)), per, wait)
	}
	for name, n := range tl.Named {
		for rk, t := range n.Ranks {
			other[rk] -= t
		}
		otherWait -= n.Waiting
		add(name, n.Ranks, n.Waiting)
	}
	add("other MPI calls", other, otherWait)
	var rows []CallRow
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if row, ok := callRow(name, byName[name], all); ok {
			rows = append(rows, row)
		}
	}
	slices.SortStableFunc(rows, func(a, b CallRow) int { return cmp.Compare(b.total, a.total) })
	return rows
}

// callRow returns the row of the time n in MPI function name, of all
// the ranks' time; false if there is none.
func callRow(name string, n *NamedCalls, all trace.Time) (CallRow, bool) {
	secs := make([]float64, len(n.Ranks))
	var total trace.Time
	for rk, t := range n.Ranks {
		secs[rk] = t.Seconds()
		total += t
	}
	if total <= 0 {
		return CallRow{}, false
	}
	sp := stats.SpreadOver(secs, nil)
	row := CallRow{Call: name, Total: seconds(total.Seconds()), Share: share(float64(total) / float64(max(all, 1))),
		Least: seconds(sp.Least), Median: seconds(sp.Median), Most: seconds(sp.Most), LeastRank: sp.LeastRank, MostRank: sp.MostRank, total: total}
	if n.Waiting > 0 {
		row.Waiting = fmt.Sprintf("%s (%s)", seconds(n.Waiting.Seconds()), share(float64(n.Waiting)/float64(total)))
	}
	return row, true
}

// mpiName is the MPI function of a kind, "computation" for computation.
func mpiName(k trace.Kind) string {
	switch {
	case stateOf(k) == Computation:
		return "computation"
	case k == trace.Local || k == trace.Deferred:
		return "other MPI calls"
	}
	return k.MPIName()
}
