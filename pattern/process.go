package pattern

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"kairos/pattern/suffix"
	"kairos/trace"
)

// ProcessPattern is a repeat of one rank's communication calls: Table 2
// of the paper. Its instances are the pieces the rank's contexts are cut
// into.
type ProcessPattern struct {
	ID      int      `json:"id"`      // 1-based: PT1, PT2... rank by rank, in order of first occurrence
	Rank    int      `json:"rank"`    // the rank it occurs on
	Symbols []string `json:"symbols"` // the calls: S3 sends to rank 3, R1 receives from rank 1, ALLREDUCE...
	// Positions are where the instances start, counted in MPI calls of the
	// rank from 0 (Waitall included; computation and markers not).
	Positions []int `json:"positions"`
	// Function is the user function its calls are made from ("" if the
	// trace does not say).
	Function string `json:"function"`
	// Maximal is false for a piece of a context that no maximal repeat
	// starts (a stretch of calls that occurs once).
	Maximal bool `json:"maximal"`
}

// Name returns "PT" and the pattern's number.
func (p *ProcessPattern) Name() string { return "PT" + itoa(p.ID) }

// Word returns the calls joined by a middle dot, as the paper prints them.
func (p *ProcessPattern) Word() string { return strings.Join(p.Symbols, "·") }

// tile is one instance of a process pattern: events [start, end) of a rank.
type tile struct {
	start, end int32
	pt         int32 // index in Result.Process
}

// cutRanks cuts every rank, ranks in parallel; with Iterations, the
// contexts are first cut at the iterations of their loops.
func cutRanks(ranks []rankData, keys []symKey, m Method) [][]tile {
	nsym := len(keys)
	tiles := make([][]tile, len(ranks))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range min(runtime.GOMAXPROCS(0), len(ranks)) {
		wg.Go(func() {
			var sc suffix.Scratch // each rank's trees in the memory of the last's
			for r := int(next.Add(1) - 1); r < len(ranks); r = int(next.Add(1) - 1) {
				if m == Iterations {
					ranks[r].ends = ranks[r].segs
					ranks[r].segs, ranks[r].wide = loopCuts(&ranks[r], keys, len(ranks), nil, &sc)
				}
				if ranks[r].wide == nil {
					ranks[r].gap = nil // the loops' rotations are chosen (refine may cut again)
				}
				tiles[r] = cutRank(&ranks[r], nsym, &sc)
			}
		})
	}
	wg.Wait()
	return tiles
}

// cutRank cuts rank data into process-pattern instances.
//
// Each context (the calls between two delimiters) is covered left to right
// by the longest maximal repeat starting at the current call. Repeats never
// cross a context, since every context ends with a separator symbol of its
// own. A repeat that is an exact power u^m (a loop inside one context) is
// replaced by u, unless it is the whole context. Calls where no maximal
// repeat starts form one instance of a pattern of their own, up to the next
// call where one does.
func cutRank(rd *rankData, nsym int, sc *suffix.Scratch) []tile {
	n := len(rd.ev)
	if n == 0 {
		return nil
	}
	seq, _ := contextSeq(rd, nsym)
	rep := sc.Repeats(seq, nsym+len(rd.segs), func(c int32) bool { return int(c) >= nsym })
	var tiles []tile
	for j, a := range rd.segs {
		b := segEnd(rd, j)
		off := int32(j) // separators before this context in seq
		for i := a; i < b; {
			l, _ := rep.Longest(int(i + off))
			if l == 0 {
				k := i + 1
				for k < b {
					if l, _ := rep.Longest(int(k + off)); l > 0 {
						break
					}
					k++
				}
				tiles = append(tiles, tile{start: i, end: k, pt: -1})
				i = k
				continue
			}
			if !(i == a && i+int32(l) == b) {
				l = rep.Root(int(i+off), l)
			}
			tiles = append(tiles, tile{start: i, end: i + int32(l), pt: -2})
			i += int32(l)
		}
	}
	return tiles
}

func segEnd(rd *rankData, j int) int32 {
	if j+1 < len(rd.segs) {
		return rd.segs[j+1]
	}
	return int32(len(rd.ev))
}

// processPatterns numbers the tiles' contents as process patterns, rank by
// rank, and fills each tile's pt.
func processPatterns(ranks []rankData, tiles [][]tile, syms *symbols, meta *trace.Meta) []ProcessPattern {
	var pts []ProcessPattern
	for r := range ranks {
		ids := map[string]int32{}
		for i := range tiles[r] {
			t := &tiles[r][i]
			ev := ranks[r].ev[t.start:t.end]
			k := wordKey(ev)
			id, ok := ids[k]
			if !ok {
				id = int32(len(pts))
				ids[k] = id
				p := ProcessPattern{ID: len(pts) + 1, Rank: r, Maximal: t.pt == -2, Function: meta.RegionName(syms.keys[ev[0].sym].region)}
				for _, e := range ev {
					p.Symbols = append(p.Symbols, syms.keys[e.sym].name())
				}
				pts = append(pts, p)
			}
			t.pt = id
			pts[id].Positions = append(pts[id].Positions, int(ev[0].pos))
		}
	}
	return pts
}

func wordKey(ev []event) string {
	b := make([]byte, 0, 4*len(ev))
	for _, e := range ev {
		b = append(b, byte(e.sym>>24), byte(e.sym>>16), byte(e.sym>>8), byte(e.sym))
	}
	return string(b)
}
