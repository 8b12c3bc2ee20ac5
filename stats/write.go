package stats

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"kairos/pattern"
)

// Measure selects what a matrix shows.
type Measure int

// Measures.
const (
	Bytes Measure = iota
	Count
)

// ParseMeasure returns the measure called name ("bytes" or "count").
func ParseMeasure(name string) (Measure, error) {
	switch name {
	case "bytes":
		return Bytes, nil
	case "count":
		return Count, nil
	}
	return Bytes, fmt.Errorf("unknown matrix measure %q (want bytes or count)", name)
}

// Of returns pair p's traffic in measure m.
func (m Measure) Of(p Pair) int64 {
	if m == Count {
		return p.Messages
	}
	return p.Bytes
}

// DenseLimit is the largest number of ranks WriteMatrix shows as a dense
// table; larger traces list their non-zero pairs.
const DenseLimit = 32

// WriteSummary writes the totals, the events by kind and the top pairs:
// what fits on one screen whatever the number of ranks.
func (s *Stats) WriteSummary(w io.Writer) error {
	if err := s.writeTotals(w); err != nil {
		return err
	}
	if err := s.writeTopPairs(w); err != nil {
		return err
	}
	return s.writeSizes(w)
}

// RankListLimit is the most ranks with events whose rows WriteText lists
// unless asked for every rank: beyond, a line a rank makes a page no one
// reads (32,802 lines at 16,384 ranks), and the per-rank quantities are
// summarised instead, as the HTML report summarises them.
const RankListLimit = 64

// WriteText writes a human-readable summary: totals, events by kind, the
// per-rank table, the top pairs and each rank's top partners. Above
// RankListLimit ranks with events, unless everyRank, the per-rank table
// is summarised (the least, the median and the most of each quantity,
// with their ranks, and the outliers) and the partners are left out.
func (s *Stats) WriteText(w io.Writer, everyRank bool) error {
	if err := s.writeTotals(w); err != nil {
		return err
	}
	listed := everyRank || len(s.PerRank) <= RankListLimit
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if listed {
		fmt.Fprintln(w, "\nper rank")
		s.rankTable(tw)
	} else {
		fmt.Fprintf(w, "\nper rank: %d ranks summarised (--per-rank lists each)\n", len(s.PerRank))
		s.rankSpreads(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if err := s.writeTopPairs(w); err != nil {
		return err
	}
	if err := s.writeSizes(w); err != nil {
		return err
	}
	if !listed {
		_, err := fmt.Fprintln(w, "\ntop partners by bytes, both ways: --per-rank lists each rank's")
		return err
	}
	fmt.Fprintln(w, "\ntop partners by bytes, both ways")
	for _, r := range s.PerRank {
		var parts []string
		for _, p := range r.TopPartners {
			parts = append(parts, fmt.Sprintf("%d (%d B, %d msgs)", p.Rank, p.Bytes, p.Messages))
		}
		if len(parts) == 0 {
			parts = []string{"-"}
		}
		if _, err := fmt.Fprintf(w, "  rank %d: %s\n", r.Rank, strings.Join(parts, ", ")); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stats) writeTotals(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "ranks\t%d\n", s.Ranks)
	fmt.Fprintf(tw, "events\t%d\n", s.Events)
	fmt.Fprintf(tw, "timed\t%s\n", yesNo(s.Timed))
	fmt.Fprintf(tw, "flops\t%s\n", fmtSum(s.Flops))
	fmt.Fprintf(tw, "p2p messages\t%d\n", s.P2PMessages)
	fmt.Fprintf(tw, "p2p bytes\t%d\n", s.P2PBytes)
	fmt.Fprintf(tw, "collective calls\t%d\n", s.Collectives)
	fmt.Fprintf(tw, "collective bytes\t%d\n", s.CollectiveBytes)
	if s.EmptyRanks > 0 {
		fmt.Fprintf(tw, "ranks without events\t%d (%s: left out below)\n", s.EmptyRanks, s.EmptyList)
	}
	if s.OneSidedOps > 0 {
		fmt.Fprintf(tw, "one-sided transfers\t%d\n", s.OneSidedOps)
		fmt.Fprintf(tw, "one-sided bytes\t%d\n", s.OneSidedBytes)
	}
	if s.IOOps > 0 || s.IOBytesRead > 0 || s.IOBytesWritten > 0 {
		fmt.Fprintf(tw, "MPI-IO reads and writes\t%d\n", s.IOOps)
		fmt.Fprintf(tw, "MPI-IO bytes read\t%d\n", s.IOBytesRead)
		fmt.Fprintf(tw, "MPI-IO bytes written\t%d\n", s.IOBytesWritten)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(w, "\nevents by kind")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	kinds := make([]string, 0, len(s.EventsByKind))
	for k := range s.EventsByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(tw, "%s\t%d\t\n", k, s.EventsByKind[k])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return s.writeProfile(w)
}

// writeProfile writes the time in MPI calls by kind, for a timed trace:
// the share of all MPI time, the mean time a call, and the spread over
// ranks.
func (s *Stats) writeProfile(w io.Writer) error {
	if len(s.Profile) == 0 {
		return nil
	}
	var mpi, run float64
	for _, r := range s.PerRank {
		mpi += r.MPISeconds
		run += r.TotalSeconds
	}
	fmt.Fprintf(w, "\ntime in MPI calls (%.6f s of %.6f s over all ranks, %.1f%%)\n", mpi, run, percent(mpi, run))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "call\tcalls\ttotal s\t%% MPI\tmean us/call\trank min s\trank mean s\trank max s\tmax rank\t\n")
	for _, c := range s.Profile {
		fmt.Fprintf(tw, "%s\t%d\t%.6f\t%.1f\t%.3f\t%.6f\t%.6f\t%.6f\t%d\t\n", c.Call, c.Calls, c.Seconds, percent(c.Seconds, mpi),
			1e6*c.Seconds/float64(c.Calls), c.MinRankSeconds, c.MeanRankSeconds, c.MaxRankSeconds, c.MaxRank)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return s.writePaths(w, run)
}

// pathLines is the number of call-path lines the text shows (--json has
// them all).
const pathLines = 15

// writePaths writes the costliest activities by call path, of run
// seconds over all ranks: their share, and their spread over ranks (the
// imbalance is the most loaded rank's excess over the mean).
func (s *Stats) writePaths(w io.Writer, run float64) error {
	if len(s.Paths) == 0 || s.Paths[0].Seconds <= 0 {
		return nil
	}
	n := min(len(s.Paths), pathLines)
	for n > 0 && s.Paths[n-1].Seconds <= 0 {
		n--
	}
	fmt.Fprintf(w, "\ntime by call path (the %d costliest of %d)\n", n, len(s.Paths))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "activity\tcall path\ttotal s\t%%\trank min s\trank mean s\trank max s\tmax rank\n")
	for _, p := range s.Paths[:n] {
		path := p.Path
		if path == "" {
			path = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.6f\t%.1f\t%.6f\t%.6f\t%.6f\t%d\n", p.Activity, path, p.Seconds, percent(p.Seconds, run),
			p.MinRankSeconds, p.MeanRankSeconds, p.MaxRankSeconds, p.MaxRank)
	}
	return tw.Flush()
}

// percent is 100 part/whole, 0 for an empty whole.
func percent(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * part / whole
}

func (s *Stats) writeTopPairs(w io.Writer) error {
	fmt.Fprintln(w, "\ntop pairs by bytes")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "src\tdst\tmessages\tbytes\t\n")
	for _, p := range s.TopPairs {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t\n", p.Src, p.Dst, p.Messages, p.Bytes)
	}
	if err := tw.Flush(); err != nil || len(s.OneSidedMatrix) == 0 {
		return err
	}
	fmt.Fprintln(w, "\ntop one-sided pairs by bytes (data from src to dst)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "src\tdst\ttransfers\tbytes\t\n")
	top := topN(append([]Pair{}, s.OneSidedMatrix...), max(len(s.TopPairs), DefaultTop), func(p Pair) (int64, int) { return p.Bytes, p.Src*s.Ranks + p.Dst })
	for _, p := range top {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t\n", p.Src, p.Dst, p.Messages, p.Bytes)
	}
	return tw.Flush()
}

// writeSizes writes the point-to-point messages by size.
func (s *Stats) writeSizes(w io.Writer) error {
	if len(s.Sizes) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\npoint-to-point messages by size")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "size\tmessages\tshare\tbytes\tshare\t\n")
	for _, b := range s.Sizes {
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%d\t%.1f%%\t\n", b.Range(), b.Messages, percent(float64(b.Messages), float64(s.P2PMessages)),
			b.Bytes, percent(float64(b.Bytes), float64(s.P2PBytes)))
	}
	return tw.Flush()
}

// Range writes the bin's sizes: "0", or "[4 KiB, 8 KiB)" for 4,096 to
// 8,191 bytes.
func (b SizeBin) Range() string {
	switch {
	case b.From == 0:
		return "0"
	case b.To == math.MaxInt64: // 2^63, past int64
		return "[" + sizeText(b.From) + ", 8 EiB)"
	}
	return "[" + sizeText(b.From) + ", " + sizeText(b.To) + ")"
}

// sizeText writes a power of two of bytes in its binary unit: 512 B,
// 64 KiB, 2 GiB.
func sizeText(v int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{60, "EiB"}, {50, "PiB"}, {40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if v >= 1<<u.shift {
			return strconv.FormatInt(v>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(v, 10) + " B"
}

// rankColumn is a quantity of the per-rank table.
type rankColumn struct {
	name   string
	of     func(r *RankStats) float64
	format func(float64) string
}

// rankColumns are the per-rank table's quantities, the times only of a
// timed trace.
func (s *Stats) rankColumns() []rankColumn {
	count := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	cols := []rankColumn{
		{"events", func(r *RankStats) float64 { return float64(r.Events) }, count},
		{"msgs sent", func(r *RankStats) float64 { return float64(r.MessagesSent) }, count},
		{"bytes sent", func(r *RankStats) float64 { return float64(r.BytesSent) }, count},
		{"msgs in", func(r *RankStats) float64 { return float64(r.MessagesRecvd) }, count},
		{"bytes in", func(r *RankStats) float64 { return float64(r.BytesRecvd) }, count},
		{"collectives", func(r *RankStats) float64 { return float64(r.Collectives) }, count},
		{"coll bytes", func(r *RankStats) float64 { return float64(r.CollBytesSent) }, count},
		{"flops", func(r *RankStats) float64 { return r.Flops }, fmtSum},
	}
	if s.Timed {
		secs := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
		cols = append(cols, rankColumn{"mpi s", func(r *RankStats) float64 { return r.MPISeconds }, secs},
			rankColumn{"total s", func(r *RankStats) float64 { return r.TotalSeconds }, secs})
	}
	return cols
}

// rankTable writes a row a rank with events.
func (s *Stats) rankTable(w io.Writer) {
	cols := s.rankColumns()
	fmt.Fprint(w, "rank\t")
	for _, c := range cols {
		fmt.Fprint(w, c.name, "\t")
	}
	fmt.Fprintln(w)
	for i := range s.PerRank {
		r := &s.PerRank[i]
		fmt.Fprintf(w, "%d\t", r.Rank)
		for _, c := range cols {
			fmt.Fprint(w, c.format(c.of(r)), "\t")
		}
		fmt.Fprintln(w)
	}
}

// rankSpreads writes a row a quantity of the per-rank table: its least,
// median and most over the ranks with events, with their ranks, and its
// outliers.
func (s *Stats) rankSpreads(w io.Writer) {
	ranks := s.ListedRanks()
	xs := make([]float64, len(s.PerRank))
	// The outliers, last, are left-aligned after the columns' padding.
	fmt.Fprintf(w, "\tleast\trank\tmedian\tmost\trank\t  outliers (modified Z-score above %g)\n", pattern.DefaultCutoff)
	for _, c := range s.rankColumns() {
		for i := range s.PerRank {
			xs[i] = c.of(&s.PerRank[i])
		}
		sp := SpreadOver(xs, ranks)
		if sp.Same() {
			fmt.Fprintf(w, "%s\t\t\t%s\t\t\t  none: every rank the same\n", c.name, c.format(sp.Median))
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%d\t  %s\n", c.name, c.format(sp.Least), sp.LeastRank,
			c.format(sp.Median), c.format(sp.Most), sp.MostRank, sp.OutliersText())
	}
}

// WriteRanksCSV writes the per-rank table as CSV with a header line.
func (s *Stats) WriteRanksCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"rank", "events", "messages_sent", "bytes_sent", "messages_received", "bytes_received",
		"collectives", "collective_bytes_sent", "flops"}
	if s.Timed {
		head = append(head, "mpi_seconds", "total_seconds")
	}
	cw.Write(head)
	for _, r := range s.PerRank {
		rec := []string{itoa(int64(r.Rank)), itoa(r.Events), itoa(r.MessagesSent), itoa(r.BytesSent),
			itoa(r.MessagesRecvd), itoa(r.BytesRecvd), itoa(r.Collectives), itoa(r.CollBytesSent), fmtFloat(r.Flops)}
		if s.Timed {
			rec = append(rec, fmtFloat(r.MPISeconds), fmtFloat(r.TotalSeconds))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteMatrix writes the point-to-point matrix of measure m: as CSV, a
// dense matrix with a header row of destinations and one row per source;
// as a table, the same for traces of at most DenseLimit ranks, else the
// list of non-zero pairs.
func (s *Stats) WriteMatrix(w io.Writer, m Measure, asCSV bool) error {
	if asCSV {
		return s.denseMatrix(w, m, ',')
	}
	if s.Ranks <= DenseLimit {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		if err := s.denseMatrix(tw, m, '\t'); err != nil {
			return err
		}
		return tw.Flush()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "src\tdst\t%s\t\n", m.Name())
	for _, p := range s.Matrix {
		fmt.Fprintf(tw, "%d\t%d\t%d\t\n", p.Src, p.Dst, m.Of(p))
	}
	return tw.Flush()
}

// Name is the unit of measure m: "bytes" or "messages".
func (m Measure) Name() string {
	if m == Count {
		return "messages"
	}
	return "bytes"
}

// denseMatrix writes rows of sep-separated cells, streaming one source
// row at a time.
func (s *Stats) denseMatrix(w io.Writer, m Measure, sep byte) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("src\\dst")
	for d := 0; d < s.Ranks; d++ {
		bw.WriteByte(sep)
		bw.WriteString(strconv.Itoa(d))
	}
	end := func() {
		if sep == '\t' {
			bw.WriteByte('\t')
		}
		bw.WriteByte('\n')
	}
	end()
	row := make([]int64, s.Ranks)
	i := 0
	for src := 0; src < s.Ranks; src++ {
		clear(row)
		for ; i < len(s.Matrix) && s.Matrix[i].Src == src; i++ {
			if d := s.Matrix[i].Dst; d >= 0 && d < s.Ranks {
				row[d] += m.Of(s.Matrix[i])
			}
		}
		bw.WriteString(strconv.Itoa(src))
		for _, v := range row {
			bw.WriteByte(sep)
			bw.WriteString(strconv.FormatInt(v, 10))
		}
		end()
	}
	return bw.Flush()
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// fmtSum formats a sum of many floating-point values for a reader as
// fmtFloat does, rounded to 12 significant digits first: the last digits
// of its shortest form are the additions' rounding
// (1.6054404813500013e+09 flops of a trace reduced in situ).
func fmtSum(f float64) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 12, 64), 64)
	if err != nil {
		return fmtFloat(f)
	}
	return fmtFloat(r)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
