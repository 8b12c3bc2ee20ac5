package plot

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
)

// ShareRow is one horizontal bar of a shares chart: Values, one per part,
// are drawn as shares of their sum, left to right; Note is written after
// the bar. Rows of the same Group are drawn together under its name.
type ShareRow struct {
	Group, Label, Note string
	Values             []float64
}

// layout of a shares chart, in pixels.
const (
	shareLabelW = 150
	shareBarW   = 420
	shareRowH   = 22
	shareGroupH = 22
)

// Shares writes a chart of horizontal bars, each split into the shares of
// its parts, as SVG. Unlike stacked bars on one scale, bars of very
// different totals (a 2 s and a 20 ms trace) stay readable side by side,
// and the labels, written left of the bars, never overlap however many
// rows there are.
func Shares(w io.Writer, rows []ShareRow, parts []Part, o ChartOptions) error {
	if len(rows) == 0 {
		return fmt.Errorf("plot: no bar to draw")
	}
	groups := 0
	for i, r := range rows {
		if len(r.Values) != len(parts) {
			return fmt.Errorf("plot: bar %q has %d values for %d parts", r.Label, len(r.Values), len(parts))
		}
		if r.Group != "" && (i == 0 || r.Group != rows[i-1].Group) {
			groups++
		}
	}
	top := 40.0
	height := top + float64(len(rows))*shareRowH + float64(groups)*shareGroupH + 50
	width := shareLabelW + shareBarW + 250
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%s" viewBox="0 0 %d %s" font-family="sans-serif" font-size="12">`+"\n", width, num(height), width, num(height))
	fmt.Fprintf(bw, `<rect width="%d" height="%s" fill="white"/>`+"\n", width, num(height))
	fmt.Fprintf(bw, `<text x="10" y="22" font-size="14">%s</text>`+"\n", html.EscapeString(o.Title))
	y := top
	for i, r := range rows {
		if r.Group != "" && (i == 0 || r.Group != rows[i-1].Group) {
			fmt.Fprintf(bw, `<text x="10" y="%s" font-weight="bold">%s</text>`+"\n", num(y+15), html.EscapeString(r.Group))
			y += shareGroupH
		}
		fmt.Fprintf(bw, `<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", shareLabelW-8, num(y+shareRowH/2), html.EscapeString(r.Label))
		sum := 0.0
		for _, v := range r.Values {
			sum += math.Max(v, 0)
		}
		x := float64(shareLabelW)
		for k, v := range r.Values {
			if sum == 0 || v <= 0 {
				continue
			}
			wd := v / sum * shareBarW
			fmt.Fprintf(bw, `<rect x="%s" y="%s" width="%s" height="%d" fill="%s"><title>%s %s: %s (%.1f%%)</title></rect>`+"\n",
				num(x), num(y+3), num(wd), shareRowH-6, parts[k].Color, html.EscapeString(r.Label), html.EscapeString(parts[k].Name), num(v), 100*v/sum)
			x += wd
		}
		fmt.Fprintf(bw, `<rect x="%d" y="%s" width="%d" height="%d" fill="none" stroke="#888"/>`+"\n", shareLabelW, num(y+3), shareBarW, shareRowH-6)
		fmt.Fprintf(bw, `<text x="%d" y="%s" dominant-baseline="middle">%s</text>`+"\n", shareLabelW+shareBarW+8, num(y+shareRowH/2), html.EscapeString(r.Note))
		y += shareRowH
	}
	for k, p := range parts {
		x := 10 + k*150
		fmt.Fprintf(bw, `<rect x="%d" y="%s" width="12" height="12" fill="%s"/>`+"\n", x, num(y+14), p.Color)
		fmt.Fprintf(bw, `<text x="%d" y="%s" dominant-baseline="middle">%s</text>`+"\n", x+18, num(y+20), html.EscapeString(p.Name))
	}
	if o.XLabel != "" {
		fmt.Fprintf(bw, `<text x="%d" y="%s" text-anchor="middle" fill="#555">%s</text>`+"\n", shareLabelW+shareBarW/2, num(y+42), html.EscapeString(o.XLabel))
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}
