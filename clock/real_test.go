package clock

import (
	"testing"

	"kairos/format"
	_ "kairos/format/otf2"
	_ "kairos/format/ti"
	"kairos/internal/testenv"
)

// TestRealTraces replays traces written by Score-P (timed OTF2: the
// computation is the recorded gaps) and by SimGrid (time-independent:
// volumes at 1 Gflop/s) on the three interconnects, and checks that every
// rank's counters add up to its clock and that faster networks are never
// slower.
func TestRealTraces(t *testing.T) {
	for _, rel := range []string{
		"traces/otf2/tiny_mpi/traces.otf2",
		"traces/otf2/pipit-ping-pong-otf2/traces.otf2",
		"traces/otf2/sst-macro-mpi-coverage/traces.otf2",
		"traces/otf2/tracer-stencil4d-32/traces.otf2",
		"traces/ti/smpi-ring4/ring4.ti",
		"traces/ti/simgrid-replay-multiple-32/is32-flat.txt",
	} {
		t.Run(rel, func(t *testing.T) {
			path := testenv.Shared(t, rel)
			src, _, err := format.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			opt := DefaultOptions()
			opt.Speed, opt.PerRank = 1e9, true
			for _, p := range Interconnects[0].Sweeps()[7:14] { // 1 GbE, BW/8 .. 8BW
				opt.Configs = append(opt.Configs, p.Config)
			}
			res, err := Replay(src, opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.Events == 0 {
				t.Fatal("no events replayed")
			}
			for r, pr := range res.PerRank {
				for c := range opt.Configs {
					if sum := pr.Comp + pr.Wait[c] + pr.Lat[c] + pr.BW[c]; !near(sum, pr.Clock[c]) {
						t.Errorf("rank %d %v: counters add up to %g, clock %g", r, opt.Configs[c], sum, pr.Clock[c])
					}
				}
			}
			for c := 1; c < len(res.Time); c++ {
				if res.Time[c] > res.Time[c-1]*(1+1e-12) {
					t.Errorf("%v predicts %g s, slower than %v's %g s", opt.Configs[c], res.Time[c], opt.Configs[c-1], res.Time[c-1])
				}
			}
		})
	}
}
