package otf2

import (
	"math"
	"math/rand/v2"
	"testing"
)

// slowCorrect is OTF2's correction as clock.correct made it before it
// kept a span of timestamps: every timestamp's arithmetic, from interval
// *cur on.
func slowCorrect(iv []clockInterval, cur *int, t uint64) uint64 {
	if len(iv) == 0 {
		return t
	}
	for *cur < len(iv)-1 && t > iv[*cur].end {
		*cur++
	}
	in := &iv[*cur]
	var diff float64
	if t >= in.begin {
		diff = float64(t - in.begin)
	} else {
		diff = -float64(in.begin - t)
	}
	return t + uint64(in.offset+int64(math.RoundToEven(in.slope*diff)))
}

// TestClockSpans corrects timestamps with the clock's spans and one by
// one, on clocks that drift fast and slow, either way, not at all and
// absurdly: the same corrections, whatever the order of the timestamps.
func TestClockSpans(t *testing.T) {
	offsets := map[string][]ClockOffset{
		"none":       nil,
		"one":        {{Time: 1000, Offset: 50}},
		"slow drift": {{Time: 1e6, Offset: -3}, {Time: 1e12, Offset: 4e5}, {Time: 2e12, Offset: 4e5 + 7}},
		"fast drift": {{Time: 0, Offset: 0}, {Time: 1e4, Offset: 3e3}, {Time: 2e4, Offset: -9e3}},
		"backwards":  {{Time: 5e8, Offset: 1e6}, {Time: 9e8, Offset: -2e6}},
		"steep":      {{Time: 1, Offset: 0}, {Time: 3, Offset: 1 << 60}},
		"far":        {{Time: 1 << 62, Offset: 1 << 40}, {Time: 1<<62 + 1<<61, Offset: -1 << 40}},
		"kinks":      {{Time: 0, Offset: 0}, {Time: 1e9, Offset: 1e3}, {Time: 2e9, Offset: -1e3}, {Time: 3e9, Offset: 5e3}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name, offs := range offsets {
		var ld localDefs
		for _, o := range offs {
			if err := ld.addOffset(o); err != nil {
				t.Fatal(err)
			}
		}
		for _, order := range []string{"in order", "jumping", "across the ends"} {
			c, cur := clock{iv: ld.intervals}, 0
			ts := uint64(0)
			if len(offs) > 0 {
				ts = offs[0].Time - min(offs[0].Time, 5000)
			}
			for i := range 200000 {
				switch {
				case order == "jumping" && i%97 == 0:
					ts = rng.Uint64()
				case order == "jumping" && i%89 == 0:
					ts -= min(ts, rng.Uint64N(1e6))
				case order == "across the ends" && len(offs) > 1:
					// from 100,000 ticks before an interval's end to
					// 1,000,000 after, in steps of up to 64
					if i%20000 == 0 {
						end := offs[1+i/20000%(len(offs)-1)].Time
						ts = end - min(end, 1e5)
					}
					ts += rng.Uint64N(64)
				default:
					ts += rng.Uint64N(1 << (i % 40))
				}
				if got, want := c.correct(ts), slowCorrect(ld.intervals, &cur, ts); got != want {
					t.Fatalf("%s, %s, timestamp %d (#%d): corrected to %d, want %d", name, order, ts, i, got, want)
				}
			}
		}
	}
}
