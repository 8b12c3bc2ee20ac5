package plot

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// golden compares got with testdata/name (KAIROS_UPDATE_GOLDEN=1 rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("KAIROS_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with KAIROS_UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n%s", path, got)
	}
}

// TestHeatmap draws a 4-rank ring (each rank sends 1,000 bytes to the
// next, rank 3 100,000 to rank 0) as a golden SVG: the smallest value
// takes the first viridis colour, the largest the last.
func TestHeatmap(t *testing.T) {
	cells := []Cell{{0, 1, 1000}, {1, 2, 1000}, {2, 3, 1000}, {3, 0, 100000}, {2, 2, 0}}
	var b bytes.Buffer
	if err := Heatmap(&b, 4, cells, HeatmapOptions{Title: "ring <4>", RowLabel: "source", ColLabel: "destination", Unit: "bytes"}); err != nil {
		t.Fatal(err)
	}
	golden(t, "ring4.svg", b.Bytes())
	s := b.String()
	for _, want := range []string{`fill="#440154"><title>0 → 1: 1000 bytes</title>`, `fill="#fde725"><title>3 → 0: 100000 bytes</title>`, "ring &lt;4&gt;"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if strings.Count(s, "<title>") != 4 {
		t.Errorf("%d cells drawn, want 4 (zero values are not)", strings.Count(s, "<title>"))
	}
	if err := xml.Unmarshal(b.Bytes(), new(struct{})); err != nil {
		t.Errorf("not well-formed XML: %v", err)
	}
}

// TestHeatmapBins: beyond MaxSide ranks, blocks of ranks are summed.
func TestHeatmapBins(t *testing.T) {
	n := 2*MaxSide + 1 // blocks of 3 ranks
	cells := []Cell{{0, 1, 5}, {1, 2, 7}, {n - 1, 0, 1}}
	var b bytes.Buffer
	if err := Heatmap(&b, n, cells, HeatmapOptions{Unit: "messages"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"<title>0-2 → 0-2: 12 messages</title>", "<title>1023-1025 → 0-2: 1 messages</title>"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if err := Heatmap(&b, 0, nil, HeatmapOptions{}); err == nil {
		t.Error("a 0-rank heat map was drawn")
	}
}

// TestHeatmapLegend: a colour bar from the smallest to the largest value,
// labelled at the powers of ten between; where every cell has one value
// (a periodic stencil), one swatch says so, not a bar with the same value
// at both ends.
func TestHeatmapLegend(t *testing.T) {
	var b bytes.Buffer
	if err := Heatmap(&b, 3, []Cell{{0, 1, 819200}, {1, 2, 819200}}, HeatmapOptions{Unit: "bytes"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if strings.Count(s, ">819.2k bytes</text>") != 1 || !strings.Contains(s, ">in every cell</text>") || strings.Contains(s, "linearGradient") {
		t.Errorf("one-value legend:\n%s", s)
	}
	b.Reset()
	if err := Heatmap(&b, 3, []Cell{{0, 1, 5}, {1, 2, 2e6}}, HeatmapOptions{Unit: "bytes"}); err != nil {
		t.Fatal(err)
	}
	s = b.String()
	for _, want := range []string{">5</text>", ">2M</text>", ">100</text>", ">1k</text>", ">10k</text>", ">100k</text>", "linearGradient"} {
		if !strings.Contains(s, want) {
			t.Errorf("legend lacks %q", want)
		}
	}
}

func TestViridis(t *testing.T) {
	for _, c := range []struct {
		t    float64
		want string
	}{{0, "#440154"}, {0.5, "#21918c"}, {1, "#fde725"}, {-1, "#440154"}, {2, "#fde725"}, {0.125, "#402a70"}} {
		if got := viridis(c.t); got != c.want {
			t.Errorf("viridis(%g) = %s, want %s", c.t, got, c.want)
		}
	}
}
