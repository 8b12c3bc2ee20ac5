package capture_test

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"kairos/internal/testenv"
)

// TestTracerFlopsExact holds the TI trace's computation amounts to the
// exact decimal of nanoseconds x speed / 1e9 (testdata/flops.c prints
// them as the tracer writes them): whole numbers at 1 Gf/s whatever the
// gap (%.17g of the double read 5933412927.000001 for a gap of 5.9 s),
// 5.1 and not 5.0999999999999996 at 1.7 Gf/s (where %.17g was noisy on
// two lines in three); a speed with a fraction is written as the shortest
// decimal that reads back as the double.
func TestTracerFlopsExact(t *testing.T) {
	mpicc := testenv.Tool(t, "mpicc", "libopenmpi-dev")
	dir := t.TempDir()
	bin := compileWithTracer(t, dir, mpicc, "flops")
	type sample struct {
		ns    uint64
		speed float64
	}
	samples := []sample{{3235, 1e9}, {5933412927, 1e9}, {16275878294, 2e9}, {3, 1.7e9}, {6, 3.3e9}, {1263829709, 2.5e9},
		{3000000000, 1e8}, {1, 1e9}, {86400e9 * 30, 1e9}, {7, 1.5}, {123456789, 0.3e9 + 0.25}}
	rng := rand.New(rand.NewPCG(45, 1))
	for _, speed := range []float64{1e9, 2e9, 2.5e9, 1.7e9, 3.3e9, 1e8, 1.23e9, 2.4e9} {
		for mag := range 11 { // 1 ns to 100 s
			samples = append(samples, sample{uint64(rng.Float64()*10*math.Pow(10, float64(mag))) + 1, speed})
		}
	}
	var in strings.Builder
	for _, s := range samples {
		fmt.Fprintf(&in, "%d %.17g\n", s.ns, s.speed)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != len(samples) {
		t.Fatalf("%d lines for %d samples:\n%s", len(got), len(samples), out)
	}
	for i, s := range samples {
		var want string
		if s.speed == math.Trunc(s.speed) {
			exact := new(big.Rat).SetFrac(new(big.Int).Mul(new(big.Int).SetUint64(s.ns), big.NewInt(int64(s.speed))), big.NewInt(1e9))
			want = strings.TrimRight(strings.TrimRight(exact.FloatString(9), "0"), ".")
		} else {
			v := float64(s.ns) * s.speed / 1e9
			if want = strconv.FormatFloat(v, 'g', 15, 64); mustFloat(t, want) != v {
				want = strconv.FormatFloat(v, 'g', 17, 64)
			}
		}
		if got[i] != want {
			t.Errorf("%d ns at %g flop/s: %s, want %s", s.ns, s.speed, got[i], want)
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
