package prsd

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// rlExample is a ranklist from a paper: its notation there, the ranks it
// denotes, and what NewRanklist writes for those ranks.
type rlExample struct {
	name  string
	paper string
	ranks []int32
	want  string
}

// rlSeq returns lo, lo+1, ..., hi-1.
func rlSeq(lo, hi int32) []int32 {
	var s []int32
	for r := lo; r < hi; r++ {
		s = append(s, r)
	}
	return s
}

// rlSame reports whether a and b have the same sections, in order.
func rlSame(a, b Ranklist) bool {
	return slices.EqualFunc(a, b, func(x, y Section) bool {
		return x.Start == y.Start && slices.Equal(x.Dims, y.Dims)
	})
}

// rlMustParse parses s or fails the test.
func rlMustParse(t *testing.T, s string) Ranklist {
	t.Helper()
	l, err := ParseRanklist(s)
	if err != nil {
		t.Fatalf("ParseRanklist(%q): %v", s, err)
	}
	return l
}

// rlCheckExamples checks each example both ways: the paper's notation parses
// to its ranks, and the ranks encode to want, which parses back to them.
func rlCheckExamples(t *testing.T, examples []rlExample) {
	t.Helper()
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			if got := rlMustParse(t, ex.paper).Ranks(); !slices.Equal(got, ex.ranks) {
				t.Errorf("ParseRanklist(%q).Ranks() = %v, want %v", ex.paper, got, ex.ranks)
			}
			l := NewRanklist(ex.ranks)
			if got := l.String(); got != ex.want {
				t.Errorf("NewRanklist(%v) = %q, want %q", ex.ranks, got, ex.want)
			}
			if got := rlMustParse(t, ex.want).Ranks(); !slices.Equal(got, ex.ranks) {
				t.Errorf("ParseRanklist(%q).Ranks() = %v, want %v", ex.want, got, ex.ranks)
			}
		})
	}
}

// TestRanklistBahmaniFigure2 checks the two ranklists of Fig. 2 of Bahmani &
// Mueller; 2(b) covers 0..15, which NewRanklist writes as one 1-D section.
func TestRanklistBahmaniFigure2(t *testing.T) {
	rlCheckExamples(t, []rlExample{
		{"2a", "⟨2 5 2 4 2 1⟩", []int32{5, 6, 9, 10}, "<2 5 2 4 2 1>"},
		{"2b", "⟨2 0 4 4 4 1⟩", rlSeq(0, 16), "<1 0 16 1>"},
	})
}

// TestRanklistACURDIONFigure1 checks the ranklist of ACURDION's Fig. 1(b).
func TestRanklistACURDIONFigure1(t *testing.T) {
	rlCheckExamples(t, []rlExample{
		{"1b", "⟨2 0 4 4 2 1⟩", []int32{0, 1, 4, 5, 8, 9, 12, 13}, "<2 0 4 4 2 1>"},
	})
}

// TestRanklistSection33 checks ACURDION Section 3.3: a single rank is
// ⟨1 r 1 0⟩, and once node 4 joins {0,1,2,3} the list becomes ⟨1 0 5 1⟩.
func TestRanklistSection33(t *testing.T) {
	rlCheckExamples(t, []rlExample{
		{"single", "⟨1 4 1 0⟩", []int32{4}, "<1 4 1 0>"},
		{"merged", "⟨1 0 5 1⟩", rlSeq(0, 5), "<1 0 5 1>"},
	})
	merged := append(rlMustParse(t, "<1 0 4 1>").Ranks(), rlMustParse(t, "⟨1 4 1 0⟩").Ranks()...)
	if got := NewRanklist(merged).String(); got != "<1 0 5 1>" {
		t.Errorf("NewRanklist(%v) = %q, want <1 0 5 1>", merged, got)
	}
}

// TestNewRanklist checks the encoding choices documented on NewRanklist:
// one section of as many dimensions as needed, larger stride first, and
// greedy runs merged into sections otherwise.
func TestNewRanklist(t *testing.T) {
	tests := []struct {
		name  string
		ranks []int32
		want  string
	}{
		{"empty", nil, ""},
		{"single", []int32{3}, "<1 3 1 0>"},
		{"pair", []int32{3, 10}, "<1 3 2 7>"},
		{"unsorted duplicates", []int32{9, 5, 10, 6, 5, 9}, "<2 5 2 4 2 1>"},
		{"progression", []int32{2, 5, 8, 11}, "<1 2 4 3>"},
		{"wide grid", []int32{0, 3, 6, 100, 103, 106}, "<2 0 2 100 3 3>"},
		{"runs", []int32{0, 1, 2, 7}, "<1 0 3 1> <1 7 1 0>"},
		{"ragged grid", []int32{0, 1, 4, 5, 8}, "<2 0 2 4 2 1> <1 8 1 0>"},
		{"3-D block", []int32{0, 1, 8, 9, 64, 65, 72, 73}, "<3 0 2 64 2 8 2 1>"},
		{"3-D block inside", []int32{73, 74, 81, 82, 137, 138, 145, 146}, "<3 73 2 64 2 8 2 1>"},
		{"two rows of a grid", []int32{1, 2, 3, 4, 5, 6, 57, 58, 59, 60, 61, 62}, "<2 1 2 56 6 1>"},
		{"grid with a corner", []int32{0, 9, 10, 11, 17, 18, 19}, "<1 0 1 0> <2 9 2 8 3 1>"},
		{"interleaved grid", []int32{0, 2, 4, 3, 5, 7}, "<1 0 1 0> <1 2 4 1> <1 7 1 0>"},
		{"extremes", []int32{math.MaxInt32, 0}, "<1 0 2 2147483647>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.ranks)
			if got := NewRanklist(tt.ranks).String(); got != tt.want {
				t.Errorf("NewRanklist(%v) = %q, want %q", tt.ranks, got, tt.want)
			}
			if !slices.Equal(in, tt.ranks) {
				t.Errorf("NewRanklist modified its input: %v, was %v", tt.ranks, in)
			}
		})
	}
}

// rlRandomSet returns a random set of ranks below about 1000: a sparse or
// dense subset, a progression, a grid, or a grid with extra ranks.
func rlRandomSet(rng *rand.Rand) []int32 {
	var set []int32
	switch rng.IntN(4) {
	case 0:
		n, p := 1+rng.Int32N(200), rng.Float64()
		for r := range n {
			if rng.Float64() < p {
				set = append(set, r)
			}
		}
	case 1:
		s, n, d := rng.Int32N(100), 1+rng.Int32N(30), 1+rng.Int32N(30)
		for i := range n {
			set = append(set, s+i*d)
		}
	default:
		s, n1, n2, d2 := rng.Int32N(100), 1+rng.Int32N(8), 1+rng.Int32N(8), 1+rng.Int32N(5)
		d1 := (n2-1)*d2 + 1 + rng.Int32N(10)
		for i := range n1 {
			for j := range n2 {
				set = append(set, s+i*d1+j*d2)
			}
		}
	}
	for range rng.IntN(3) {
		set = append(set, rng.Int32N(1000))
	}
	slices.Sort(set)
	return slices.Compact(set)
}

// TestRanklistRandomRoundTrip checks on random sets that NewRanklist keeps
// the set, that String and ParseRanklist are inverse, and that Len and
// Contains agree with the set.
func TestRanklistRandomRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		set := rlRandomSet(rng)
		l := NewRanklist(set)
		if got := l.Ranks(); !slices.Equal(got, set) {
			t.Fatalf("NewRanklist(%v).Ranks() = %v (%s)", set, got, l)
		}
		back, err := ParseRanklist(l.String())
		if err != nil || !rlSame(back, l) {
			t.Fatalf("ParseRanklist(%q) = %v, %v", l.String(), back, err)
		}
		if l.Len() != len(set) {
			t.Fatalf("%s: Len() = %d, want %d", l, l.Len(), len(set))
		}
		for r := int32(-2); r < 1200; r++ {
			if _, want := slices.BinarySearch(set, r); l.Contains(r) != want {
				t.Fatalf("%s: Contains(%d) = %v, want %v", l, r, !want, want)
			}
		}
	}
}

// TestRanklistContains checks membership, including a section whose strides
// do not nest and sections at the limits.
func TestRanklistContains(t *testing.T) {
	tests := []struct {
		list string
		in   []int32
		out  []int32
	}{
		{"", nil, []int32{0, 1}},
		{"<2 5 2 4 2 1>", []int32{5, 6, 9, 10}, []int32{4, 7, 8, 11, 13, -1}},
		{"<2 0 3 2 2 3>", []int32{0, 2, 3, 4, 5, 7}, []int32{1, 6, 8, 9}},
		{"<1 0 3 1> <1 7 1 0>", []int32{0, 1, 2, 7}, []int32{3, 6, 8}},
		{"<1 0 16777216 1>", []int32{0, 16777215}, []int32{16777216, -1}},
		{"<1 2147483646 2 1>", []int32{math.MaxInt32}, []int32{math.MinInt32, 0}},
		{"<3 1 2 100 3 10 2 1>", []int32{1, 2, 21, 22, 101, 122}, []int32{0, 3, 31, 100, 123}},
	}
	for _, tt := range tests {
		l := rlMustParse(t, tt.list)
		for _, r := range tt.in {
			if !l.Contains(r) {
				t.Errorf("%q: Contains(%d) = false, want true", tt.list, r)
			}
		}
		for _, r := range tt.out {
			if l.Contains(r) {
				t.Errorf("%q: Contains(%d) = true, want false", tt.list, r)
			}
		}
	}
}

// TestRanklistLen checks that Len counts ranks without enumerating them.
func TestRanklistLen(t *testing.T) {
	tests := []struct {
		list string
		want int
	}{
		{"", 0},
		{"<1 4 1 0>", 1},
		{"⟨2 0 4 4 4 1⟩", 16},
		{"<1 0 3 1> <1 7 1 0>", 4},
		{"<3 1 2 100 3 10 2 1>", 12},
		{"<1 0 16777216 1>", 1 << 24},
	}
	for _, tt := range tests {
		if got := rlMustParse(t, tt.list).Len(); got != tt.want {
			t.Errorf("ParseRanklist(%q).Len() = %d, want %d", tt.list, got, tt.want)
		}
	}
}

// TestParseRanklistAccepts checks the accepted spellings: both bracket
// styles, free white space and adjacent sections.
func TestParseRanklistAccepts(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{" \t\n", ""},
		{"⟨1 0 5 1⟩", "<1 0 5 1>"},
		{"  < 2\t5 2 4 2 1 >\n", "<2 5 2 4 2 1>"},
		{"<1 0 3 1><1 7 1 0>", "<1 0 3 1> <1 7 1 0>"},
		{"<1 007 1 0>", "<1 7 1 0>"},
		{"<1 0 5 2> <1 1 5 2>", "<1 0 5 2> <1 1 5 2>"},
		{"<2 0 3 2 2 3>", "<2 0 3 2 2 3>"},
		{"<2 5 2 1 2 4>", "<2 5 2 1 2 4>"},
	}
	for _, tt := range tests {
		if got := rlMustParse(t, tt.in).String(); got != tt.want {
			t.Errorf("ParseRanklist(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestParseRanklistErrors checks that bad input is refused with an error
// naming the byte offset and what was expected.
func TestParseRanklistErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"x", "at byte 0: expected '<' or '⟨', found 'x'"},
		{"<", "at byte 1: expected the dimension, found end of input"},
		{"<1 5 1 0", "at byte 8: expected '>' or '⟩', found end of input"},
		{"<1 5 1>", "at byte 6: expected the stride of dimension 1, found '>'"},
		{"<1 5 1 0 7>", "at byte 9: expected '>' or '⟩', found '7'"},
		{"<1 5x 1 0>", "at byte 4: expected white space or '>' after the start rank, found 'x'"},
		{"<1 5 1 0>x", "at byte 9: expected '<' or '⟨', found 'x'"},
		{"<1 5 1 0>\xff", "at byte 9: expected '<' or '⟨', found byte 0xff"},
		{"<0 5>", "at byte 1: the dimension must be in [1, 32], got 0"},
		{"<33 0>", "at byte 1: the dimension must be in [1, 32], got 33"},
		{"<1 -5 1 0>", "at byte 3: the start rank must be in [0, 2147483647], got -5"},
		{"<1 99999999999 1 0>", "the start rank must be in [0, 2147483647], got 99999999999"},
		{"<1 5 0 1>", "at byte 5: the length of dimension 1 must be in [1, 2147483647], got 0"},
		{"<1 5 2 -1>", "at byte 7: the stride of dimension 1 must be in [0, 2147483647], got -1"},
		{"<1 5 2 0>", "at byte 7: the stride of dimension 1 is 0 but its length is 2"},
		{"<1 - 1 0>", "at byte 3: expected the start rank, found '-'"},
		{"<1 0 16777217 1>", "section at byte 0: more than 16777216 ranks"},
		{"<2 0 4097 4097 4097 1>", "section at byte 0: more than 16777216 ranks"},
		{"<1 0 16777216 1> <1 16777216 1 0>", "section at byte 17: list has more than 16777216 ranks"},
		{"<1 2147483647 2 1>", "section at byte 0: ranks overflow int32"},
		{"<1 0 3 1> <1 2 1 0>", "sections at bytes 0 and 10 overlap at rank 2"},
		{"<1 0 2 1> ⟨2 1 2 5 2 1⟩", "sections at bytes 0 and 10 overlap at rank 1"},
		{"<2 0 2 1 2 1>", "section at byte 0: rank 1 occurs twice in the section"},
		{"<2 0 2 2 3 1>", "section at byte 0: rank 2 occurs twice in the section"},
		{"<1 0 5 2> <2 1 2 2 2 5>", "sections at bytes 0 and 10 overlap at rank 6"},
	}
	for _, tt := range tests {
		l, err := ParseRanklist(tt.in)
		if err == nil {
			t.Errorf("ParseRanklist(%q) = %s, want error %q", tt.in, l, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "ranklist: ") {
			t.Errorf("ParseRanklist(%q) error = %q, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

// FuzzParseRanklist checks that ParseRanklist never panics and that what it
// accepts round-trips through String with a consistent Len and Ranks.
func FuzzParseRanklist(f *testing.F) {
	for _, s := range []string{
		"", "<1 4 1 0>", "⟨2 5 2 4 2 1⟩", "⟨2 0 4 4 4 1⟩", "<2 0 4 4 2 1>",
		"<1 0 3 1> <1 7 1 0>", "<2 0 3 2 2 3>", "<1 2147483646 2 1>",
		"<", "<1 5 1 0", "<0 5>", "<1 -5 1 0>", "<1 5 2 0>", "<1 0 3 1> <1 2 1 0>",
		"<2 0 2 1 2 1>", "<1 2147483647 2 1>", "<1 99999999999 1 0>", "\xff", "⟨1 0 5 1>",
		"<1 0 16777217 1>", "<1 999999 1 0>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseRanklist(s)
		if err != nil {
			return
		}
		out := l.String()
		back, err := ParseRanklist(out)
		if err != nil || !rlSame(back, l) || back.String() != out {
			t.Fatalf("ParseRanklist(%q) = %q, which reparses as %v, %v", s, out, back, err)
		}
		if l.Len() > 1<<16 {
			return
		}
		ranks := l.Ranks()
		if len(ranks) != l.Len() {
			t.Fatalf("%s: Len() = %d but %d ranks", l, l.Len(), len(ranks))
		}
		for _, r := range ranks {
			if !l.Contains(r) {
				t.Fatalf("%s: Contains(%d) = false", l, r)
			}
		}
		if got := NewRanklist(ranks).Ranks(); !slices.Equal(got, ranks) {
			t.Fatalf("%s: NewRanklist(Ranks()).Ranks() = %v, want %v", l, got, ranks)
		}
	})
}

// TestGroupIndex: the index of a node's many groups gives each rank the
// first group that holds it, as testing each group's ranklist does,
// where groups overlap, leave ranks out or hold every rank.
func TestGroupIndex(t *testing.T) {
	const ranks = 40
	sec := func(start, n, stride int32) Section { return Section{Start: start, Dims: []Dim{{n, stride}}} }
	for name, groups := range map[string][]Ranklist{
		"a rank each":  {{sec(3, 1, 0)}, {sec(0, 1, 0)}, {sec(1, 1, 0)}, {sec(2, 1, 0)}, {sec(4, 1, 0)}, {sec(5, 1, 0)}, {sec(6, 1, 0)}, {sec(7, 1, 0)}},
		"overlapping":  {{sec(0, 10, 2)}, {sec(0, 20, 1)}, {sec(5, 5, 5)}, {sec(1, 3, 1)}, {sec(30, 2, 3)}, {sec(0, 4, 10)}, {sec(2, 2, 1)}, {sec(39, 1, 0)}},
		"then all":     {{sec(9, 3, 1)}, {sec(0, 2, 20)}, {sec(4, 2, 1)}, {sec(1, 1, 0)}, {sec(7, 2, 2)}, {sec(25, 4, 1)}, nil, {sec(0, 40, 1)}},
		"some missing": {{sec(10, 3, 1)}, {sec(20, 2, 2)}, {sec(0, 1, 0)}, {sec(33, 1, 0)}, {sec(12, 2, 5)}, {sec(35, 2, 1)}, {sec(1, 2, 1)}, {sec(38, 1, 0)}},
	} {
		list := func(i int) Ranklist { return groups[i] }
		idx := groupIndex(len(groups), ranks, list)
		for r := range int32(ranks) {
			if got, want := firstGroup(idx, len(groups), list, r), firstGroup(nil, len(groups), list, r); got != want {
				t.Errorf("%s: rank %d in group %d, want %d", name, r, got, want)
			}
		}
	}
}

// TestManyBySections: a node's groups are indexed where their sections,
// not the groups, are many: two groups of scattered ranks (every third
// and every seventh rank of 4,096, a section each rank) are, eight groups
// of one section each are not.
func TestManyBySections(t *testing.T) {
	const ranks = 4096
	scattered := func(step int32) Ranklist {
		var l Ranklist
		for r := int32(0); r < ranks; r += step {
			l = append(l, Section{Start: r})
		}
		return l
	}
	two := []Ranklist{scattered(3), scattered(7)}
	if !many(len(two), ranks, func(i int) Ranklist { return two[i] }) {
		t.Errorf("two groups of %d and %d sections are not indexed", len(two[0]), len(two[1]))
	}
	eight := make([]Ranklist, 8)
	for i := range eight {
		eight[i] = Ranklist{{Start: int32(i * 512), Dims: []Dim{{512, 1}}}}
	}
	if many(len(eight), ranks, func(i int) Ranklist { return eight[i] }) {
		t.Error("eight groups of a section each are indexed")
	}
}

// TestRanklistBelow checks Below against the ranks enumerated, on
// random sets (grids, runs, scattered ranks) and every rank around them.
func TestRanklistBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 300 {
		var set []int32
		switch trial % 3 {
		case 0: // a block of a grid
			nx, ny, w := 1+rng.IntN(6), 1+rng.IntN(6), 8+rng.IntN(8)
			x0, y0 := rng.IntN(4), rng.IntN(4)
			for y := range ny {
				for x := range nx {
					set = append(set, int32((y0+y)*w+x0+x))
				}
			}
		case 1: // runs
			for r := int32(rng.IntN(5)); r < 200; r += int32(1 + rng.IntN(3)) {
				set = append(set, r)
			}
		default:
			for range 1 + rng.IntN(40) {
				set = append(set, int32(rng.IntN(300)))
			}
		}
		l := NewRanklist(set)
		ranks := l.Ranks()
		for r := int32(-2); r < 420; r++ {
			want, _ := slices.BinarySearch(ranks, r)
			if got := l.Below(r); got != want {
				t.Fatalf("%s: Below(%d) = %d, want %d", l, r, got, want)
			}
		}
	}
}

// TestRanklistOfSorted: RanklistOfSorted gives NewRanklist's ranklist,
// of sets in increasing order and, through NewRanklist, of others.
func TestRanklistOfSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		ranks := make([]int32, 1+rng.IntN(40))
		for i := range ranks {
			ranks[i] = int32(rng.IntN(64))
		}
		if rng.IntN(2) == 0 {
			slices.Sort(ranks)
			ranks = slices.Compact(ranks)
		}
		in := slices.Clone(ranks)
		if got, want := RanklistOfSorted(ranks).String(), NewRanklist(in).String(); got != want {
			t.Fatalf("RanklistOfSorted(%v) = %q, NewRanklist's %q", in, got, want)
		}
		if !slices.Equal(ranks, in) {
			t.Fatalf("RanklistOfSorted changed its ranks %v to %v", in, ranks)
		}
	}
}
