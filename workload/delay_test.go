package workload_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

func TestParseDelay(t *testing.T) {
	cases := []struct {
		in   string
		want workload.Delay
		err  string // a part of the error, "" if valid
	}{
		{"5:7,23,41:6", workload.Delay{Rank: 5, Iterations: []int{7, 23, 41}, Factor: 6}, ""},
		{"0:0:1", workload.Delay{Rank: 0, Iterations: []int{0}, Factor: 1}, ""},
		{" 3 : 9, 2 : 2.5 ", workload.Delay{Rank: 3, Iterations: []int{9, 2}, Factor: 2.5}, ""},
		{"1:4:1e6", workload.Delay{Rank: 1, Iterations: []int{4}, Factor: 1e6}, ""},
		{"", workload.Delay{}, "want RANK:IT[,IT...]:FACTOR"},
		{"5:7", workload.Delay{}, "want RANK:IT[,IT...]:FACTOR"},
		{"5:7:6:1", workload.Delay{}, "want RANK:IT[,IT...]:FACTOR"},
		{"-1:7:6", workload.Delay{}, `rank "-1" is not a non-negative integer`},
		{"x:7:6", workload.Delay{}, `rank "x" is not a non-negative integer`},
		{"5::6", workload.Delay{}, `iteration "" is not a non-negative integer`},
		{"5:7,,9:6", workload.Delay{}, `iteration "" is not a non-negative integer`},
		{"5:7,-2:6", workload.Delay{}, `iteration "-2" is not a non-negative integer`},
		{"5:7,1.5:6", workload.Delay{}, `iteration "1.5" is not`},
		{"5:7:0.5", workload.Delay{}, `factor "0.5" is not a number in [1, 1e+06]`},
		{"5:7:slow", workload.Delay{}, `factor "slow" is not a number`},
		{"5:7:NaN", workload.Delay{}, `factor "NaN" is not a number`},
		{"5:7:+Inf", workload.Delay{}, `factor "+Inf" is not a number`},
		{"5:7:2e6", workload.Delay{}, `factor "2e6" is not a number in [1, 1e+06]`},
		{"5:7,3,7:2", workload.Delay{}, "iteration 7 listed twice"},
	}
	for _, c := range cases {
		d, err := workload.ParseDelay(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "delay ") {
				t.Errorf("ParseDelay(%q) = %v, %v; want an error with %q", c.in, d, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(d, c.want) {
			t.Errorf("ParseDelay(%q) = %+v, %v; want %+v", c.in, d, err, c.want)
		}
		if back, err := workload.ParseDelay(d.String()); err != nil || !reflect.DeepEqual(back, d) {
			t.Errorf("ParseDelay(%q) does not read back %q: %+v, %v", d.String(), c.in, back, err)
		}
	}
}

// TestDelayErrors: New checks a delay against the trace's ranks and
// iterations, for the kinds that read one.
func TestDelayErrors(t *testing.T) {
	cases := []struct {
		kind  string
		delay workload.Delay
		want  string
	}{
		{"ring", workload.Delay{Rank: 8, Iterations: []int{1}, Factor: 2}, "delay 8:1:2: rank 8 is not in [0, 8)"},
		{"ring", workload.Delay{Rank: -1, Iterations: []int{1}, Factor: 2}, "rank -1 is not in [0, 8)"},
		{"ring", workload.Delay{Rank: 1, Iterations: []int{100}, Factor: 2}, "iteration 100 is not in [0, 100) (iterations are 0-based)"},
		{"ring", workload.Delay{Rank: 1, Iterations: []int{-3}, Factor: 2}, "iteration -3 is not in [0, 100)"},
		{"ring", workload.Delay{Rank: 1, Iterations: []int{3}, Factor: 0.9}, "factor must be in [1, 1e+06], not 0.9"},
		{"ring", workload.Delay{Rank: 1, Iterations: []int{3}, Factor: math.Inf(1)}, "factor must be in [1, 1e+06], not +Inf"},
		{"ring", workload.Delay{Rank: 1, Iterations: []int{3}, Factor: math.NaN()}, "factor must be in [1, 1e+06], not NaN"},
		{"ring", workload.Delay{Rank: 1, Factor: 2}, "no iteration to delay"},
		{"ring", workload.Delay{Rank: 1, Iterations: []int{4, 2, 4}, Factor: 2}, "iteration 4 listed twice"},
		{"stencil2d", workload.Delay{Rank: 64, Iterations: []int{1}, Factor: 2}, "rank 64 is not in [0, 64)"},
		{"stencil3d", workload.Delay{Rank: 1, Iterations: []int{1}}, "factor must be in [1, 1e+06], not 0"},
	}
	for _, c := range cases {
		p, _ := workload.Defaults(c.kind)
		p.Delay = c.delay
		_, err := workload.New(c.kind, p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s with delay %+v: error %v, want %q", c.kind, c.delay, err, c.want)
		}
	}
	// Kinds without iterations of computation do not read a delay, and
	// do not validate it.
	for _, kind := range []string{"masterworker", "pingpong"} {
		if workload.Applies(kind, workload.ParamDelay) {
			t.Errorf("%s reads a delay", kind)
		}
		p, _ := workload.Defaults(kind)
		p.Delay = workload.Delay{Rank: 1 << 20, Factor: -1}
		if _, err := workload.New(kind, p); err != nil {
			t.Errorf("%s validated a delay it does not read: %v", kind, err)
		}
	}
}

// computes returns the compute volumes of each rank of src, in order.
func computes(t *testing.T, src trace.Source) [][]float64 {
	t.Helper()
	out := make([][]float64, src.NumRanks())
	if err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if e.Kind == trace.Compute {
			out[r] = append(out[r], e.Compute)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDelayStencilRing: in the stencils and the ring, each iteration has
// one computation; with a delay, exactly the listed iterations of exactly
// the delayed rank compute Factor times what they compute without it (same
// seed, with imbalance and noise), rounded to whole flops, and every other
// event is unchanged.
func TestDelayStencilRing(t *testing.T) {
	for _, kind := range []string{"stencil2d", "stencil3d", "ring"} {
		for _, d := range []workload.Delay{
			{Rank: 5, Iterations: []int{7, 23, 41}, Factor: 6},
			{Rank: 0, Iterations: []int{49, 0}, Factor: 2.75},
			{Rank: 7, Iterations: []int{12}, Factor: 1},
		} {
			base := func(p *workload.Params) { p.Iterations = 50 }
			plain, _ := small(t, kind, 8, base)
			slow, _ := small(t, kind, 8, base, func(p *workload.Params) { p.Delay = d })
			if !equal(events(t, plain), events(t, slow), false) {
				t.Fatalf("%s: the delay changed more than compute volumes", kind)
			}
			want := map[int]bool{}
			for _, it := range d.Iterations {
				want[it] = true
			}
			a, b := computes(t, plain), computes(t, slow)
			for r := range a {
				if len(a[r]) != 50 {
					t.Fatalf("%s rank %d: %d computations in 50 iterations", kind, r, len(a[r]))
				}
				for it, x := range a[r] {
					w := x
					if r == d.Rank && want[it] {
						w = math.Round(d.Factor * x)
					}
					if b[r][it] != w {
						t.Errorf("%s delay %v: rank %d iteration %d computes %g, want %g (%g undelayed)", kind, d, r, it, b[r][it], w, x)
					}
				}
			}
		}
	}
}

// TestDelayIterations: for every kind that reads a delay, delaying one
// iteration k at a time changes a contiguous run of the delayed rank's
// computations, each to Factor times its undelayed volume; the runs of
// k = 0, 1, 2 follow each other and, with the computations before the
// first iteration (setup), cover all of them. So every computation of an
// iteration, and only those, is delayed with it.
func TestDelayIterations(t *testing.T) {
	const rank, factor = 3, 3.5
	for _, kind := range workload.Kinds() {
		if !workload.Applies(kind, workload.ParamDelay) {
			continue
		}
		plain, ok := small(t, kind, 16)
		if !ok {
			t.Fatalf("%s at 16 ranks", kind)
		}
		base := computes(t, plain)[rank]
		var runs [][2]int // [first, end) computation of each iteration
		for it := range 3 {
			slow, _ := small(t, kind, 16, func(p *workload.Params) {
				p.Delay = workload.Delay{Rank: rank, Iterations: []int{it}, Factor: factor}
			})
			got := computes(t, slow)
			for r := range got {
				if r != rank && !reflect.DeepEqual(got[r], computes(t, plain)[r]) {
					t.Fatalf("%s: a delay of rank %d changed rank %d", kind, rank, r)
				}
			}
			first, end := -1, -1
			for i, x := range got[rank] {
				if x == base[i] {
					continue
				}
				if x != math.Round(factor*base[i]) {
					t.Fatalf("%s iteration %d: computation %d is %g, want %g x %g", kind, it, i, x, factor, base[i])
				}
				if first < 0 {
					first = i
				} else if end != i {
					t.Fatalf("%s iteration %d: delayed computations are not contiguous (%d after %d)", kind, it, i, end-1)
				}
				end = i + 1
			}
			if first < 0 {
				t.Fatalf("%s: delaying iteration %d changed nothing", kind, it)
			}
			runs = append(runs, [2]int{first, end})
		}
		for i := 1; i < len(runs); i++ {
			if runs[i][0] != runs[i-1][1] {
				t.Errorf("%s: iteration %d delays computations %v, iteration %d %v: not consecutive", kind, i-1, runs[i-1], i, runs[i])
			}
		}
		if runs[2][1] != len(base) {
			t.Errorf("%s: the last iteration ends at computation %d of %d", kind, runs[2][1], len(base))
		}
		t.Logf("%s: %d setup computations, iterations %v", kind, runs[0][0], runs)
	}
}

// TestDelayDeterminism: a delayed trace is the same every time, reading
// the delayed rank first or last, and its parameters name the delay.
func TestDelayDeterminism(t *testing.T) {
	d := workload.Delay{Rank: 5, Iterations: []int{2, 0}, Factor: 4}
	a, _ := small(t, "stencil2d", 16, func(p *workload.Params) { p.Delay = d })
	b, _ := small(t, "stencil2d", 16, func(p *workload.Params) { p.Delay = d })
	ea := events(t, a)
	if !equal(ea, events(t, b), true) {
		t.Error("same delay, different events")
	}
	rd, _ := b.OpenRank(5)
	var first []trace.Event
	for rd.Next() {
		first = append(first, rd.Event().Clone())
	}
	c, _ := small(t, "stencil2d", 16, func(p *workload.Params) { p.Delay = d })
	var fifth []trace.Event
	if err := trace.ForEach(c, func(r, _ int, e *trace.Event) error {
		if r == 5 {
			fifth = append(fifth, e.Clone())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !equal(first, fifth, true) {
		t.Error("the delayed rank differs when read first")
	}
	if got := a.Meta().Attrs["parameters"]; !strings.HasSuffix(got, " delay=5:0,2:4") {
		t.Errorf("parameters %q do not end with the sorted delay", got)
	}
	if d.Iterations[0] != 2 {
		t.Error("New sorted the caller's iterations")
	}
	plain, _ := small(t, "stencil2d", 16)
	if got := plain.Meta().Attrs["parameters"]; strings.Contains(got, "delay") {
		t.Errorf("parameters %q name a delay when there is none", got)
	}
}

// FuzzParseDelay: ParseDelay never panics, and what it accepts prints back
// as it parses.
func FuzzParseDelay(f *testing.F) {
	for _, s := range []string{"5:7,23,41:6", "0:0:1", "1:2:1e6", ":::", "5:7", "x:1:2", "1:2,2:3", "1:9999999999999999999:2", "3:1:NaN", " 2 : 4 : 1.5 ",
		"1:2:-1", "1:2:inf", "1:2:1e300"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := workload.ParseDelay(s)
		if err != nil {
			return
		}
		if d.Rank < 0 || len(d.Iterations) == 0 || !(d.Factor >= 1) {
			t.Fatalf("%q: %+v", s, d)
		}
		back, err := workload.ParseDelay(d.String())
		if err != nil || !reflect.DeepEqual(back, d) {
			t.Fatalf("%q: %+v prints as %q, which reads %+v, %v", s, d, d.String(), back, err)
		}
	})
}
