package pattern

import (
	"math"
	"sort"
	"time"

	"kairos/trace"
)

// Options are the knobs of the whole analysis.
type Options struct {
	Method  Method // how Analyze detects the patterns (Iterations, the zero value, or Paper)
	Segment SegmentOptions
	Cutoff  float64 // modified Z-score above which an instance is slow
}

// DefaultOptions are the Iterations method with its segmentation and
// cut-off 3.5.
func DefaultOptions() Options { return MethodOptions(Iterations) }

// MethodOptions are method m with its default segmentation
// (Method.SegmentOptions) and cut-off 3.5; MethodOptions(Paper) is the
// paper's analysis: AIC, depth 3, minimum length 2.
func MethodOptions(m Method) Options {
	return Options{Method: m, Segment: m.SegmentOptions(), Cutoff: DefaultCutoff}
}

// Phase is a leaf of the segmentation tree (Tables 10, 13, 15).
type Phase struct {
	Number    int      `json:"number"`
	Segment   int      `json:"segment"` // segment ID
	From      int      `json:"from"`
	To        int      `json:"to"` // 1-based, inclusive
	Functions []string `json:"functions"`
	Slow      int      `json:"slow"` // slow instances in the phase (0 in an untimed trace)
	// Seconds is the run's time the phase covers: the sum of its
	// instances' TimeShares (0 in an untimed trace); Share its fraction
	// of the run's.
	Seconds float64 `json:"seconds"`
	Share   float64 `json:"share"`
}

// Analysis is the outcome of the five steps.
type Analysis struct {
	*Patterns
	Options  Options
	Segments []Segment
	Phases   []Phase
	Slow     []Slow // nil for an untimed trace
	// Weights are the instances' weights in the segmentation (see
	// timeWeights); nil: one each.
	Weights []float64
}

// Analyze runs the five steps on src: process and communication patterns,
// phases, slow instances (timed traces only) and their inspection
// affinity.
func Analyze(src trace.Source, opt Options) (*Analysis, error) {
	p, err := DetectMethod(src, opt.Method)
	if err != nil {
		return nil, err
	}
	return AnalyzePatterns(p, opt)
}

// AnalyzePatterns runs steps 3 to 5 on detected patterns. With the
// Iterations method, the instances of a timed trace weigh half by count
// and half by time in the segmentation (timeWeights); the paper counts.
func AnalyzePatterns(p *Patterns, opt Options) (*Analysis, error) {
	a := &Analysis{Patterns: p, Options: opt}
	t0 := time.Now()
	if p.Timed && opt.Method == Iterations {
		a.Weights = timeWeights(p.TimeShares())
	}
	a.Segments = SplitWeighted(p.Symbols(), a.Weights, opt.Segment)
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
// most frequent first, and the time they cover.
func (a *Analysis) phases() {
	var share []float64
	var total float64
	if a.Timed && len(a.Sequence) > 0 {
		share = a.TimeShares()
		for _, x := range share {
			total += x
		}
		total = max(total, math.SmallestNonzeroFloat64)
	}
	for _, s := range a.Segments {
		if !s.Leaf() {
			continue
		}
		ph := Phase{Number: s.Phase, Segment: s.ID, From: s.From, To: s.To}
		if share != nil {
			for _, x := range share[s.From-1 : s.To] {
				ph.Seconds += x
			}
			ph.Share = ph.Seconds / total
		}
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

// TimeShares partitions the run's time, from the first instance's start
// to the last finish, among the instances: each gets the time it brings
// the timeline forward (from the latest finish before it, or its start
// if later, to its finish), and the computation between the latest
// finish and the next instance's start goes to the instance that
// finished there. An instance inside a longer one gets nothing. Shares
// are in seconds; nil in an untimed trace.
func (p *Patterns) TimeShares() []float64 {
	if !p.Timed || len(p.Sequence) == 0 {
		return nil
	}
	share := make([]float64, len(p.Sequence))
	reach, owner := p.Sequence[0].Start, 0 // the timeline covered so far, and who last moved it
	for i := range p.Sequence {
		in := &p.Sequence[i]
		if in.Start > reach {
			share[owner] += (in.Start - reach).Seconds()
			reach = in.Start
		}
		if in.Finish > reach {
			share[i] += (in.Finish - reach).Seconds()
			reach, owner = in.Finish, i
		}
	}
	return share
}

// timeWeights returns the segmentation weights of instances of the given
// TimeShares: half a count for each instance that moves the run's
// timeline forward (by a ten-thousandth of the mean move at least), and
// half the instances' number shared in proportion to time, so that a
// benchmark of one instance of seconds is a phase beside one of
// thousands of microseconds, thousands of short instances still count as
// the paper counts them, and the instances that happen inside a longer
// one (a receive completed out of its kernel's order) weigh nothing of
// their own. The weights sum to the number of instances; nil if no time
// passes.
func timeWeights(share []float64) []float64 {
	var total, moved float64
	for _, x := range share {
		total += x
	}
	if !(total > 0) {
		return nil
	}
	n := float64(len(share))
	least := 1e-4 * total / n
	for _, x := range share {
		if x >= least {
			moved++
		}
	}
	w := make([]float64, len(share))
	for i, x := range share {
		if x >= least {
			w[i] = 0.5 * n / moved
		}
		w[i] += 0.5 * n * x / total
	}
	return w
}
