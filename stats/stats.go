// Package stats summarises a trace: events by kind, point-to-point and
// collective volumes, per-rank totals, the point-to-point communication
// matrix, the heaviest communication partners and, for a timed trace, the
// flat profile of its MPI calls. It streams the trace a
// rank at a time; memory grows with ranks x partners, not with events.
//
// Volumes are counted on the sending side: a rank's received messages and
// bytes are those the other ranks sent to it, so that SimGrid's
// probe-first receives (size -1) count the size of the message they get.
package stats

import (
	"fmt"
	"math"
	"math/bits"
	"sort"

	"kairos/trace"
)

// Stats is the summary of one trace. Its JSON form is stable.
type Stats struct {
	Ranks  int   `json:"ranks"`
	Events int64 `json:"events"`
	// Timed is set when the trace's events carry timestamps.
	Timed bool `json:"timed"`
	// EventsByKind counts events by SimGrid action name.
	EventsByKind map[string]int64 `json:"events_by_kind"`
	// P2PMessages and P2PBytes are the point-to-point messages sent (send,
	// isend and the send half of sendRecv) and their bytes.
	P2PMessages int64 `json:"p2p_messages"`
	P2PBytes    int64 `json:"p2p_bytes"`
	// Collectives counts collective calls (one per member) but the calls
	// that make communicators, which DUMPI keeps as collectives and OTF2
	// as MPI time (their kinds are under events by kind), so that one
	// run's traces count alike; CollectiveBytes is the bytes their members
	// send (see Collect).
	Collectives     int64   `json:"collectives"`
	CollectiveBytes int64   `json:"collective_bytes"`
	Flops           float64 `json:"flops"`
	// EmptyRanks counts the ranks that have no events and were sent
	// nothing, which PerRank leaves out, and EmptyList names them as
	// ranges ("0-999998"), at most 10 of them: a file that claims a
	// million ranks and holds events for a few costs a few bytes a rank.
	EmptyRanks int    `json:"empty_ranks"`
	EmptyList  string `json:"empty_list,omitempty"`
	// OneSidedOps and OneSidedBytes are the one-sided transfers (put, get,
	// accumulate, atomics) and the bytes they move between ranks (sent
	// and fetched); IOOps, IOBytesRead and IOBytesWritten the MPI-IO
	// reads and writes and their bytes.
	OneSidedOps    int64 `json:"one_sided_ops,omitempty"`
	OneSidedBytes  int64 `json:"one_sided_bytes,omitempty"`
	IOOps          int64 `json:"io_ops,omitempty"`
	IOBytesRead    int64 `json:"io_bytes_read,omitempty"`
	IOBytesWritten int64 `json:"io_bytes_written,omitempty"`
	// RunSeconds is how long a timed trace's run lasted, as a replay
	// simulates it: from the earliest return from MPI_Init to the latest
	// entry into MPI_Finalize (a rank without them: its first event's
	// entry, its last one's exit), start-up and tear-down left out.
	RunSeconds float64 `json:"run_seconds,omitempty"`
	// Notes are how the reader read the trace otherwise than it was
	// recorded (a tracer's buffer flushes, calls on threads not read...),
	// which Collect leaves to its caller: the CLI's notes.
	Notes []string `json:"reader_notes,omitempty"`
	// OneSidedMatrix is the one-sided traffic of every pair, from the
	// rank whose data moves to the one that gets it (origin to target
	// for a put or accumulate, target to origin for a get), by source
	// then destination.
	OneSidedMatrix []Pair `json:"one_sided_matrix,omitempty"`
	// PerRank holds one entry per rank that has events, in rank order.
	PerRank []RankStats `json:"per_rank"`
	// Matrix lists the point-to-point traffic of every (source,
	// destination) pair that exchanged messages, by source then
	// destination.
	Matrix []Pair `json:"matrix"`
	// TopPairs are the pairs that sent the most bytes, heaviest first.
	TopPairs []Pair `json:"top_pairs"`
	// Sizes are the point-to-point messages by size, in powers of two
	// (IPM's and mpiP's buckets, Pipit's message histogram), the smallest
	// first, the empty bins left out: whether the messages are small,
	// bound by latency, or large, by bandwidth.
	Sizes []SizeBin `json:"message_sizes,omitempty"`
	// Profile is the time in MPI calls by kind, most first (empty for an
	// untimed trace).
	Profile []CallTime `json:"profile"`
	// Paths is the time by activity and call path, most first (none for
	// an untimed trace).
	Paths []PathTime `json:"call_paths,omitempty"`
}

// RankStats are the totals of one rank.
type RankStats struct {
	Rank         int   `json:"rank"`
	Events       int64 `json:"events"`
	MessagesSent int64 `json:"messages_sent"`
	BytesSent    int64 `json:"bytes_sent"`
	// MessagesRecvd and BytesRecvd are the messages sent to the rank and
	// their bytes (its column of the matrix), received or not ("msgs in"
	// in the table; check lists those never received).
	MessagesRecvd int64   `json:"messages_received"`
	BytesRecvd    int64   `json:"bytes_received"`
	Collectives   int64   `json:"collectives"`
	CollBytesSent int64   `json:"collective_bytes_sent"`
	Flops         float64 `json:"flops"`
	// OneSidedOps and OneSidedBytes are the rank's one-sided transfers as
	// origin and their bytes; IOBytes the bytes it read and wrote.
	OneSidedOps   int64 `json:"one_sided_ops,omitempty"`
	OneSidedBytes int64 `json:"one_sided_bytes,omitempty"`
	IOBytes       int64 `json:"io_bytes,omitempty"`
	// MPISeconds is the time spent in MPI calls and TotalSeconds the time
	// from the first event's entry to the last one's exit; both are zero
	// for an untimed trace.
	MPISeconds   float64 `json:"mpi_seconds,omitempty"`
	TotalSeconds float64 `json:"total_seconds,omitempty"`
	// TopPartners are the ranks this one exchanged the most bytes with,
	// both directions counted.
	TopPartners []Partner `json:"top_partners"`
}

// Pair is the point-to-point traffic from Src to Dst.
type Pair struct {
	Src      int   `json:"src"`
	Dst      int   `json:"dst"`
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// SizeBin counts the messages of From to To-1 bytes (From 0: empty
// messages, To 1) and their bytes.
type SizeBin struct {
	From     int64 `json:"from"`
	To       int64 `json:"to"`
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// sizeHist counts messages and bytes by size: bin 0 the empty messages,
// bin k those of 2^(k-1) to 2^k - 1 bytes.
type sizeHist [64][2]int64

func (h *sizeHist) add(bytes int64) {
	if bytes <= 0 {
		h[0][0]++
		return
	}
	k := bits.Len64(uint64(bytes))
	h[k][0]++
	h[k][1] += bytes
}

// bins returns h's non-empty bins.
func (h *sizeHist) bins() []SizeBin {
	var out []SizeBin
	for k, c := range h {
		if c[0] == 0 {
			continue
		}
		b := SizeBin{To: 1, Messages: c[0], Bytes: c[1]}
		if k > 0 {
			b.From, b.To = int64(1)<<(k-1), math.MaxInt64
		}
		if k < 63 {
			b.To = int64(1) << k
		}
		out = append(out, b)
	}
	return out
}

// Partner is the traffic between a rank and one partner, both directions.
type Partner struct {
	Rank     int   `json:"rank"`
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
}

// DefaultTop is the number of top partners and pairs kept by default.
const DefaultTop = 5

// Collect computes the statistics of src, keeping the top partners and
// pairs (DefaultTop if top <= 0).
//
// Collective bytes are the send buffer each member passes: SendBytes, the
// sum of SendCounts for v-collectives, SendBytes times the communicator
// size for alltoall (whose count is per peer); for bcast, scatter and
// scatterv only the root's buffer counts, since the others only receive.
// Flops include the reduction flops of reduction collectives.
func Collect(src trace.Source, top int) (*Stats, error) {
	if top <= 0 {
		top = DefaultTop
	}
	n := src.NumRanks()
	s := &Stats{Ranks: n, EventsByKind: map[string]int64{}, PerRank: []RankStats{}, Matrix: []Pair{}}
	var kinds [trace.NumKinds]int64
	calls := map[string]int64{}
	var prof profile
	var paths pathProfile
	var sizes sizeHist
	var run rankRows // its span alone: the earliest start, the latest end
	meta := src.Meta()
	empty, _ := trace.EmptyRanks(src)
	for r := 0; r < n; r++ {
		if empty != nil && empty[r] {
			prof.skip(r)
			paths.ranks++
			continue
		}
		var rt rankTimes
		rs, pairs, err := collectRank(src, meta, r, &kinds, calls, &rt, &sizes, &s.Timed)
		if err != nil {
			return nil, err
		}
		if rs.Events > 0 {
			s.PerRank = append(s.PerRank, rs)
		}
		s.Matrix = append(s.Matrix, pairs.p2p...)
		s.OneSidedMatrix = append(s.OneSidedMatrix, pairs.rma...)
		s.IOBytesRead += pairs.read
		s.IOBytesWritten += pairs.written
		prof.fold(r, &rt)
		paths.fold(r, &rt.paths)
		if pairs.spanned {
			run.add(pairs.start, pairs.end)
		}
	}
	if run.spanned {
		s.RunSeconds = (run.end - run.start).Seconds()
	}
	s.Profile = prof.lines()
	s.Paths = paths.paths(meta)
	s.Sizes = sizes.bins()
	s.IOOps = kinds[trace.FileRead] + kinds[trace.FileWrite]
	for k, c := range kinds {
		if c > 0 {
			s.EventsByKind[trace.Kind(k).String()] = c
		}
	}
	for name, c := range calls {
		s.EventsByKind[name] += c
	}
	s.totals(top)
	return s, nil
}

// rankRows are a rank's rows of the matrices, its I/O volumes and, if
// timed, the span of its run (RunSeconds).
type rankRows struct {
	p2p, rma      []Pair
	read, written int64
	start, end    trace.Time
	spanned       bool
}

// collectRank streams rank r, returning its totals and its rows of the
// matrices, and adding its time by call to rt and its messages' sizes to
// sizes.
func collectRank(src trace.Source, meta *trace.Meta, r int, kinds *[trace.NumKinds]int64, calls map[string]int64, rt *rankTimes, sizes *sizeHist, timed *bool) (RankStats, rankRows, error) {
	rs := RankStats{Rank: r}
	var rows rankRows
	row := map[int32]*Pair{}
	rma := map[[2]int32]*Pair{}
	rd, err := src.OpenRank(r)
	if err != nil {
		return rs, rows, fmt.Errorf("rank %d: %w", r, err)
	}
	defer rd.Close()
	var first, last trace.Time
	seen := false
	// The calls of one name in a row (a polling loop's millions of
	// MPI_Testany) are counted in run, then added to calls at once.
	var run struct {
		name string
		n    int64
	}
	for rd.Next() {
		e := rd.Event()
		rs.Events++
		name := meta.MPIFunction(e)
		if name != "" {
			if name != run.name {
				if run.n > 0 {
					calls[run.name] += run.n
				}
				run.name, run.n = name, 0
			}
			run.n++
		} else if e.Kind < trace.Kind(trace.NumKinds) {
			kinds[e.Kind]++
		}
		if e.HasTime {
			if !seen {
				first, last, seen = e.Enter, e.Exit, true
			}
			*timed = true
			last = max(last, e.Exit)
			if e.Kind.IsMPI() {
				rs.MPISeconds += e.Duration().Seconds()
			}
			rt.add(e, name)
			rt.paths.add(meta, e)
			rs.TotalSeconds = (last - first).Seconds()
			switch {
			case e.Kind == trace.Init: // a replay starts where MPI_Init returns
				rows.start, rows.end = e.Exit, e.Exit
			case e.Kind == trace.Finalize: // and ends where MPI_Finalize is entered
				rows.end = e.Enter
			case !rows.spanned:
				rows.start, rows.end = e.Enter, e.Exit
			default:
				rows.end = max(rows.end, e.Exit)
			}
			rows.spanned = true
		}
		switch {
		case e.Kind == trace.Send || e.Kind == trace.Isend || e.Kind == trace.SendRecv:
			p := row[e.Partner]
			if p == nil {
				p = &Pair{Src: r, Dst: int(e.Partner)}
				row[e.Partner] = p
			}
			p.Messages++
			p.Bytes += e.SendBytes
			rs.MessagesSent++
			rs.BytesSent += e.SendBytes
			sizes.add(e.SendBytes)
		case e.Kind == trace.CommSplit || e.Kind == trace.CommDup || e.Kind == trace.CommCreate:
		case e.Kind.IsCollective():
			rs.Collectives++
			rs.CollBytesSent += collectiveBytes(e, r, meta, src.NumRanks())
		case e.Kind.IsOneSided():
			rs.OneSidedOps++
			for _, t := range oneSidedTraffic(e, int32(r)) {
				p := rma[[2]int32{t.src, t.dst}]
				if p == nil {
					p = &Pair{Src: int(t.src), Dst: int(t.dst)}
					rma[[2]int32{t.src, t.dst}] = p
				}
				p.Messages++
				p.Bytes += t.bytes
				rs.OneSidedBytes += t.bytes
			}
		case e.Kind == trace.FileRead:
			rs.IOBytes += e.RecvBytes
			rows.read += e.RecvBytes
		case e.Kind == trace.FileWrite:
			rs.IOBytes += e.SendBytes
			rows.written += e.SendBytes
		}
		if e.Kind == trace.Compute || e.Kind.HasReduction() {
			rs.Flops += e.Compute
		}
	}
	if err := rd.Err(); err != nil {
		return rs, rows, fmt.Errorf("rank %d: %w", r, err)
	}
	if run.n > 0 {
		calls[run.name] += run.n
	}
	rows.p2p = make([]Pair, 0, len(row))
	for _, p := range row {
		rows.p2p = append(rows.p2p, *p)
	}
	sort.Slice(rows.p2p, func(i, j int) bool { return rows.p2p[i].Dst < rows.p2p[j].Dst })
	for _, p := range rma {
		rows.rma = append(rows.rma, *p)
	}
	return rs, rows, nil
}

// add widens the span to hold [start, end].
func (rr *rankRows) add(start, end trace.Time) {
	if !rr.spanned || start < rr.start {
		rr.start = start
	}
	if !rr.spanned || end > rr.end {
		rr.end = end
	}
	rr.spanned = true
}

// traffic is data a one-sided call moves from src to dst.
type traffic struct {
	src, dst int32
	bytes    int64
}

// oneSidedTraffic returns the data one-sided transfer e of origin r moves:
// a put's or accumulate's to the target, a get's from it, both for the
// atomics that fetch and write.
func oneSidedTraffic(e *trace.Event, r int32) []traffic {
	var t []traffic
	if e.SendBytes > 0 && e.Kind != trace.Get {
		t = append(t, traffic{r, e.Partner, e.SendBytes})
	}
	if e.RecvBytes > 0 && e.Kind != trace.Put && e.Kind != trace.Accumulate {
		t = append(t, traffic{e.Partner, r, e.RecvBytes})
	}
	return t
}

// collectiveBytes is the send buffer rank r passes to collective e.
func collectiveBytes(e *trace.Event, r int, meta *trace.Meta, n int) int64 {
	switch e.Kind {
	case trace.Bcast, trace.Scatter, trace.Scatterv:
		if int(e.Partner) != r {
			return 0
		}
	case trace.Alltoall:
		size := n
		if e.Comm != trace.WorldComm {
			size = len(meta.Members(e.Comm, n))
		}
		return e.SendBytes * int64(size)
	}
	if e.SendCounts != nil {
		var sum int64
		for _, c := range e.SendCounts {
			sum += c
		}
		return sum
	}
	return e.SendBytes
}

// totals derives the whole-trace sums, the received volumes, the top
// partners and the top pairs from the per-rank data. A rank with no
// events that was sent messages gets its entry of PerRank here.
func (s *Stats) totals(top int) {
	at := map[int]int{} // rank -> index in PerRank
	for i, rs := range s.PerRank {
		at[rs.Rank] = i
	}
	entry := func(r int) *RankStats {
		i, ok := at[r]
		if !ok {
			i = len(s.PerRank)
			at[r] = i
			s.PerRank = append(s.PerRank, RankStats{Rank: r})
		}
		return &s.PerRank[i]
	}
	partners := map[int]map[int]*Partner{}
	add := func(r, p int, msgs, bytes int64) {
		if r < 0 || r >= s.Ranks {
			return
		}
		if partners[r] == nil {
			partners[r] = map[int]*Partner{}
		}
		q := partners[r][p]
		if q == nil {
			q = &Partner{Rank: p}
			partners[r][p] = q
		}
		q.Messages += msgs
		q.Bytes += bytes
	}
	for _, p := range s.Matrix {
		if p.Dst >= 0 && p.Dst < s.Ranks {
			rs := entry(p.Dst)
			rs.MessagesRecvd += p.Messages
			rs.BytesRecvd += p.Bytes
		}
		add(p.Src, p.Dst, p.Messages, p.Bytes)
		if p.Src != p.Dst {
			add(p.Dst, p.Src, p.Messages, p.Bytes)
		}
	}
	sort.Slice(s.PerRank, func(i, j int) bool { return s.PerRank[i].Rank < s.PerRank[j].Rank })
	for i := range s.PerRank {
		rs := &s.PerRank[i]
		s.Events += rs.Events
		s.P2PMessages += rs.MessagesSent
		s.P2PBytes += rs.BytesSent
		s.Collectives += rs.Collectives
		s.CollectiveBytes += rs.CollBytesSent
		s.Flops += rs.Flops
		s.OneSidedOps += rs.OneSidedOps
		s.OneSidedBytes += rs.OneSidedBytes
		rs.TopPartners = []Partner{}
		for _, p := range partners[rs.Rank] {
			rs.TopPartners = append(rs.TopPartners, *p)
		}
		rs.TopPartners = topN(rs.TopPartners, top, func(p Partner) (int64, int) { return p.Bytes, p.Rank })
	}
	s.TopPairs = topN(append([]Pair{}, s.Matrix...), top, func(p Pair) (int64, int) { return p.Bytes, p.Src*s.Ranks + p.Dst })
	s.EmptyRanks = s.Ranks - len(s.PerRank)
	if s.EmptyRanks > 0 {
		k := 0 // PerRank's next entry, the ranks in order
		s.EmptyList = trace.RankRanges(s.Ranks, 10, func(r int) bool {
			for k < len(s.PerRank) && s.PerRank[k].Rank < r {
				k++
			}
			return k == len(s.PerRank) || s.PerRank[k].Rank != r
		})
	}
	s.OneSidedMatrix = mergePairs(s.OneSidedMatrix)
}

// mergePairs sorts pairs by source then destination and adds up those of
// one pair (each rank counts the one-sided traffic it originates, in
// both directions).
func mergePairs(ps []Pair) []Pair {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Src < ps[j].Src || ps[i].Src == ps[j].Src && ps[i].Dst < ps[j].Dst })
	out := ps[:0]
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].Src == p.Src && out[n-1].Dst == p.Dst {
			out[n-1].Messages += p.Messages
			out[n-1].Bytes += p.Bytes
			continue
		}
		out = append(out, p)
	}
	return out
}

// topN sorts xs by decreasing weight, ties by increasing key, and keeps
// the first n.
func topN[T any](xs []T, n int, by func(T) (weight int64, key int)) []T {
	sort.Slice(xs, func(i, j int) bool {
		wi, ki := by(xs[i])
		wj, kj := by(xs[j])
		if wi != wj {
			return wi > wj
		}
		return ki < kj
	})
	if len(xs) > n {
		xs = xs[:n]
	}
	return xs
}
