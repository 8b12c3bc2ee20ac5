package plot

import (
	"bytes"
	"encoding/xml"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []float64
	}{
		{0, 1.3, []float64{0, 0.5, 1, 1.5}},
		{0, 10, []float64{0, 2, 4, 6, 8, 10}},
		{0, 7, []float64{0, 2, 4, 6, 8}},
		{-3, 3, []float64{-4, -2, 0, 2, 4}},
		{0, 0.0042, []float64{0, 0.001, 0.002, 0.003, 0.004, 0.005}},
		{5, 5, []float64{5}},
	} {
		if got := niceTicks(c.lo, c.hi, 5); !slices.EqualFunc(got, c.want, func(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }) {
			t.Errorf("niceTicks(%g, %g) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

// TestLines draws two series on a logarithmic x axis (golden SVG).
func TestLines(t *testing.T) {
	series := []Series{
		{Name: "latency x1", X: []float64{0.5, 1, 2, 4}, Y: []float64{4, 3, 2.5, 2.25}},
		{Name: "latency x0.1", X: []float64{0.5, 1, 2, 4}, Y: []float64{3, 2, 1.5, 1.25}},
	}
	var b bytes.Buffer
	if err := Lines(&b, series, ChartOptions{Title: "sweep", XLabel: "bandwidth scale", YLabel: "time (s)", LogX: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "lines.svg", b.Bytes())
	// On a log2 axis the four points are evenly spaced: 80, 266.7, 453.3, 640.
	if !strings.Contains(b.String(), `points="80,40 266.7,130 453.3,175 640,197.5"`) {
		t.Errorf("first series' points:\n%s", b.String())
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil {
		t.Error(err)
	}
	for _, bad := range [][]Series{nil, {{Name: "x", X: []float64{1}, Y: nil}}, {{Name: "zero", X: []float64{0}, Y: []float64{1}}}} {
		if err := Lines(&b, bad, ChartOptions{LogX: true}); err == nil {
			t.Errorf("%v drawn", bad)
		}
	}
}

// TestBars draws three ranks' stacked times (golden SVG).
func TestBars(t *testing.T) {
	var b bytes.Buffer
	err := Bars(&b, []string{"0", "1", "2"}, []Part{{"computation", Computation}, {"communication", Communication}, {"wait", Waiting}},
		[][]float64{{1, 1, 2}, {0.5, 0.25, 0.5}, {0.5, 0.75, 0}}, ChartOptions{Title: "ranks", XLabel: "rank", YLabel: "seconds"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "bars.svg", b.Bytes())
	if strings.Count(b.String(), "<title>") != 9 || !strings.Contains(b.String(), "<title>2 computation: 2</title>") {
		t.Errorf("bars:\n%s", b.String())
	}
	if err := Bars(&b, []string{"0"}, []Part{{"a", Computation}}, [][]float64{{1, 2}}, ChartOptions{}); err == nil {
		t.Error("a stack of the wrong length was drawn")
	}
}

// TestBarsDense: at 1,024 ranks the bars touch and only round ranks are
// labelled, about eight of them, so that no two labels overlap.
func TestBarsDense(t *testing.T) {
	n := 1024
	labels := make([]string, n)
	vals := make([]float64, n)
	for i := range labels {
		labels[i] = strconv.Itoa(i)
		vals[i] = float64(i % 7)
	}
	var b bytes.Buffer
	if err := Bars(&b, labels, []Part{{"computation", Computation}}, [][]float64{vals}, ChartOptions{Title: "ranks"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	var written []string
	for _, l := range labels {
		if strings.Contains(s, `text-anchor="middle">`+l+`</text>`) {
			written = append(written, l)
		}
	}
	if want := []string{"0", "200", "400", "600", "800", "1000"}; !slices.Equal(written, want) {
		t.Errorf("labels %v, want %v", written, want)
	}
	if strings.Count(s, "<rect x=") != n+2 { // the background and the legend's swatch
		t.Errorf("%d rects, want %d", strings.Count(s, "<rect x="), n+2)
	}
	// The plot widens to a pixel a bar, the bars touch, their edges crisp.
	if !strings.Contains(s, `<rect x="81" y=`) || !strings.Contains(s, `width="1" height=`) || !strings.Contains(s, `<g shape-rendering="crispEdges">`) {
		t.Errorf("bars not a pixel wide each, or not crisp")
	}
}

// TestLinesStyles: series with no meaning are drawn in greys with their
// own dashes and markers; a series with a colour of meaning keeps it.
func TestLinesStyles(t *testing.T) {
	series := []Series{
		{Name: "CP1", X: []float64{1, 2}, Y: []float64{1, 2}},
		{Name: "CP2", X: []float64{1, 2}, Y: []float64{2, 1}},
		{Name: "slow", X: []float64{2}, Y: []float64{3}, Points: true, Color: Slow},
	}
	var b bytes.Buffer
	if err := Lines(&b, series, ChartOptions{}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{`stroke="#000000" stroke-width="2" points=`, `stroke="#555555" stroke-width="2" stroke-dasharray="8 4" points=`,
		`fill="` + Slow + `"><title>slow: 2, 3</title>`, `<rect x="` /* CP2's square markers */} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	for _, meaning := range []string{Computation, Communication, Collective, Latency, Waiting} {
		if strings.Contains(s, meaning) {
			t.Errorf("a series with no meaning is drawn in %s", meaning)
		}
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil {
		t.Error(err)
	}
}

// TestShares draws Table IV's four traces on three interconnects as
// shares (golden SVG): every label on its own row, the traces' names as
// group headings, the class and time after each bar.
func TestShares(t *testing.T) {
	parts := []Part{{"computation", Computation}, {"wait", Waiting}, {"latency", Latency}, {"bandwidth", Communication}}
	var rows []ShareRow
	for _, tr := range []string{"st.ktr", "pp.ktr"} {
		for _, ic := range []string{"ENET-1G", "QDR"} {
			rows = append(rows, ShareRow{Group: tr, Label: ic, Note: "Comp. · 1 s", Values: []float64{0.9, 0.05, 0.05, 0}})
		}
	}
	var b bytes.Buffer
	if err := Shares(&b, rows, parts, ChartOptions{Title: "what bounds each trace"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "shares.svg", b.Bytes())
	s := b.String()
	if strings.Count(s, `font-weight="bold">`) != 2 || strings.Count(s, ">ENET-1G</text>") != 2 {
		t.Errorf("groups or labels:\n%s", s)
	}
	if !strings.Contains(s, "<title>QDR computation: 0.9 (90.0%)</title>") {
		t.Errorf("shares:\n%s", s)
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil {
		t.Error(err)
	}
	if err := Shares(&b, []ShareRow{{Values: []float64{1}}}, parts, ChartOptions{}); err == nil {
		t.Error("a row of the wrong length was drawn")
	}
}

// TestLinesLong draws a line of a million points and a million slow
// points on few pixels: the file holds a few points a pixel column, the
// line's peak among them, and one marker a pixel.
func TestLinesLong(t *testing.T) {
	const n = 1_000_000
	line := Series{Name: "CP1", X: make([]float64, n), Y: make([]float64, n)}
	slow := Series{Name: "slow", Points: true, X: make([]float64, n), Y: make([]float64, n)}
	for i := range n {
		line.X[i], line.Y[i] = float64(i), float64(i%97)
		slow.X[i], slow.Y[i] = float64(i), 200
	}
	line.Y[n/2] = 500 // the peak, alone in its column
	var b bytes.Buffer
	if err := Lines(&b, []Series{line, slow}, ChartOptions{Title: "long"}); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 1<<20 {
		t.Errorf("%d bytes of SVG for a million points, want at most 1 MiB", b.Len())
	}
	var doc struct {
		Polylines []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
		Circles []struct{} `xml:"circle"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Polylines) != 1 {
		t.Fatalf("%d polylines, want 1", len(doc.Polylines))
	}
	pts := strings.Fields(doc.Polylines[0].Points)
	if len(pts) > 4*plotWidth {
		t.Errorf("%d points in the line, want at most %d (4 a pixel column)", len(pts), 4*plotWidth)
	}
	top := 1e9
	for _, p := range pts {
		y, err := strconv.ParseFloat(p[strings.IndexByte(p, ',')+1:], 64)
		if err != nil {
			t.Fatal(err)
		}
		top = min(top, y)
	}
	var full bytes.Buffer
	if err := Lines(&full, []Series{{Name: "peak", X: []float64{0, float64(n / 2), n - 1}, Y: []float64{0, 500, 0}}}, ChartOptions{Title: "long"}); err != nil {
		t.Fatal(err)
	}
	if want := `,` + num(top) + ` `; !strings.Contains(full.String(), want) {
		t.Errorf("the line's highest point is at y = %s, not the peak's:\n%s", num(top), full.String())
	}
	if len(doc.Circles) == 0 || len(doc.Circles) > 4*plotWidth {
		t.Errorf("%d markers for a million points on one row, want one a pixel column at most", len(doc.Circles))
	}
}
