package pattern

import (
	"sort"
	"time"

	"kairos/trace"
)

// Options are the knobs of the whole analysis.
type Options struct {
	Segment SegmentOptions
	Cutoff  float64 // modified Z-score above which an instance is slow
}

// DefaultOptions are AIC, depth 3, minimum length 2 and cut-off 3.5.
func DefaultOptions() Options {
	return Options{Segment: DefaultSegmentOptions(), Cutoff: DefaultCutoff}
}

// Phase is a leaf of the segmentation tree (Tables 10, 13, 15).
type Phase struct {
	Number    int      `json:"number"`
	Segment   int      `json:"segment"` // segment ID
	From      int      `json:"from"`
	To        int      `json:"to"` // 1-based, inclusive
	Functions []string `json:"functions"`
	Slow      int      `json:"slow"` // slow instances in the phase (0 in an untimed trace)
}

// Analysis is the outcome of the five steps.
type Analysis struct {
	*Patterns
	Options  Options
	Segments []Segment
	Phases   []Phase
	Slow     []Slow // nil for an untimed trace
}

// Analyze runs the five steps on src: process and communication patterns,
// phases, slow instances (timed traces only) and their inspection
// affinity.
func Analyze(src trace.Source, opt Options) (*Analysis, error) {
	p, err := Detect(src)
	if err != nil {
		return nil, err
	}
	return AnalyzePatterns(p, opt)
}

// AnalyzePatterns runs steps 3 to 5 on detected patterns.
func AnalyzePatterns(p *Patterns, opt Options) (*Analysis, error) {
	a := &Analysis{Patterns: p, Options: opt}
	t0 := time.Now()
	a.Segments = Split(p.Symbols(), opt.Segment)
	a.phases()
	t1 := time.Now()
	p.Times.Phases = t1.Sub(t0)
	if !p.Timed {
		return a, nil
	}
	slow, err := FindSlow(p, opt.Cutoff, a.PhaseOf)
	if err != nil {
		return nil, err
	}
	t2 := time.Now()
	Classify(slow)
	p.Times.Slow, p.Times.Classify = t2.Sub(t1), time.Since(t2)
	a.Slow = slow
	for _, s := range slow {
		a.Phases[s.Phase-1].Slow++
	}
	return a, nil
}

// phases lists the leaves with the user functions their instances run in,
// most frequent first.
func (a *Analysis) phases() {
	for _, s := range a.Segments {
		if !s.Leaf() {
			continue
		}
		ph := Phase{Number: s.Phase, Segment: s.ID, From: s.From, To: s.To}
		count := map[string]int{}
		first := map[string]int{}
		for i := s.From - 1; i < s.To; i++ {
			for _, r := range a.Sequence[i].Regions {
				name := a.Function(r)
				if name == "" {
					continue
				}
				if _, ok := count[name]; !ok {
					first[name] = len(first)
					ph.Functions = append(ph.Functions, name)
				}
				count[name]++
			}
		}
		sort.SliceStable(ph.Functions, func(i, j int) bool {
			fi, fj := ph.Functions[i], ph.Functions[j]
			if count[fi] != count[fj] {
				return count[fi] > count[fj]
			}
			return first[fi] < first[fj]
		})
		a.Phases = append(a.Phases, ph)
	}
	sort.Slice(a.Phases, func(i, j int) bool { return a.Phases[i].Number < a.Phases[j].Number })
}

// PhaseOf returns the phase of sequence position pos (1-based) and the
// position's 1-based place in it; 0, 0 if pos is outside the sequence.
func (a *Analysis) PhaseOf(pos int) (phase, inPhase int) {
	i := sort.Search(len(a.Phases), func(i int) bool { return a.Phases[i].To >= pos })
	if i == len(a.Phases) || pos < a.Phases[i].From {
		return 0, 0
	}
	return a.Phases[i].Number, pos - a.Phases[i].From + 1
}
