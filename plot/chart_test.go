package plot

import (
	"bytes"
	"encoding/xml"
	"slices"
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
	err := Bars(&b, []string{"0", "1", "2"}, []string{"computation", "communication", "wait"},
		[][]float64{{1, 1, 2}, {0.5, 0.25, 0.5}, {0.5, 0.75, 0}}, ChartOptions{Title: "ranks", XLabel: "rank", YLabel: "seconds"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "bars.svg", b.Bytes())
	if strings.Count(b.String(), "<title>") != 9 || !strings.Contains(b.String(), "<title>2 computation: 2</title>") {
		t.Errorf("bars:\n%s", b.String())
	}
	if err := Bars(&b, []string{"0"}, []string{"a"}, [][]float64{{1, 2}}, ChartOptions{}); err == nil {
		t.Error("a stack of the wrong length was drawn")
	}
}
