package cluster

import (
	"fmt"

	"kairos/prsd"
	"kairos/trace"
)

// Matching is ACURDION's Table II for a reduction: how much of each rank's
// own calls the calls it replays from the reduction keep. Each rank's MPI
// calls and its replayed ones are aligned position by position; Count,
// Src, Dest and Tag are the percentages of aligned calls having that
// parameter whose value is the rank's own, Events the aligned calls over
// the longer of the two sequences, and Loop the percentage of ranks whose
// replayed calls have the loop signature of their own.
type Matching struct {
	Count  float64 `json:"count"`
	Loop   float64 `json:"loop"`
	Events float64 `json:"events"`
	Src    float64 `json:"src"`
	Dest   float64 `json:"dest"`
	Tag    float64 `json:"tag"`
}

// Match compares every rank of src with the same rank of replayed (the
// reduction read as the whole trace), given the ranks' signatures.
func Match(src, replayed trace.Source, sigs []Signatures) (Matching, error) {
	if src.NumRanks() != replayed.NumRanks() {
		return Matching{}, fmt.Errorf("cluster: %d ranks replayed for %d", replayed.NumRanks(), src.NumRanks())
	}
	var t tally
	for r := 0; r < src.NumRanks(); r++ {
		if err := t.rank(src, replayed, r, sigs[r].Loop); err != nil {
			return Matching{}, err
		}
	}
	return Matching{
		Count: pct(t.count), Src: pct(t.src), Dest: pct(t.dest), Tag: pct(t.tag),
		Events: pct(t.events), Loop: pct(t.loops),
	}, nil
}

// callParams is what Match compares of an MPI call.
type callParams struct {
	count                   int64
	src, dest, tag          int32
	hasSrc, hasDest, hasTag bool
}

func paramsOf(e *trace.Event) callParams {
	c := callParams{count: max(e.SendBytes, 0) + max(e.RecvBytes, 0), tag: e.Tag, hasTag: e.Kind.IsPointToPoint()}
	switch {
	case e.Kind.IsSend():
		c.dest, c.hasDest = e.Partner, true
	case e.Kind.IsRecv():
		c.src, c.hasSrc = e.Partner, true
	case e.Kind == trace.SendRecv:
		c.dest, c.src, c.hasDest, c.hasSrc = e.Partner, e.Source, true, true
	}
	return c
}

// nextCall advances rd to its next MPI call.
func nextCall(rd trace.Reader) bool {
	for rd.Next() {
		if rd.Event().Kind.IsMPI() {
			return true
		}
	}
	return false
}

// tally counts matches and comparisons, [matched, compared].
type tally struct {
	count, src, dest, tag, events, loops [2]int
}

// rank compares rank r's calls in src and replayed, streaming both, and
// the loop signature of the replayed calls with the rank's own, loop.
// Replayed calls that are the rank's own, by kind and call site, fold as
// its own do: their shape is folded (a second pass over them) only where
// they are not (a real program's reduction replays every rank's own
// calls, and folding them again took a quarter of `report`'s time on
// Ray's archive).
func (t *tally) rank(src, replayed trace.Source, r int, loop uint64) error {
	own, err := src.OpenRank(r)
	if err != nil {
		return err
	}
	defer own.Close()
	rep, err := replayed.OpenRank(r)
	if err != nil {
		return err
	}
	defer rep.Close()
	identical := true
	for {
		okOwn, okRep := nextCall(own), nextCall(rep)
		if okOwn != okRep {
			identical = false
			t.events[1]++ // a call only one side has
			continue
		}
		if !okOwn {
			break
		}
		t.events[0]++
		t.events[1]++
		o, p := own.Event(), rep.Event()
		identical = identical && o.Kind == p.Kind && o.CallSite == p.CallSite
		a, b := paramsOf(o), paramsOf(p)
		same(&t.count, true, a.count == b.count)
		same(&t.src, a.hasSrc || b.hasSrc, a.hasSrc == b.hasSrc && a.src == b.src)
		same(&t.dest, a.hasDest || b.hasDest, a.hasDest == b.hasDest && a.dest == b.dest)
		same(&t.tag, a.hasTag || b.hasTag, a.hasTag == b.hasTag && a.tag == b.tag)
	}
	if err := own.Err(); err != nil {
		return fmt.Errorf("rank %d: %w", r, err)
	}
	if err := rep.Err(); err != nil {
		return fmt.Errorf("rank %d replayed: %w", r, err)
	}
	if identical {
		same(&t.loops, true, true)
		return nil
	}
	l, err := loopSignature(replayed, r)
	if err != nil {
		return fmt.Errorf("rank %d replayed: %w", r, err)
	}
	same(&t.loops, true, l == loop)
	return nil
}

// loopSignature returns the loop signature of rank r's calls in src.
func loopSignature(src trace.Source, r int) (uint64, error) {
	rd, err := src.OpenRank(r)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	shape := prsd.NewShape(nil)
	for nextCall(rd) {
		shape.Add(rd.Event())
	}
	if err := rd.Err(); err != nil {
		return 0, err
	}
	shape.Finish()
	return shape.LoopSignature(), nil
}

func same(c *[2]int, applies, equal bool) {
	if !applies {
		return
	}
	c[1]++
	if equal {
		c[0]++
	}
}

// pct is matched / compared in percent, 100 when nothing was compared.
func pct(c [2]int) float64 {
	if c[1] == 0 {
		return 100
	}
	return 100 * float64(c[0]) / float64(c[1])
}
