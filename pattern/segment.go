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
	MaxDepth  int       `json:"max_depth"`  // segments at this depth are not split (the root is at depth 0)
	MinLength int       `json:"min_length"` // segments shorter than this are not split
}

// DefaultSegmentOptions are AIC, depth 3 (eight phases at most, as in the
// paper's Tables 10, 13 and 15) and no length limit beyond 2.
func DefaultSegmentOptions() SegmentOptions {
	return SegmentOptions{Criterion: AIC, MaxDepth: 3, MinLength: 2}
}

// Segment is a node of the segmentation tree. Positions are 1-based and
// inclusive, as in the paper's tables. Entropies use natural logarithms.
type Segment struct {
	ID     int `json:"id"` // S0 is the root; children are numbered breadth first
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
// returned breadth first; leaves carry phase numbers left to right.
func Split(seq []int32, opt SegmentOptions) []Segment {
	if len(seq) == 0 {
		return nil
	}
	alpha := 0
	for _, c := range seq {
		alpha = max(alpha, int(c)+1)
	}
	w := newWorkspace(len(seq), alpha)
	segs := []Segment{{ID: 0, From: 1, To: len(seq), Parent: -1}}
	for i := 0; i < len(segs); i++ {
		s := &segs[i]
		s.Left, s.Right = -1, -1
		w.best(seq[s.From-1:s.To], s)
		if s.Depth >= opt.MaxDepth || s.Len() < max(opt.MinLength, 2) || s.Split == 0 || !(s.Strength(opt.Criterion) > 0) {
			continue
		}
		l, r := len(segs), len(segs)+1
		s.Left, s.Right = l, r
		d, from, split, to := s.Depth+1, s.From, s.Split, s.To
		segs = append(segs,
			Segment{ID: l, Depth: d, From: from, To: split, Parent: i},
			Segment{ID: r, Depth: d, From: split + 1, To: to, Parent: i})
	}
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
	return segs
}

// workspace holds the counts of one split search; xlogx[n] = n ln n.
type workspace struct {
	left, right []int32
	xlogx       []float64
}

func newWorkspace(n, alpha int) *workspace {
	w := &workspace{left: make([]int32, alpha), right: make([]int32, alpha), xlogx: make([]float64, n+1)}
	for i := 2; i <= n; i++ {
		w.xlogx[i] = float64(i) * math.Log(float64(i))
	}
	return w
}

// curve calls fn(i, N·D_JS(i), kl, kr) for every split i = 1..N−1 of seq
// (left part seq[:i]) and returns k, the distinct symbols of seq. The
// entropy sums are updated as one symbol moves from right to left, so a
// pass is linear in len(seq):
//
//	N·H = N ln N − Σ n_j ln n_j, and N·D_JS = N·H − (Nl·Hl + Nr·Hr) (Eq. 13).
func (w *workspace) curve(seq []int32, fn func(i int, ndjs float64, kl, kr int)) int {
	for _, c := range seq {
		w.left[c], w.right[c] = 0, 0
	}
	for _, c := range seq {
		w.right[c]++
	}
	var sumR, sumL float64 // Σ n ln n of each side
	k := 0
	for _, c := range seq {
		if w.right[c] > 0 && w.left[c] == 0 { // first visit of c
			sumR += w.xlogx[w.right[c]]
			k++
			w.left[c] = -1
		}
	}
	for _, c := range seq {
		w.left[c] = 0
	}
	n := len(seq)
	nH := w.xlogx[n] - sumR
	kl, kr := 0, k
	for i := 1; i < n; i++ {
		c := seq[i-1]
		sumR += w.xlogx[w.right[c]-1] - w.xlogx[w.right[c]]
		sumL += w.xlogx[w.left[c]+1] - w.xlogx[w.left[c]]
		w.right[c]--
		w.left[c]++
		if w.left[c] == 1 {
			kl++
		}
		if w.right[c] == 0 {
			kr--
		}
		nlHl := w.xlogx[i] - sumL
		nrHr := w.xlogx[n-i] - sumR
		fn(i, nH-nlHl-nrHr, kl, kr)
	}
	return k
}

// best fills s with the split of maximum D_JS (the first one on ties) and
// its strengths.
func (w *workspace) best(seq []int32, s *Segment) {
	n := len(seq)
	bestN, bestI, bestK := -1.0, 0, 0
	k := w.curve(seq, func(i int, ndjs float64, kl, kr int) {
		if ndjs > bestN+1e-12 {
			bestN, bestI, bestK = ndjs, i, kl+kr
		}
	})
	if bestI == 0 {
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
func DJSCurve(seq []int32) []float64 {
	if len(seq) < 2 {
		return nil
	}
	alpha := 0
	for _, c := range seq {
		alpha = max(alpha, int(c)+1)
	}
	w := newWorkspace(len(seq), alpha)
	out := make([]float64, len(seq)-1)
	// D_JS is never negative; rounding can make it -1e-16 where it is 0.
	w.curve(seq, func(i int, ndjs float64, _, _ int) { out[i-1] = max(ndjs, 0) / float64(len(seq)) })
	return out
}
