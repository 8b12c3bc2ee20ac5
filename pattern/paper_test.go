package pattern

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kairos/trace"
)

// figure6 is the sample trace of the paper's Figure 6, rebuilt from Table 2:
// four processes P1..P4 (ranks 0..3) call the user function F eight times
// from M; every call posts non-blocking sends and receives and ends with
// MPI_Waitall. Paper symbols are 1-based (S4 sends to P4); Kairos' are
// ranks (S3). The k-th call of every rank runs in time step k, so that
// instances in the same step are ordered by rank, as Table 4 lists them.
var figure6 = [4][]string{
	{"S3 S2 R3 R2", "S3 S2 R3 R2", "S3 S2 R3 R2", "S2 R3", "S3", "S3 S2 R3 R2", "S2 R3", "S3"},
	{"S4 S1 R1", "S4 S1 R1", "S4 S1 R1", "S4 R1", "S4", "S4 S1 R1", "S4 R1", "S4"},
	{"S1 R4 S4 R1", "S1 R4 S4 R1", "S1 R4 S4 R1", "S1 R4", "R1", "S1 R4 S4 R1", "S1 R4", "R1"},
	{"S3 R2 R3", "S3 R2 R3", "S3 R2 R3", "S3 R2", "R2", "S3 R2 R3", "S3 R2", "R2"},
}

// figure6Trace builds the trace; timed gives every call timestamps.
func figure6Trace(timed bool) *trace.Trace {
	meta := trace.NewMeta()
	m := meta.AddRegion("M", 0)
	f := meta.AddRegion("F", m)
	tr := trace.New(4, meta)
	for r, calls := range figure6 {
		for step, call := range calls {
			t := trace.Time(step) * 1e9
			add := func(e trace.Event) {
				e.Region = f
				if timed {
					e.HasTime, e.Enter, e.Exit = true, t, t+1e6
					t += 2e6
				}
				tr.Ranks[r].Append(&e)
			}
			for i, w := range strings.Fields(call) {
				peer, _ := strconv.Atoi(w[1:])
				e := trace.NewEvent(trace.Isend)
				if w[0] == 'R' {
					e.Kind = trace.Irecv
					e.RecvBytes = 1
				} else {
					e.SendBytes = 1
				}
				e.Partner, e.Request = int32(peer-1), uint64(i+1)
				add(e)
			}
			add(trace.NewEvent(trace.Waitall))
		}
	}
	return tr
}

// kairosWord rewrites the paper's 1-based word ("S3·S2·R3·R2") with ranks.
func kairosWord(paper string) string {
	return regexp.MustCompile(`\d+`).ReplaceAllStringFunc(paper, func(d string) string {
		n, _ := strconv.Atoi(d)
		return strconv.Itoa(n - 1)
	})
}

// TestTable2 checks the maximal repeats per process, their positions and
// frequencies.
func TestTable2(t *testing.T) {
	want := []struct {
		rank      int
		word      string
		positions []int
	}{
		{0, "S3·S2·R3·R2", []int{0, 5, 10, 20}}, {0, "S2·R3", []int{15, 25}}, {0, "S3", []int{18, 28}},
		{1, "S4·S1·R1", []int{0, 4, 8, 17}}, {1, "S4·R1", []int{12, 21}}, {1, "S4", []int{15, 24}},
		{2, "S1·R4·S4·R1", []int{0, 5, 10, 20}}, {2, "S1·R4", []int{15, 25}}, {2, "R1", []int{18, 28}},
		{3, "S3·R2·R3", []int{0, 4, 8, 17}}, {3, "S3·R2", []int{12, 21}}, {3, "R2", []int{15, 24}},
	}
	for _, timed := range []bool{true, false} {
		p, err := Detect(figure6Trace(timed))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Process) != len(want) {
			t.Fatalf("timed=%v: %d process patterns, want %d", timed, len(p.Process), len(want))
		}
		for i, w := range want {
			got := p.Process[i]
			if got.ID != i+1 || got.Rank != w.rank || got.Word() != kairosWord(w.word) || !slices.Equal(got.Positions, w.positions) || !got.Maximal {
				t.Errorf("timed=%v: PT%d = rank %d %s at %v (maximal %v), want rank %d %s at %v",
					timed, i+1, got.Rank, got.Word(), got.Positions, got.Maximal, w.rank, kairosWord(w.word), w.positions)
			}
		}
	}
}

// TestTables3And4 checks the communication patterns (Table 3), their
// sizes (Figure 7: CP1 has 14 events, CP2 8, CP3 and CP4 2) and the
// pattern sequence (Table 4), with timestamps and with Lamport clocks.
func TestTables3And4(t *testing.T) {
	want := []struct {
		process          []int
		freq, events, np int
	}{
		{[]int{1, 4, 7, 10}, 4, 14, 4},
		{[]int{2, 5, 8, 11}, 2, 8, 4},
		{[]int{3, 9}, 2, 2, 2},
		{[]int{6, 12}, 2, 2, 2},
	}
	for _, timed := range []bool{true, false} {
		p, err := Detect(figure6Trace(timed))
		if err != nil {
			t.Fatal(err)
		}
		if p.Timed != timed || p.Unmatched != 0 {
			t.Errorf("timed=%v: Timed %v, %d unmatched", timed, p.Timed, p.Unmatched)
		}
		if len(p.Comm) != len(want) {
			t.Fatalf("timed=%v: %d communication patterns, want 4", timed, len(p.Comm))
		}
		for i, w := range want {
			c := p.Comm[i]
			if !slices.Equal(c.Process, w.process) || c.Frequency != w.freq || c.Events != w.events || c.Ranks != w.np {
				t.Errorf("timed=%v: CP%d = %v x%d, %d events, %d ranks; want %v x%d, %d events, %d ranks",
					timed, i+1, c.Process, c.Frequency, c.Events, c.Ranks, w.process, w.freq, w.events, w.np)
			}
		}
		got, want := p.Symbols(), []int32{1, 1, 1, 2, 3, 4, 1, 2, 3, 4}
		if !timed { // CP3 and CP4 are concurrent: Lamport clocks may order them either way
			for _, i := range []int{4, 8} {
				if got[i] == 4 && got[i+1] == 3 {
					got[i], got[i+1] = 3, 4
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("timed=%v: sequence %v, want %v", timed, p.Symbols(), want)
		}
	}
}

// TestTable5 checks the segmentation of the Table 4 sequence: split at
// position 3 into S1 = 1..3 and S2 = 4..10, neither split further.
//
// Computed from Eq. 1-4, 13, 15 and 18 with natural logarithms:
// S0: D̂JS = 0.3859 at 3, K = 2, s_AIC = (N·D̂JS − K)/K = 0.9297,
// s_BIC = 0.6761; S1: D̂JS = 0, s = −1; S2: D̂JS = 0.2121 at its
// position 1 (sequence position 4), s_AIC = −0.2577, s_BIC = −0.2371.
// The paper prints s = 1.11 and D̂JS = 0.42 for S0, −1.17 for S1 and
// −0.08 for S2; no logarithm base reproduces them (D̂JS is 0.5568 in
// bits, 0.1676 in base 10).
func TestTable5(t *testing.T) {
	seq := []int32{1, 1, 1, 2, 3, 4, 1, 2, 3, 4}
	for _, c := range []Criterion{AIC, BIC} {
		segs := Split(seq, SegmentOptions{Criterion: c, MaxDepth: 3, MinLength: 2})
		if len(segs) != 3 {
			t.Fatalf("%v: %d segments, want 3", c, len(segs))
		}
		s0, s1, s2 := segs[0], segs[1], segs[2]
		if s0.Split != 3 || s0.K != 2 || s1.From != 1 || s1.To != 3 || s2.From != 4 || s2.To != 10 || !s1.Leaf() || !s2.Leaf() {
			t.Errorf("%v: segments %+v", c, segs)
		}
		if s1.Phase != 1 || s2.Phase != 2 {
			t.Errorf("%v: phases %d, %d", c, s1.Phase, s2.Phase)
		}
		for _, v := range []struct {
			name      string
			got, want float64
		}{
			{"S0 DJS", s0.DJS, 0.38593}, {"S0 sAIC", s0.SAIC, 0.92965}, {"S0 sBIC", s0.SBIC, 0.67607},
			{"S1 DJS", s1.DJS, 0}, {"S1 sAIC", s1.SAIC, -1}, {"S2 DJS", s2.DJS, 0.21207},
			{"S2 sAIC", s2.SAIC, -0.25774}, {"S2 sBIC", s2.SBIC, -0.23711},
		} {
			if math.Abs(v.got-v.want) > 5e-5 {
				t.Errorf("%v: %s = %.5f, want %.5f", c, v.name, v.got, v.want)
			}
		}
		if s2.Split != 4 {
			t.Errorf("%v: S2's best split at %d, want 4", c, s2.Split)
		}
	}
}

// table6 holds the durations of Table 6 (time units per instance).
var table6 = map[string][]float64{
	"A": {1, 1, 2, 3, 2, 8},
	"B": {3, 3, 4, 5, 6, 12},
	"C": {2, 3, 3, 2, 3, 9},
}

// TestTable7 checks the modified Z-scores (the paper prints |x − x̃| and
// |M|). Medians are lower medians (the
// element ⌊(n−1)/2⌋ of the sorted sample): B's median is 4 as printed,
// where the mean of the middle pair would give 4.5. The paper's MAD of C
// (0.5) is the mean of the middle pair of |x − 3| = 0, 0, 0, 1, 1, 6;
// the lower median is 0, so C takes the MAD = 0 fallback
// M = (x − x̃)/(1.253314·MeanAD), MeanAD = 8/6: M = 0.598 for instances
// 1 and 4 (the paper: 1.349) and 3.590 for instance 6 (the paper: 8.094),
// still the only one above 3.5.
func TestTable7(t *testing.T) {
	want := map[string]struct {
		median, mad float64
		fallback    bool
		z           []float64
	}{
		"A": {2, 1, false, []float64{0.6745, 0.6745, 0, 0.6745, 0, 4.0470}},
		"B": {4, 1, false, []float64{0.6745, 0.6745, 0, 0.6745, 1.3490, 5.3960}},
		"C": {3, 0, true, []float64{0.5984, 0, 0, 0.5984, 0, 3.5902}},
	}
	for name, xs := range table6 {
		w := want[name]
		r := RobustOf(xs)
		if r.Median != w.median || r.MAD != w.mad || r.Fallback != w.fallback {
			t.Errorf("%s: median %v MAD %v fallback %v, want %v %v %v", name, r.Median, r.MAD, r.Fallback, w.median, w.mad, w.fallback)
		}
		for i, x := range xs {
			z := r.Z(x)
			if math.Abs(math.Abs(z)-w.z[i]) > 5e-4 {
				t.Errorf("%s-%d: M = %.4f, want %.4f", name, i+1, z, w.z[i])
			}
			if slow := z > DefaultCutoff; slow != (i == 5) {
				t.Errorf("%s-%d: slow = %v", name, i+1, slow)
			}
		}
	}
}

// TestTables8And9 checks the AHP weights and the inspection affinity of
// the sixth instances: severity = duration ÷ bytes with A, B and C moving
// 2, 9 and 3 units (4.0, 1.33, 3.0); complexity = processes × events
// (8, 180, 24).
func TestTables8And9(t *testing.T) {
	slow := []Slow{
		{Phase: 6, Duration: 8, Bytes: 2, Ranks: 2, Events: 4},
		{Phase: 6, Duration: 12, Bytes: 9, Ranks: 10, Events: 18},
		{Phase: 6, Duration: 9, Bytes: 3, Ranks: 4, Events: 6},
	}
	Classify(slow)
	wantSev := []float64{0.48, 0.16, 0.36}
	wantCpx := []float64{0.04, 0.85, 0.11}
	wantIA := []Affinity{High, Low, High}
	for i, s := range slow {
		if math.Round(s.Severity*100)/100 != wantSev[i] || math.Round(s.Complexity*100)/100 != wantCpx[i] || s.Affinity != wantIA[i] {
			t.Errorf("%c-6: severity %.4f complexity %.4f %v (%.1f°), want %.2f %.2f %v",
				'A'+i, s.Severity, s.Complexity, s.Affinity, s.Angle, wantSev[i], wantCpx[i], wantIA[i])
		}
	}
}

func TestAffinitySectors(t *testing.T) {
	for _, c := range []struct {
		x, y float64
		want Affinity
	}{{1, 0, Low}, {1, 0.5, Low}, {1, 1, Medium}, {1, 1.5, Medium}, {0.5, 1, High}, {0.1, 1, High}, {0, 1, High}} {
		if got, deg := AffinityOf(c.x, c.y); got != c.want {
			t.Errorf("AffinityOf(%v, %v) = %v (%.1f°), want %v", c.x, c.y, got, deg, c.want)
		}
	}
}

// TestFigure6Pipeline runs the five steps on the timed Figure 6 trace:
// every instance of a pattern takes the same time, so nothing is slow.
func TestFigure6Pipeline(t *testing.T) {
	a, err := Analyze(figure6Trace(true), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Phases) != 2 || a.Phases[0].To != 3 || a.Phases[1].From != 4 {
		t.Errorf("phases %+v", a.Phases)
	}
	if len(a.Slow) != 0 {
		t.Errorf("slow instances %+v", a.Slow)
	}
	if fs := a.Phases[0].Functions; !slices.Equal(fs, []string{"F"}) {
		t.Errorf("phase 1 functions %v", fs)
	}
}
