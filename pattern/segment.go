package pattern

import (
	"fmt"
	"math"
	"strings"
)

// Criterion is the model-selection rule that decides whether a segment
// is split (Section 2.2 and 4.1.2).
type Criterion int

const (
	// AIC splits when N·D̂JS > K (Eq. 17); s = (N·D̂JS − K)/K (Eq. 18).
	AIC Criterion = iota
	// BIC splits when 2N·D̂JS > K ln N (Eq. 14); s = (2N·D̂JS − K ln N)/(K ln N) (Eq. 15).
	BIC
)

// String returns "aic" or "bic".
func (c Criterion) String() string {
	if c == BIC {
		return "bic"
	}
	return "aic"
}

// ParseCriterion reads "aic" or "bic" (any case).
func ParseCriterion(s string) (Criterion, error) {
	switch strings.ToLower(s) {
	case "aic":
		return AIC, nil
	case "bic":
		return BIC, nil
	}
	return AIC, fmt.Errorf("unknown criterion %q (want aic or bic)", s)
}

// SegmentOptions bound the recursive segmentation.
type SegmentOptions struct {
	Criterion Criterion `json:"criterion"`
	// MaxDepth: segments at this depth are not split (the root is at
	// depth 0); negative: no limit.
	MaxDepth  int `json:"max_depth"`
	MinLength int `json:"min_length"` // segments shorter than this are not split
	// MaxPhases > 0 grows the tree best first (see SplitWeighted) up to
	// that many phases; 0 splits every segment the criterion allows,
	// breadth first, as the paper does.
	MaxPhases int `json:"max_phases"`
}

// DefaultSegmentOptions are the paper's: AIC, depth 3 (eight phases at
// most, as in its Tables 10, 13 and 15) and no length limit beyond 2.
func DefaultSegmentOptions() SegmentOptions {
	return SegmentOptions{Criterion: AIC, MaxDepth: 3, MinLength: 2}
}

// DefaultMaxPhases is the most phases the Iterations method finds by
// default: enough for a benchmark suite's kernels (HPCC's seven, the
// stretches between them and its start) where the paper's depth 3 allows
// eight in a balanced tree only.
const DefaultMaxPhases = 16

// SegmentOptions returns method m's default segmentation: the paper's
// for Paper; for Iterations, BIC, best first up to DefaultMaxPhases
// phases at any depth, minimum length 2. The paper prefers AIC for finer
// phases under its depth limit; best first, the phase count bounds the
// tree, and BIC keeps a homogeneous stretch (a time-step loop of hundreds
// of instances) one phase where AIC splits it on noise.
func (m Method) SegmentOptions() SegmentOptions {
	if m == Paper {
		return DefaultSegmentOptions()
	}
	return SegmentOptions{Criterion: BIC, MaxDepth: -1, MinLength: 2, MaxPhases: DefaultMaxPhases}
}

// Segment is a node of the segmentation tree. Positions are 1-based and
// inclusive, as in the paper's tables. Entropies use natural logarithms.
type Segment struct {
	ID     int `json:"id"` // S0 is the root; children are numbered breadth first (best first: in the order they are made)
	Depth  int `json:"depth"`
	From   int `json:"from"`
	To     int `json:"to"`
	Parent int `json:"parent"` // -1 for the root
	Left   int `json:"left"`   // child segments, -1 for a leaf
	Right  int `json:"right"`
	// Split is the position of maximum D_JS: the left part is From..Split
	// (0 when the segment is shorter than 2).
	Split int     `json:"split"`
	DJS   float64 `json:"djs"`   // the maximum Jensen-Shannon divergence D̂JS
	K     int     `json:"k"`     // free parameters kl + kr + 1 − k at Split
	SAIC  float64 `json:"saic"`  // segmentation strength by AIC (Eq. 18)
	SBIC  float64 `json:"sbic"`  // segmentation strength by BIC (Eq. 15)
	Phase int     `json:"phase"` // 1-based phase number of a leaf, 0 for inner segments
}

// Name returns "S" and the segment's number.
func (s *Segment) Name() string { return "S" + itoa(s.ID) }

// Len returns the number of instances in the segment.
func (s *Segment) Len() int { return s.To - s.From + 1 }

// Leaf reports whether the segment is a phase.
func (s *Segment) Leaf() bool { return s.Left < 0 }

// Strength returns the segmentation strength under c.
func (s *Segment) Strength(c Criterion) float64 {
	if c == BIC {
		return s.SBIC
	}
	return s.SAIC
}

// Split recursively segments seq (symbols >= 0) at the point of maximum
// D_JS, while the criterion's strength is positive, the depth is below
// MaxDepth and the segment is at least MinLength long. Segments are
// returned breadth first; leaves carry phase numbers left to right. With
// MaxPhases > 0 the tree grows best first instead: each time, the leaf
// whose split removes the most entropy from the whole sequence (its share
// of the weight times its D_JS) is split, among those the criterion,
// MaxDepth and MinLength allow, until there are MaxPhases leaves; a fixed
// depth would spend the phases on one end of an unbalanced run.
func Split(seq []int32, opt SegmentOptions) []Segment { return SplitWeighted(seq, nil, opt) }

// SplitWeighted is Split where instance i weighs weight[i] (>= 0; nil:
// every instance 1). The symbols' frequencies in a segment are their
// shares of its weight; the segmentation strength keeps the number of
// instances as the sample size (the weights are scaled to sum to it, a
// weighted likelihood), and K counts the symbols of positive weight. A
// segment whose instances all weigh 0 is not split.
func SplitWeighted(seq []int32, weight []float64, opt SegmentOptions) []Segment {
	if len(seq) == 0 {
		return nil
	}
	alpha := 0
	for _, c := range seq {
		alpha = max(alpha, int(c)+1)
	}
	w := newWorkspace(len(seq), alpha, weight)
	segs := []Segment{{ID: 0, From: 1, To: len(seq), Parent: -1}}
	if opt.MaxPhases > 0 {
		return w.bestFirst(seq, segs, opt)
	}
	for i := 0; i < len(segs); i++ {
		s := &segs[i]
		s.Left, s.Right = -1, -1
		w.best(seq, s)
		if !opt.splits(s) {
			continue
		}
		l, r := len(segs), len(segs)+1
		s.Left, s.Right = l, r
		d, from, split, to := s.Depth+1, s.From, s.Split, s.To
		segs = append(segs,
			Segment{ID: l, Depth: d, From: from, To: split, Parent: i},
			Segment{ID: r, Depth: d, From: split + 1, To: to, Parent: i})
	}
	numberPhases(segs)
	return segs
}

// splits reports whether segment s (its best split computed) may be split.
func (opt *SegmentOptions) splits(s *Segment) bool {
	return (opt.MaxDepth < 0 || s.Depth < opt.MaxDepth) && s.Len() >= max(opt.MinLength, 2) && s.Split > 0 && s.Strength(opt.Criterion) > 0
}

// numberPhases numbers the leaves of the tree left to right.
func numberPhases(segs []Segment) {
	phase := 0
	var number func(i int)
	number = func(i int) {
		if segs[i].Left < 0 {
			phase++
			segs[i].Phase = phase
			return
		}
		number(segs[i].Left)
		number(segs[i].Right)
	}
	number(0)
}

// bestFirst grows the tree from the root segs[0] by splitting, each time,
// the leaf whose split removes the most entropy from the whole sequence
// (its share of the weight times its D_JS), among the leaves opt allows
// to split, until there are opt.MaxPhases leaves. Segments are numbered
// in the order they are made.
func (w *workspace) bestFirst(seq []int32, segs []Segment, opt SegmentOptions) []Segment {
	var total float64
	for i := range seq {
		total += w.at(i)
	}
	weightOf := func(s *Segment) float64 {
		var x float64
		for i := s.From - 1; i < s.To; i++ {
			x += w.at(i)
		}
		return x
	}
	segs[0].Left, segs[0].Right = -1, -1
	w.best(seq, &segs[0])
	open := []int{0}
	for leaves := 1; leaves < opt.MaxPhases; leaves++ {
		pick, gain := -1, 0.0
		for j, i := range open {
			s := &segs[i]
			if !opt.splits(s) {
				continue
			}
			if g := weightOf(s) / total * s.DJS; pick < 0 || g > gain {
				pick, gain = j, g
			}
		}
		if pick < 0 {
			break
		}
		i := open[pick]
		open = append(open[:pick], open[pick+1:]...)
		l, r := len(segs), len(segs)+1
		s := segs[i]
		segs[i].Left, segs[i].Right = l, r
		segs = append(segs,
			Segment{ID: l, Depth: s.Depth + 1, From: s.From, To: s.Split, Parent: i, Left: -1, Right: -1},
			Segment{ID: r, Depth: s.Depth + 1, From: s.Split + 1, To: s.To, Parent: i, Left: -1, Right: -1})
		w.best(seq, &segs[l])
		w.best(seq, &segs[r])
		open = append(open, l, r)
	}
	numberPhases(segs)
	return segs
}

// workspace holds the symbol weights of one split search; xlogx[n] = n
// ln n for the counts of an unweighted search.
type workspace struct {
	left, right []float64
	weight      []float64 // per instance; nil: 1 each
	xlogx       []float64
}

func newWorkspace(n, alpha int, weight []float64) *workspace {
	w := &workspace{left: make([]float64, alpha), right: make([]float64, alpha), weight: weight}
	if weight == nil {
		w.xlogx = make([]float64, n+1)
		for i := 2; i <= n; i++ {
			w.xlogx[i] = float64(i) * math.Log(float64(i))
		}
	}
	return w
}

// xlx returns x ln x (0 for x <= 0).
func (w *workspace) xlx(x float64) float64 {
	if w.weight == nil {
		return w.xlogx[int(x)]
	}
	if x <= 0 {
		return 0
	}
	return x * math.Log(x)
}

// at returns the weight of instance i.
func (w *workspace) at(i int) float64 {
	if w.weight == nil {
		return 1
	}
	return w.weight[i]
}

// curve calls fn(i, N·D_JS(i), kl, kr) for every split i = 1..N−1 of
// seq[from:to] (left part seq[from:from+i]) and returns k, the distinct
// symbols of positive weight there. The entropy sums are updated as one
// instance moves from right to left, so a pass is linear in its length:
//
//	W·H = W ln W − Σ w_j ln w_j, and W·D_JS = W·H − (Wl·Hl + Wr·Hr) (Eq. 13),
//
// with W the total weight (N unweighted) and w_j a symbol's; weighted,
// N·D_JS = (N/W)·W·D_JS.
func (w *workspace) curve(seq []int32, from, to int, fn func(i int, ndjs float64, kl, kr int)) int {
	part := seq[from:to]
	for _, c := range part {
		w.left[c], w.right[c] = 0, 0
	}
	var total float64
	for j, c := range part {
		x := w.at(from + j)
		w.right[c] += x
		total += x
	}
	var sumR, sumL float64 // Σ w ln w of each side
	k := 0
	for _, c := range part {
		if w.right[c] > 0 && w.left[c] == 0 { // first visit of c
			sumR += w.xlx(w.right[c])
			k++
			w.left[c] = -1
		}
	}
	for _, c := range part {
		w.left[c] = 0
	}
	n := len(part)
	if total <= 0 {
		return k
	}
	scale := float64(n) / total
	wH := w.xlx(total) - sumR
	kl, kr := 0, k
	var wl float64
	for i := 1; i < n; i++ {
		c := part[i-1]
		x := w.at(from + i - 1)
		if x > 0 {
			sumR += w.xlx(w.right[c]-x) - w.xlx(w.right[c])
			sumL += w.xlx(w.left[c]+x) - w.xlx(w.left[c])
			w.right[c] -= x
			if w.left[c] == 0 {
				kl++
			}
			w.left[c] += x
			if w.right[c] <= 0 {
				kr--
			}
		}
		wl += x
		wlHl := w.xlx(wl) - sumL
		wrHr := w.xlx(total-wl) - sumR
		fn(i, scale*(wH-wlHl-wrHr), kl, kr)
	}
	return k
}

// best fills s with the split of maximum D_JS (the first one on ties) and
// its strengths.
func (w *workspace) best(seq []int32, s *Segment) {
	n := s.Len()
	bestN, bestI, bestK := -1.0, 0, 0
	k := w.curve(seq, s.From-1, s.To, func(i int, ndjs float64, kl, kr int) {
		if ndjs > bestN+1e-12 {
			bestN, bestI, bestK = ndjs, i, kl+kr
		}
	})
	if bestI == 0 || bestN <= 0 && w.weight != nil {
		return
	}
	bestN = max(bestN, 0)
	s.Split = s.From + bestI - 1
	s.DJS = bestN / float64(n)
	s.K = bestK + 1 - k
	kf := float64(s.K)
	s.SAIC = (bestN - kf) / kf
	s.SBIC = (2*bestN - kf*math.Log(float64(n))) / (kf * math.Log(float64(n)))
}

// DJSCurve returns D_JS at every split point of seq: element i−1 is the
// divergence between seq[:i] and seq[i:] (the data of Figures 13, 18 and
// 23).
func DJSCurve(seq []int32) []float64 { return DJSCurveWeighted(seq, nil) }

// DJSCurveWeighted is DJSCurve with instance i weighing weight[i], as for
// SplitWeighted.
func DJSCurveWeighted(seq []int32, weight []float64) []float64 {
	if len(seq) < 2 {
		return nil
	}
	alpha := 0
	for _, c := range seq {
		alpha = max(alpha, int(c)+1)
	}
	w := newWorkspace(len(seq), alpha, weight)
	out := make([]float64, len(seq)-1)
	// D_JS is never negative; rounding can make it -1e-16 where it is 0.
	w.curve(seq, 0, len(seq), func(i int, ndjs float64, _, _ int) { out[i-1] = max(ndjs, 0) / float64(len(seq)) })
	return out
}
