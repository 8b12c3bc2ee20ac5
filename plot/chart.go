package plot

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
)

// Series is one line of a line chart.
type Series struct {
	Name string
	X, Y []float64
	// Points draws the points alone, with no line between them.
	Points bool
	// Color draws the series in a colour of meaning (Slow for the slow
	// instances) instead of its grey line style.
	Color string
}

// maxMarkers is the most points a line is drawn with markers (and their
// tooltips); longer lines are drawn as lines alone, to keep files small.
const maxMarkers = 1000

// ChartOptions label a chart.
type ChartOptions struct {
	Title, XLabel, YLabel string
	// LogX puts the x axis on a base-2 logarithmic scale (what-if
	// factors: 0.5, 1, 2, 4).
	LogX bool
}

// chart is the drawing area of a chart and its data ranges.
type chart struct {
	bw              *bufio.Writer
	x0, x1, y0, y1  float64 // data ranges
	left, top, w, h float64 // plot area in pixels
	logX            bool
}

// plotWidth is a chart's plot area's width in pixels, unless it has more
// bars (maxPlotWidth at most).
const (
	plotWidth    = 560
	maxPlotWidth = 1200
)

// newChart starts a chart whose plot area is width pixels wide.
func newChart(w io.Writer, o ChartOptions, width, x0, x1, y0, y1 float64) *chart {
	c := &chart{bw: bufio.NewWriter(w), x0: x0, x1: x1, y0: y0, y1: y1, left: 80, top: 40, w: width, h: 360, logX: o.LogX}
	total := num(c.w + 260)
	fmt.Fprintf(c.bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%d" viewBox="0 0 %s %d" font-family="sans-serif" font-size="12">`+"\n", total, 460, total, 460)
	fmt.Fprintf(c.bw, `<rect width="%s" height="460" fill="white"/>`+"\n", total)
	fmt.Fprintf(c.bw, `<text x="%s" y="22" font-size="14">%s</text>`+"\n", num(c.left), html.EscapeString(o.Title))
	fmt.Fprintf(c.bw, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888"/>`+"\n", num(c.left), num(c.top), num(c.w), num(c.h))
	fmt.Fprintf(c.bw, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(c.left+c.w/2), num(c.top+c.h+40), html.EscapeString(o.XLabel))
	fmt.Fprintf(c.bw, `<text x="18" y="%s" text-anchor="middle" transform="rotate(-90 18 %s)">%s</text>`+"\n", num(c.top+c.h/2), num(c.top+c.h/2), html.EscapeString(o.YLabel))
	return c
}

func (c *chart) px(x float64) float64 {
	if c.logX {
		x, x0, x1 := math.Log2(x), math.Log2(c.x0), math.Log2(c.x1)
		if x1 == x0 {
			return c.left + c.w/2
		}
		return c.left + (x-x0)/(x1-x0)*c.w
	}
	if c.x1 == c.x0 {
		return c.left + c.w/2
	}
	return c.left + (x-c.x0)/(c.x1-c.x0)*c.w
}

func (c *chart) py(y float64) float64 {
	if c.y1 == c.y0 {
		return c.top + c.h/2
	}
	return c.top + c.h - (y-c.y0)/(c.y1-c.y0)*c.h
}

// yTicks draws the y axis' ticks and grid at nice values.
func (c *chart) yTicks() {
	for _, t := range niceTicks(c.y0, c.y1, 5) {
		y := c.py(t)
		fmt.Fprintf(c.bw, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#ddd"/>`+"\n", num(c.left), num(y), num(c.left+c.w), num(y))
		fmt.Fprintf(c.bw, `<text x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", num(c.left-6), num(y), num(t))
	}
}

// xTick draws an x tick labelled with its value.
func (c *chart) xTick(x float64, label string) {
	fmt.Fprintf(c.bw, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(c.px(x)), num(c.top+c.h+18), html.EscapeString(label))
}

// legend lists the parts with their colours right of the plot.
func (c *chart) legend(parts []Part) {
	for i, p := range parts {
		y := c.top + 10 + float64(i)*18
		fmt.Fprintf(c.bw, `<rect x="%s" y="%s" width="12" height="12" fill="%s"/>`+"\n", num(c.left+c.w+14), num(y-6), p.Color)
		fmt.Fprintf(c.bw, `<text x="%s" y="%s" dominant-baseline="middle">%s</text>`+"\n", num(c.left+c.w+32), num(y), html.EscapeString(p.Name))
	}
}

// lineLegend lists the series with their line styles right of the plot.
func (c *chart) lineLegend(series []Series) {
	for i, s := range series {
		y := c.top + 10 + float64(i)*18
		x := c.left + c.w + 14
		colour, dash, marker := seriesStyle(s, i)
		if !s.Points {
			fmt.Fprintf(c.bw, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>`+"\n", num(x), num(y), num(x+24), num(y), colour, dashAttr(dash))
		}
		c.marker(x+12, y, marker, colour, "")
		fmt.Fprintf(c.bw, `<text x="%s" y="%s" dominant-baseline="middle">%s</text>`+"\n", num(x+30), num(y), html.EscapeString(s.Name))
	}
}

// marker draws a point's marker, with a tooltip if title is not empty.
func (c *chart) marker(x, y float64, shape, colour, title string) {
	tip := ""
	if title != "" {
		tip = "<title>" + html.EscapeString(title) + "</title>"
	}
	switch shape {
	case "square":
		fmt.Fprintf(c.bw, `<rect x="%s" y="%s" width="7" height="7" fill="%s">%s</rect>`+"\n", num(x-3.5), num(y-3.5), colour, tip)
	case "triangle":
		fmt.Fprintf(c.bw, `<path d="M%s %sl4 7h-8z" fill="%s">%s</path>`+"\n", num(x), num(y-4), colour, tip)
	case "diamond":
		fmt.Fprintf(c.bw, `<path d="M%s %sl4 4.5-4 4.5-4-4.5z" fill="%s">%s</path>`+"\n", num(x), num(y-4.5), colour, tip)
	default:
		fmt.Fprintf(c.bw, `<circle cx="%s" cy="%s" r="3.5" fill="%s">%s</circle>`+"\n", num(x), num(y), colour, tip)
	}
}

func dashAttr(dash string) string {
	if dash == "" {
		return ""
	}
	return ` stroke-dasharray="` + dash + `"`
}

func (c *chart) end() error {
	c.bw.WriteString("</svg>\n")
	return c.bw.Flush()
}

// niceTicks returns about n round values, evenly spaced, from one at or
// below lo to one at or above hi.
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	var ticks []float64
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	for k := first; k <= last; k++ {
		ticks = append(ticks, k*step)
	}
	return ticks
}

// Lines writes a line chart of the series as SVG: y from 0 (or the
// lowest value, if negative) to the highest, markers at the points (of
// lines up to maxMarkers points), round x ticks, or on a logarithmic axis
// the x values of the first series.
func Lines(w io.Writer, series []Series, o ChartOptions) error {
	x0, x1, y1 := math.Inf(1), math.Inf(-1), 0.0
	y0 := 0.0
	for _, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: series %q has %d x values and %d y values", s.Name, len(s.X), len(s.Y))
		}
		for i := range s.X {
			if o.LogX && !(s.X[i] > 0) {
				return fmt.Errorf("plot: series %q: x = %g on a logarithmic axis", s.Name, s.X[i])
			}
			x0, x1 = math.Min(x0, s.X[i]), math.Max(x1, s.X[i])
			y0, y1 = math.Min(y0, s.Y[i]), math.Max(y1, s.Y[i])
		}
	}
	if math.IsInf(x0, 1) {
		return fmt.Errorf("plot: no point to draw")
	}
	ticks := niceTicks(y0, y1, 5)
	c := newChart(w, o, plotWidth, x0, x1, ticks[0], ticks[len(ticks)-1])
	c.yTicks()
	xs := series[0].X // on a logarithmic axis, the what-if factors
	if !o.LogX {
		xs = niceTicks(x0, x1, 8)
	}
	for _, x := range xs {
		if x >= x0 && x <= x1 {
			c.xTick(x, num(x))
		}
	}
	for i, s := range series {
		colour, dash, marker := seriesStyle(s, i)
		if !s.Points {
			fmt.Fprintf(c.bw, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="`, colour, dashAttr(dash))
			for k, xy := range c.pixels(s) {
				if k > 0 {
					c.bw.WriteByte(' ')
				}
				fmt.Fprintf(c.bw, "%s,%s", num(xy[0]), num(xy[1]))
			}
			c.bw.WriteString(`"/>` + "\n")
		}
		if !s.Points && len(s.X) > maxMarkers {
			continue
		}
		drawn := map[[2]int32]bool{}
		for k := range s.X {
			x, y := c.px(s.X[k]), c.py(s.Y[k])
			// A marker on one already drawn hides nothing more: a
			// million slow instances are drawn as the pixels they cover.
			if at := [2]int32{int32(math.Round(x)), int32(math.Round(y))}; !drawn[at] {
				drawn[at] = true
				c.marker(x, y, marker, colour, s.Name+": "+num(s.X[k])+", "+num(s.Y[k]))
			}
		}
	}
	if len(series) > 1 {
		c.lineLegend(series)
	}
	return c.end()
}

// seriesStyle returns series i's colour, dashes and marker: its colour of
// meaning if it has one, else the i-th grey line style.
func seriesStyle(s Series, i int) (colour, dash, marker string) {
	st := lineStyles[i%len(lineStyles)]
	if s.Color != "" {
		return s.Color, "", "circle"
	}
	return st.color, st.dash, st.marker
}

// denseBars is the number of bars beyond which bars touch and only round
// labels are written: one bar per rank stays readable at 1,024 ranks.
const denseBars = 64

// Bars writes a stacked bar chart as SVG: one bar per label, its segments
// the values of each part (stacks[k][i] is label i's value of part k).
// Beyond denseBars bars, the bars touch and the labels are written at
// round intervals.
func Bars(w io.Writer, labels []string, parts []Part, stacks [][]float64, o ChartOptions) error {
	if len(labels) == 0 || len(stacks) != len(parts) {
		return fmt.Errorf("plot: %d bars, %d stacks for %d parts", len(labels), len(stacks), len(parts))
	}
	top := 0.0
	for i := range labels {
		sum := 0.0
		for k := range stacks {
			if len(stacks[k]) != len(labels) {
				return fmt.Errorf("plot: stack %q has %d values for %d bars", parts[k].Name, len(stacks[k]), len(labels))
			}
			sum += math.Max(stacks[k][i], 0)
		}
		top = math.Max(top, sum)
	}
	ticks := niceTicks(0, top, 5)
	// Many bars widen the plot to a pixel a bar, as far as maxPlotWidth,
	// and are drawn with crisp edges: at 1,024 ranks each rank is a
	// column of pixels in its own colours, not a blur.
	width, crisp := float64(plotWidth), ""
	if len(labels) > denseBars {
		width = min(max(plotWidth, float64(len(labels))), maxPlotWidth)
		crisp = ` shape-rendering="crispEdges"`
	}
	c := newChart(w, o, width, 0, float64(len(labels)), 0, ticks[len(ticks)-1])
	c.yTicks()
	slot := c.w / float64(len(labels))
	fill, every := 0.8, max(1, len(labels)/16) // at most about 16 labels
	if len(labels) > denseBars {
		fill = 1
		every = int(niceTicks(0, float64(len(labels)), 8)[1])
	}
	fmt.Fprintf(c.bw, "<g%s>\n", crisp)
	for i, l := range labels {
		x := c.left + float64(i)*slot
		if i%every == 0 {
			fmt.Fprintf(c.bw, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(x+slot/2), num(c.top+c.h+18), html.EscapeString(l))
		}
		base := 0.0
		for k := range stacks {
			v := math.Max(stacks[k][i], 0)
			y0, y1 := c.py(base), c.py(base+v)
			fmt.Fprintf(c.bw, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
				num(x+slot*(1-fill)/2), num(y1), num(slot*fill), num(y0-y1), parts[k].Color, html.EscapeString(l), html.EscapeString(parts[k].Name), num(v))
			base += v
		}
	}
	c.bw.WriteString("</g>\n")
	c.legend(parts)
	return c.end()
}

// pixels returns line s's points in the chart's coordinates, as drawn at
// its resolution: of the points of one pixel column in a row, the
// first, the lowest, the highest and the last, in their order (a line
// of 15 M pattern instances is then a few thousand points, drawn the
// same).
func (c *chart) pixels(s Series) [][2]float64 {
	out := make([][2]float64, 0, min(len(s.X), 4*int(c.w)+8))
	for k := 0; k < len(s.X); {
		col := math.Floor(c.px(s.X[k]))
		lo, hi, end := k, k, k+1
		for end < len(s.X) && math.Floor(c.px(s.X[end])) == col {
			if s.Y[end] < s.Y[lo] {
				lo = end
			}
			if s.Y[end] > s.Y[hi] {
				hi = end
			}
			end++
		}
		for _, j := range sortedUnique(k, lo, hi, end-1) {
			out = append(out, [2]float64{c.px(s.X[j]), c.py(s.Y[j])})
		}
		k = end
	}
	return out
}

// sortedUnique returns the indexes ascending, each once.
func sortedUnique(ix ...int) []int {
	slices.Sort(ix)
	return slices.Compact(ix)
}
