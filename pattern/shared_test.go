package pattern

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kairos/format/alawneh"
	"kairos/format/otf2"
	"kairos/internal/testenv"
)

// normalPattern writes a pattern as its ranks' sorted calls, the form
// both Kairos' words and the authors' "[P0:S1.S2.R1., ...]" reduce to.
func normalPattern(words map[int][]string) string {
	var ranks []int
	for r := range words {
		ranks = append(ranks, r)
	}
	slices.Sort(ranks)
	var b strings.Builder
	for _, r := range ranks {
		w := slices.Clone(words[r])
		slices.Sort(w)
		fmt.Fprintf(&b, "P%d:%s ", r, strings.Join(w, "."))
	}
	return b.String()
}

// authorsPatterns reads results/orderedcommunications.txt: pattern ->
// frequency.
func authorsPatterns(t *testing.T, path string) map[string]int {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := regexp.MustCompile(`^CP\d+: \((\d+)\)`)
	out := map[string]int{}
	freq := 0
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if m := head.FindStringSubmatch(l); m != nil {
			freq, _ = strconv.Atoi(m[1])
			continue
		}
		if !strings.HasPrefix(l, "[") {
			continue
		}
		words := map[int][]string{}
		for _, part := range strings.Split(strings.Trim(l, "[]"), ", ") {
			rank, calls, _ := strings.Cut(strings.TrimPrefix(part, "P"), ":")
			r, _ := strconv.Atoi(rank)
			for _, c := range strings.Split(strings.TrimSuffix(calls, "."), ".") {
				words[r] = append(words[r], strings.ToLower(c))
			}
		}
		out[normalPattern(words)] += freq
	}
	return out
}

// TestAlawnehSMG2000 compares the communication patterns Kairos finds in
// the authors' 4-process SMG2000 trace with their own output (the paper's
// Section 5.1.1: 25 patterns, 42,222 instances).
func TestAlawnehSMG2000(t *testing.T) {
	dir := testenv.Shared(t, "traces/alawneh/smg2000-4p")
	src, err := alawneh.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []Method{Iterations, Paper} {
		p, err := DetectMethod(src, m)
		if err != nil {
			t.Fatal(err)
		}
		testAuthorsPatterns(t, dir, p)
		if m == Paper {
			testTable10(t, p)
		}
	}
}

// testAuthorsPatterns compares the patterns of the SMG2000 trace with the
// authors': the contexts end at MPI_Waitall, so that the Iterations
// method finds no loop to cut further and gives the paper's patterns.
func testAuthorsPatterns(t *testing.T, dir string, p *Patterns) {
	got := map[string]int{}
	for _, c := range p.Comm {
		words := map[int][]string{}
		for _, w := range c.Words {
			rank, calls, _ := strings.Cut(strings.TrimPrefix(w, "P"), ":")
			r, _ := strconv.Atoi(rank)
			for _, s := range strings.Split(calls, "·") {
				words[r] = append(words[r], strings.ToLower(s))
			}
		}
		got[normalPattern(words)] += c.Frequency
	}
	want := authorsPatterns(t, filepath.Join(dir, "results", "orderedcommunications.txt"))
	total := 0
	for k, f := range want {
		total += f
		if got[k] != f {
			t.Errorf("pattern %s: %d instances, the authors find %d", k, got[k], f)
		}
	}
	for k, f := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("pattern %s (%d instances) is not in the authors' output", k, f)
		}
	}
	if len(p.Comm) != len(want) || len(p.Sequence) != total || p.Unmatched != 0 {
		t.Errorf("%d patterns, %d instances (%d unmatched messages), the authors find %d and %d", len(p.Comm), len(p.Sequence), p.Unmatched, len(want), total)
	}
	for i, c := range p.Comm { // numbered in order of first appearance, as the authors number them
		if i > 0 && c.Frequency == 0 {
			t.Errorf("CP%d has no instance", c.ID)
		}
	}
	if f := []int{p.Comm[0].Frequency, p.Comm[1].Frequency, p.Comm[2].Frequency, p.Comm[24].Frequency}; !slices.Equal(f, []int{1, 2101, 3, 7}) {
		t.Errorf("CP1, CP2, CP3, CP25 occur %v times, the authors' CP1, CP2, CP3, CP25 1, 2101, 3, 7", f)
	}
}

// testTable10 segments the SMG2000 sequence at depth 3 (Section 5.1.1,
// Table 10). The root splits at 7,420, as in the paper, and phases 1, 4,
// 5 and 6 are the paper's (1-49, 1,750-7,420, 7,421-7,423, 7,424-42,216).
// Kairos splits phases 2-3 at 908 where the paper has 951, and phases 7-8
// at 42,220 where it has 42,219: D_JS is computed on Kairos' own ordering
// of concurrent instances, which the paper does not specify.
func testTable10(t *testing.T, p *Patterns) {
	a, err := AnalyzePatterns(p, MethodOptions(Paper))
	if err != nil {
		t.Fatal(err)
	}
	if a.Segments[0].Split != 7420 || len(a.Phases) != 8 {
		t.Fatalf("root split at %d, %d phases; the paper: 7,420 and 8", a.Segments[0].Split, len(a.Phases))
	}
	for _, w := range [][3]int{{1, 1, 49}, {4, 1750, 7420}, {5, 7421, 7423}, {6, 7424, 42216}} {
		ph := a.Phases[w[0]-1]
		if ph.From != w[1] || ph.To != w[2] {
			t.Errorf("phase %d: %d-%d, the paper: %d-%d", w[0], ph.From, ph.To, w[1], w[2])
		}
	}
	late := map[string]int{}
	for _, s := range a.Slow {
		late[s.Late]++
	}
	// The paper finds 1,995 slow instances: 1,362 late senders, 632 late
	// receivers, 1 late collective. Kairos finds 2,088: 1,457, 630 and 1.
	t.Logf("%d slow instances: %v", len(a.Slow), late)
	if len(a.Slow) != 2088 || late["late sender"] != 1457 || late["late receiver"] != 630 || late["late process"] != 1 {
		t.Errorf("%d slow instances %v; the paper finds 1,995: 1,362 late senders, 632 late receivers, 1 late collective", len(a.Slow), late)
	}
	testTable11(t, a)
}

// testTable11 checks the slow CP2 instances of phase 1 (Table 11; the
// paper prints tick counts, nanoseconds here, as µs). Five of its six
// rows are found with the paper's durations, 48-byte median, last
// processes to start and to finish, and four of its five affinities.
// Kairos does not flag position 2: its 41,280-byte group has two
// instances (327,100 and 159,376 ticks), where the lower median is
// 159,376, MAD is 0 and the fallback gives M = 1.6; the paper's
// threshold for it (163,776) is below its median (245,438). Without that
// alternative the AHP of the phase changes, and position 24 is Medium
// where the paper has High.
func testTable11(t *testing.T, a *Analysis) {
	type row struct {
		pos      int
		bytes    int64
		duration float64
		pls, plf int32
		ia       Affinity
	}
	want := []row{
		{22, 48, 165.701, 0, 2, High},
		{23, 1536, 262.600, 2, 3, Low},
		{24, 48, 135.000, 3, 3, Medium},
		{25, 1536, 100.701, 3, 3, Low},
		{48, 48, 108.501, 2, 3, Medium},
	}
	var got []row
	for _, s := range a.Slow {
		if s.Phase != 1 {
			break
		}
		got = append(got, row{s.Position, s.Bytes, math.Round(s.Duration*1000) / 1000, s.LastStart, s.LastFinish, s.Affinity})
		if s.Pattern != 2 || (s.Bytes == 48 && math.Abs(s.Median-58.344) > 1e-9) {
			t.Errorf("position %d: CP%d, median %.3f µs; the paper: CP2, median 58,344 for 48 bytes", s.Position, s.Pattern, s.Median)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("phase 1 slow instances:\n got %v\nwant %v", got, want)
	}
}

// TestOTF2PingPong reads a Score-P trace: the ping-pong's 8 rounds (16
// MPI_Send and 16 MPI_Recv per otf2-print) are 8 instances of one pattern,
// rank 0 sending then receiving, in main.
func TestOTF2PingPong(t *testing.T) {
	src, err := otf2.Open(testenv.Shared(t, "traces/otf2/pipit-ping-pong-otf2/traces.otf2"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Detect(src)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Timed || p.Unmatched != 0 || len(p.Comm) != 1 || len(p.Sequence) != 8 {
		t.Fatalf("timed %v, %d unmatched, %d patterns, %d instances", p.Timed, p.Unmatched, len(p.Comm), len(p.Sequence))
	}
	c := p.Comm[0]
	if !slices.Equal(c.Words, []string{"P0:S1·R1", "P1:R0·S0"}) || !slices.Equal(c.Functions, []string{"int main(int, char**)"}) {
		t.Errorf("pattern %+v", c)
	}
	for i, in := range p.Sequence {
		if in.Duration() <= 0 || (i > 0 && in.Start < p.Sequence[i-1].Finish) {
			t.Errorf("instance %d: %+v", i+1, in)
		}
	}
}
