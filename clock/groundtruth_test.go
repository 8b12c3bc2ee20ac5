package clock

import (
	"strings"
	"testing"

	"kairos/workload"
)

// TestGroundTruth classifies generated workloads whose bottleneck is
// known by construction, on the three interconnects of Table I (1 Gflop/s
// per rank, the paper's defaults otherwise). The expected rows are the
// table the paper's Table IV would show for them.
func TestGroundTruth(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		params     func(p *workload.Params)
		want       string // ENET-1G ENET-10G QDR
	}{
		// 1e8 flops between 8 KiB halo exchanges: computation dominates
		// whatever the network.
		{"compute-dominated stencil", "stencil2d", func(p *workload.Params) {
			p.Ranks, p.Grid, p.Iterations, p.Flops = 16, nil, 10, 1e8
		}, "Comp. Comp. Comp."},
		// A chain of 8-byte ping-pongs, no computation: each message costs
		// its latency.
		{"small ping-pongs", "pingpong", func(p *workload.Params) {
			p.Bytes, p.Iterations = 8, 100
		}, "Latency Latency Latency"},
		// 16 ranks exchanging 4 MiB per pair in alltoalls, little
		// computation: the time is bandwidth time.
		{"large alltoalls", "ft", func(p *workload.Params) {
			p.Ranks, p.Bytes, p.Flops, p.Iterations = 16, 4<<20, 1e7, 3
		}, "BW BW BW"},
		// A task farm of 3 workers with log-normal task costs scaled by up
		// to 5x per worker: the master and the early finishers wait.
		{"imbalanced master-worker", "masterworker", func(p *workload.Params) {
			p.Ranks, p.Tasks, p.Imbalance = 4, 12, 4
		}, "Imb. Imb. Imb."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := generated(t, tc.kind, tc.params)
			opt := DefaultOptions()
			opt.Speed = 1e9
			cl, err := Classify(src, Interconnects, opt, DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range cl.Verdicts {
				got = append(got, v.Class)
			}
			if g := strings.Join(got, " "); g != tc.want {
				var b strings.Builder
				cl.WriteText(&b, tc.kind, false)
				t.Errorf("got %q, want %q\n%s", g, tc.want, b.String())
			}
		})
	}
}
