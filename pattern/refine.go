package pattern

import "slices"

// refine cuts each rank that has a wide loop (iterationCuts: a loop
// taken whole though a loop within holds over half its calls) again
// without it where a partner iterates at the loop within: where each of
// its iterations exchanges with minSpread iterations of a partner or
// more, and cut again, with half as many or fewer.
//
// Ranks choose their loops alone, from their own calls, and a loop of
// loops may repeat exactly on some ranks and not on others: three of
// GPAW's eight ranks repeated 17 times a sequence of 640 calls, twelve
// halo exchanges of 36 calls and collectives, where the others iterate
// at the exchanges. Each iteration of 640 then met four or five of a
// partner's iterations, the partners' iterations linked the next, and
// 11,000 calls a rank were one instance. The ranks are taken in order,
// each against its partners' cuts as they stand, again while one is cut
// finer (a rank whose only partner was wide is taken again once the
// partner is cut finer); messages alone tell (collectives join every
// member, whatever its cuts).
func refine(ranks []rankData, tiles [][]tile, l *links, keys []symKey, nsym int) {
	var recvOf [][]int32
	fine := make([][]int32, len(ranks))
	for changed := true; changed; {
		changed = false
		for r := range ranks {
			if ranks[r].wide == nil {
				continue
			}
			if recvOf == nil {
				recvOf = receives(ranks, l, keys)
			}
			coarse := spread(ranks, l, keys, recvOf, r, ranks[r].segs)
			if coarse < minSpread {
				continue
			}
			if fine[r] == nil {
				fine[r] = fineCuts(&ranks[r], keys, len(ranks))
			}
			if 2*spread(ranks, l, keys, recvOf, r, fine[r]) <= coarse {
				ranks[r].segs, ranks[r].wide = fine[r], nil
				tiles[r] = cutRank(&ranks[r], nsym, nil)
				changed = true
			}
		}
	}
	for r := range ranks {
		ranks[r].wide, ranks[r].gap = nil, nil
	}
}

// fineCuts returns rank data rd's program contexts cut at the iterations
// of the loops loopCuts takes without rd's wide loop (its loops over
// partners too, which a rank cut again once lost).
func fineCuts(rd *rankData, keys []symKey, ranks int) []int32 {
	again := *rd
	again.segs = rd.ends
	cuts, _ := loopCuts(&again, keys, ranks, rd.wide, nil)
	return cuts
}

// minSpread is the spread (a partner's iterations an iteration exchanges
// with) from which a rank's cuts are too wide: a loop within an
// iteration runs minIterations times or more in it, and two ranks that
// cut the same loop at different calls spread to 2 at most.
const minSpread = minIterations

// receives returns, for every send r:i, the index on its receiving rank
// of the receive that gets it, -1 for none.
func receives(ranks []rankData, l *links, keys []symKey) [][]int32 {
	recvOf := make([][]int32, len(ranks))
	for r := range ranks {
		recvOf[r] = make([]int32, len(ranks[r].ev))
		for i := range recvOf[r] {
			recvOf[r][i] = -1
		}
	}
	for r := range ranks {
		for i, s := range l.sendOf[r] {
			if s >= 0 {
				recvOf[keys[ranks[r].ev[i].sym].recvSource()][s] = int32(i)
			}
		}
	}
	return recvOf
}

// spread returns, with rank r cut at segs, how many of a partner's
// iterations the messages of one of its iterations come from or go to,
// on average over its iterations that exchange with the partner: the
// most over its partners (its messages to itself aside).
func spread(ranks []rankData, l *links, keys []symKey, recvOf [][]int32, r int, segs []int32) float64 {
	// Rank r's calls come in order, their iterations too: per partner,
	// the iterations met and, for the last, the partner's it meets.
	type met struct {
		seg         int32
		segs, links int
		theirs      []int32
	}
	peers := map[int32]*met{}
	seg := int32(-1)
	add := func(peer int32, j int32) {
		if peer < 0 || int(peer) >= len(ranks) || int(peer) == r || j < 0 {
			return
		}
		m := peers[peer]
		if m == nil {
			m = &met{seg: -1}
			peers[peer] = m
		}
		if m.seg != seg {
			m.seg, m.theirs = seg, m.theirs[:0]
			m.segs++
		}
		if t := segOf(ranks[peer].segs, j); !slices.Contains(m.theirs, t) {
			m.theirs = append(m.theirs, t)
			m.links++
		}
	}
	for i := range ranks[r].ev {
		for int(seg+1) < len(segs) && segs[seg+1] <= int32(i) {
			seg++
		}
		sk := &keys[ranks[r].ev[i].sym]
		add(sk.recvSource(), l.sendOf[r][i])
		add(sk.partner, recvOf[r][i])
	}
	most := 0.0
	for _, m := range peers {
		most = max(most, float64(m.links)/float64(m.segs))
	}
	return most
}

// segOf returns the index of the context of segs that call i is in.
func segOf(segs []int32, i int32) int32 {
	k, found := slices.BinarySearch(segs, i)
	if !found {
		k--
	}
	return int32(k)
}
