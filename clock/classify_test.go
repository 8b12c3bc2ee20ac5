package clock

import (
	"fmt"
	"strings"
	"testing"
)

// TestTableIII checks that the 21 configurations generated for each
// interconnect of Table I are those of the paper's Table III, in its
// order: the latency set, the bandwidth set, the joint set.
func TestTableIII(t *testing.T) {
	table := map[string]string{
		"1gbe": "(1, 6.25) (1, 12.5) (1, 25) (1, 50) (1, 100) (1, 200) (1, 400) " +
			"(0.125, 50) (0.25, 50) (0.5, 50) (1, 50) (2, 50) (4, 50) (8, 50) " +
			"(0.125, 400) (0.25, 200) (0.5, 100) (1, 50) (2, 25) (4, 12.5) (8, 6.25)",
		"10gbe": "(10, 0.625) (10, 1.25) (10, 2.5) (10, 5) (10, 10) (10, 20) (10, 40) " +
			"(1.25, 5) (2.5, 5) (5, 5) (10, 5) (20, 5) (40, 5) (80, 5) " +
			"(1.25, 40) (2.5, 20) (5, 10) (10, 5) (20, 2.5) (40, 1.25) (80, 0.625)",
		"qdr": "(32, 0.1625) (32, 0.325) (32, 0.65) (32, 1.3) (32, 2.6) (32, 5.2) (32, 10.4) " +
			"(4, 1.3) (8, 1.3) (16, 1.3) (32, 1.3) (64, 1.3) (128, 1.3) (256, 1.3) " +
			"(4, 10.4) (8, 5.2) (16, 2.6) (32, 1.3) (64, 0.65) (128, 0.325) (256, 0.1625)",
	}
	for _, ic := range Interconnects {
		var got []string
		sets := map[Sweep]int{}
		for _, p := range ic.Sweeps() {
			got = append(got, p.Config.String())
			sets[p.Sweep]++
		}
		if g := strings.Join(got, " "); g != table[ic.Name] {
			t.Errorf("%s:\n got %s\nwant %s", ic.Name, g, table[ic.Name])
		}
		if sets[LatencySweep] != 7 || sets[BandwidthSweep] != 7 || sets[JointSweep] != 7 {
			t.Errorf("%s: sets of %v configurations, want 7 each", ic.Name, sets)
		}
	}
}

// TestTableI checks the named interconnects of Table I.
func TestTableI(t *testing.T) {
	for _, tc := range []struct {
		name    string
		bw, lat float64
	}{{"1gbe", 1, 50}, {"10gbe", 10, 5}, {"QDR", 32, 1.3}, {"ENET-10G", 10, 5}, {"2.5,3", 2.5, 3}, {"hdr=200,0.6", 200, 0.6}} {
		ic, err := ParseInterconnect(tc.name)
		if err != nil || ic.BW != tc.bw || ic.Lat != tc.lat {
			t.Errorf("ParseInterconnect(%q) = %+v, %v; want (%g, %g)", tc.name, ic, err, tc.bw, tc.lat)
		}
	}
	for _, bad := range []string{"", "ib", "0,5", "1,-1", "1,2,3", "x=1", "NaN,1"} {
		if _, err := ParseInterconnect(bad); err == nil {
			t.Errorf("ParseInterconnect(%q) succeeded", bad)
		}
	}
}

// synthetic returns the 21 predictions of ic for a trace whose
// computation, wait, latency and bandwidth times (at (BW, L)) are given,
// latency time scaling with L and bandwidth time with 1/BW.
func synthetic(ic Interconnect, comp, wait, lat, bw float64) []Prediction {
	var ps []Prediction
	for _, p := range ic.Sweeps() {
		l := lat * p.Lat / ic.Lat
		b := bw * ic.BW / p.BW
		total := comp + wait + l + b
		ps = append(ps, Prediction{Point: p, Time: total, Comp: comp, Wait: wait, Latency: l, Bandwidth: b, RankTime: total})
	}
	return ps
}

// TestRules checks each class of Section IV-C on synthetic predictions,
// and the I/O class where MPI-IO outweighs computation.
func TestRules(t *testing.T) {
	ic := Interconnects[0]
	for _, tc := range []struct {
		comp, wait, lat, bw, io float64
		want                    string
	}{
		{95, 2, 2, 1, 0, "Comp."},
		{50, 50, 0, 0, 0, "Imb."},
		{85, 15, 0, 0, 0, "Imb.-s"},
		{50, 0, 0, 50, 0, "BW"},
		{80, 0, 0, 20, 0, "BW-s"},
		{50, 0, 50, 0, 0, "Latency"},
		{80, 0, 20, 0, 0, "Latency-s"},
		{50, 0, 25, 25, 0, "Comm."},
		{85, 0, 7, 8, 0, "Comm.-s"},
		{70, 20, 5, 5, 0, "Unclassified"}, // communication 30%, but mostly wait below 25%
		{10, 3, 1, 1, 85, "I/O"},
		{50, 3, 1, 1, 45, "Comp."}, // I/O, but less than computation
		{10, 40, 1, 1, 48, "Imb."}, // waiting is the bound, whatever the I/O
		// Communication just above 10%, no rule holding: the I/O that
		// dominates bounds it (PnetCDF's writes; "Unclassified" before).
		{1.3, 9.9, 0.2, 0, 88.6, "I/O"},
	} {
		ps := synthetic(ic, tc.comp, tc.wait, tc.lat, tc.bw)
		for i := range ps {
			ps[i].IO = tc.io
			ps[i].Time += tc.io
			ps[i].RankTime += tc.io
		}
		v := Decide(ic, ps, DefaultThresholds())
		if v.Class != tc.want {
			var why []string
			for _, r := range v.Rules {
				why = append(why, fmt.Sprintf("%s %v: %s", r.Rule, r.Holds, r.Why))
			}
			t.Errorf("comp %g wait %g lat %g bw %g: %s, want %s\n%s", tc.comp, tc.wait, tc.lat, tc.bw, v.Class, tc.want, strings.Join(why, "\n"))
		}
	}
}

// TestPredictionTableIO: MPI-IO time has a column of its own in the
// tables where a prediction has some (it was in --json alone, and the
// table's columns could not account for the time).
func TestPredictionTableIO(t *testing.T) {
	for _, io := range []float64{0, 0.25} {
		var b strings.Builder
		p := Prediction{Point: Point{Config: Config{BW: 1, Lat: 1}}, Time: 1.5, Comp: 1, IO: io}
		if err := writePredictions(&b, []Prediction{p}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "I/O s") && strings.Contains(b.String(), "0.250000"); got != (io > 0) {
			t.Errorf("I/O %g:\n%s", io, b.String())
		}
	}
}

// TestAgainst: a value and its threshold are written with the decimals
// that tell them apart.
func TestAgainst(t *testing.T) {
	for _, tc := range []struct {
		x, t   float64
		format func(float64, int) string
		want   string
	}{
		{0.25, 0.1, pctIn, "25.0% >= 10.0%"},
		{0.09996, 0.1, pctIn, "9.996% < 10.000%"},
		{0.1, 0.1, pctIn, "10.0% >= 10.0%"},
		{1.999, 2, timesIn, "1.999x < 2.000x"},
		{1.01, 2, timesIn, "1.01x < 2.00x"},
	} {
		if got := against(tc.x, tc.t, tc.format); got != tc.want {
			t.Errorf("against(%g, %g) = %q, want %q", tc.x, tc.t, got, tc.want)
		}
	}
}
