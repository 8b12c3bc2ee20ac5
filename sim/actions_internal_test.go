package sim

import (
	"fmt"
	"testing"

	"kairos/platform"
	"kairos/trace"
	"kairos/workload"
)

// TestOthersCounted: every action that is not a computation (a transfer,
// a sleep, a rank's start) is counted alive from its start to its end,
// so that the count is back to 0 when a replay ends: a count left above
// 0 would make no date quiescent after it, and silently end the period
// skipping (quiescent).
func TestOthersCounted(t *testing.T) {
	sleeps := trace.New(2, trace.NewMeta())
	for r := range 2 {
		for _, e := range []trace.Event{trace.NewEvent(trace.Init), trace.NewEvent(trace.Sleep), trace.NewEvent(trace.Barrier), trace.NewEvent(trace.Finalize)} {
			if e.Kind == trace.Sleep {
				e.Compute = 0.5
			}
			sleeps.Ranks[r].Append(&e)
		}
	}
	sources := map[string]trace.Source{"sleeps": sleeps}
	for _, kind := range workload.Kinds() {
		p, err := workload.Defaults(kind)
		if err != nil {
			t.Fatal(err)
		}
		p.Iterations, p.Noise, p.Imbalance = 2, 0.05, 0.1
		if sources[kind], err = workload.New(kind, p); err != nil {
			t.Fatal(err)
		}
	}
	for name, src := range sources {
		pl, err := platform.ParseCluster(fmt.Sprintf("%dx1Gf,125MBps,50us", src.NumRanks()))
		if err != nil {
			t.Fatal(err)
		}
		m, err := FromPlatform(pl, pl.Hosts)
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.StartDates = make([]float64, src.NumRanks())
		cfg.StartDates[0] = 0.25 // a start action
		s, err := newSim(src, m, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = s.loop()
		s.close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.others != 0 {
			t.Errorf("%s: %d actions other than computations counted alive after the replay", name, s.others)
		}
	}
}
