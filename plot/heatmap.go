// Package plot draws Kairos' results as SVG figures people already know how
// to read: the communication matrix as a heat map (the figure of Bahmani
// and Mueller's Fig. 6 and ACURDION's Fig. 4), written as plain SVG with no
// script, deterministic byte for byte.
package plot

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
)

// Cell is one non-zero entry of a matrix.
type Cell struct {
	Row, Col int
	Value    float64
}

// HeatmapOptions label a heat map.
type HeatmapOptions struct {
	Title              string
	RowLabel, ColLabel string
	// Unit names the values in the legend ("bytes", "messages").
	Unit string
}

// MaxSide is the largest number of rows and columns a heat map draws: a
// larger matrix is binned, each drawn cell summing a square block of
// ranks, so that the figure stays small at 100,000 ranks.
const MaxSide = 512

// layout of the figure, in pixels.
const (
	plotSize   = 600
	marginLeft = 70
	marginTop  = 50
	legendGap  = 20
	legendW    = 16
	width      = marginLeft + plotSize + legendGap + legendW + 110
	height     = marginTop + plotSize + 50
)

// Heatmap writes an n x n matrix given by its non-zero cells as an SVG
// heat map: rows down, columns across, colours on a logarithmic scale from
// the smallest to the largest value (viridis), with a legend.
func Heatmap(w io.Writer, n int, cells []Cell, o HeatmapOptions) error {
	if n < 1 {
		return fmt.Errorf("plot: a heat map needs at least one row, got %d", n)
	}
	bin := (n + MaxSide - 1) / MaxSide
	side := (n + bin - 1) / bin
	binned := binCells(cells, bin)
	lo, hi := valueRange(binned)
	cell := float64(plotSize) / float64(side)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(bw, `<text x="%d" y="20" font-size="14">%s</text>`+"\n", marginLeft, html.EscapeString(o.Title))
	fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f4f4f4" stroke="#888"/>`+"\n", marginLeft, marginTop, plotSize, plotSize)
	for _, c := range binned {
		fmt.Fprintf(bw, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`+"\n",
			num(marginLeft+float64(c.Col)*cell), num(marginTop+float64(c.Row)*cell), num(cell), num(cell),
			viridis(scale(c.Value, lo, hi)), cellTitle(c, bin, o))
	}
	axes(bw, n, o)
	legend(bw, lo, hi, o.Unit)
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// binCells sums the cells into blocks of bin x bin, in row then column
// order, dropping non-positive values.
func binCells(cells []Cell, bin int) []Cell {
	sum := map[[2]int]float64{}
	for _, c := range cells {
		if c.Value > 0 {
			sum[[2]int{c.Row / bin, c.Col / bin}] += c.Value
		}
	}
	out := make([]Cell, 0, len(sum))
	for k, v := range sum {
		out = append(out, Cell{k[0], k[1], v})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Row != out[j].Row {
			return out[i].Row < out[j].Row
		}
		return out[i].Col < out[j].Col
	})
	return out
}

func valueRange(cells []Cell) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for _, c := range cells {
		lo, hi = math.Min(lo, c.Value), math.Max(hi, c.Value)
	}
	if len(cells) == 0 {
		lo = 0
	}
	return lo, hi
}

// scale maps v to [0, 1] on a logarithmic scale from lo to hi.
func scale(v, lo, hi float64) float64 {
	if hi <= lo {
		return 1
	}
	return math.Log(v/lo) / math.Log(hi/lo)
}

// viridisStops are matplotlib's viridis at 0, 1/4, 1/2, 3/4 and 1.
var viridisStops = [][3]float64{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}

// viridis returns the colour of t in [0, 1], interpolated between the stops.
func viridis(t float64) string {
	t = math.Min(math.Max(t, 0), 1) * float64(len(viridisStops)-1)
	i := min(int(t), len(viridisStops)-2)
	f := t - float64(i)
	var rgb [3]int
	for k := range rgb {
		rgb[k] = int(math.Round(viridisStops[i][k]*(1-f) + viridisStops[i+1][k]*f))
	}
	return fmt.Sprintf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2])
}

func cellTitle(c Cell, bin int, o HeatmapOptions) string {
	if bin == 1 {
		return fmt.Sprintf("%d → %d: %s %s", c.Row, c.Col, num(c.Value), html.EscapeString(o.Unit))
	}
	return fmt.Sprintf("%d-%d → %d-%d: %s %s", c.Row*bin, c.Row*bin+bin-1, c.Col*bin, c.Col*bin+bin-1, num(c.Value), html.EscapeString(o.Unit))
}

// axes writes the ticks (0, a quarter, a half, three quarters, the last)
// and the axis labels.
func axes(bw *bufio.Writer, n int, o HeatmapOptions) {
	ticks := []int{0}
	for _, q := range []int{1, 2, 3} {
		if t := (n - 1) * q / 4; t > ticks[len(ticks)-1] {
			ticks = append(ticks, t)
		}
	}
	if n-1 > ticks[len(ticks)-1] {
		ticks = append(ticks, n-1)
	}
	per := float64(plotSize) / float64(n)
	for _, t := range ticks {
		pos := (float64(t) + 0.5) * per
		fmt.Fprintf(bw, `<text x="%s" y="%d" text-anchor="middle">%d</text>`+"\n", num(marginLeft+pos), marginTop-6, t)
		fmt.Fprintf(bw, `<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%d</text>`+"\n", marginLeft-6, num(marginTop+pos), t)
	}
	fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", marginLeft+plotSize/2, marginTop+plotSize+30, html.EscapeString(o.ColLabel))
	fmt.Fprintf(bw, `<text x="20" y="%d" text-anchor="middle" transform="rotate(-90 20 %d)">%s</text>`+"\n", marginTop+plotSize/2, marginTop+plotSize/2, html.EscapeString(o.RowLabel))
}

// legend writes the colour bar from lo (bottom) to hi (top), labelled at
// both ends and at the powers of ten between; where every cell has the
// same value, one swatch of the cells' colour says so instead of a scale
// whose two ends would read the same.
func legend(bw *bufio.Writer, lo, hi float64, unit string) {
	x := marginLeft + plotSize + legendGap
	label := func(y float64, v float64) {
		fmt.Fprintf(bw, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#444"/>`+"\n", x+legendW, num(y), x+legendW+3, num(y))
		fmt.Fprintf(bw, `<text x="%d" y="%s" dominant-baseline="middle">%s</text>`+"\n", x+legendW+5, num(y), si(v))
	}
	if hi <= lo {
		fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#888"/>`+"\n", x, marginTop, legendW, legendW, viridis(1))
		fmt.Fprintf(bw, `<text x="%d" y="%d" dominant-baseline="middle">%s %s</text>`+"\n", x+legendW+5, marginTop+legendW/2, si(hi), html.EscapeString(unit))
		fmt.Fprintf(bw, `<text x="%d" y="%d">in every cell</text>`+"\n", x, marginTop+legendW+18)
		return
	}
	bw.WriteString(`<defs><linearGradient id="kairos-viridis" x1="0" y1="1" x2="0" y2="0">`)
	for i := range viridisStops {
		t := float64(i) / float64(len(viridisStops)-1)
		fmt.Fprintf(bw, `<stop offset="%s" stop-color="%s"/>`, num(t), viridis(t))
	}
	bw.WriteString("</linearGradient></defs>\n")
	fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="url(#kairos-viridis)" stroke="#888"/>`+"\n", x, marginTop, legendW, plotSize)
	y := func(v float64) float64 { return float64(marginTop+plotSize) - scale(v, lo, hi)*plotSize }
	label(y(hi), hi)
	label(y(lo), lo)
	for p := math.Pow(10, math.Ceil(math.Log10(lo))); p < hi; p *= 10 {
		// Powers of ten too near an end would overwrite its label.
		if y(lo)-y(p) > 16 && y(p)-y(hi) > 16 {
			label(y(p), p)
		}
	}
	fmt.Fprintf(bw, `<text x="%d" y="%d">%s (log)</text>`+"\n", x, marginTop+plotSize+30, html.EscapeString(unit))
}

// si writes v with an SI prefix (k, M, G, T) and up to 4 significant
// digits: 819200 is 819.2k.
func si(v float64) string {
	for _, p := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= p.f {
			return fmt.Sprintf("%.4g%s", v/p.f, p.s)
		}
	}
	return num(v)
}

// num writes v with up to 4 significant decimals, no trailing zeros.
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.4g", v)
}
