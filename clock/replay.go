// Package clock predicts how an MPI trace would run on many network
// configurations at once, and classifies the application as computation-,
// load-imbalance-, bandwidth-, latency- or communication-bound, after Tong,
// Pakin, Lang and Yuan, "Fast Classification of MPI Applications using
// Lamport's Logical Clocks" (IPDPS 2016; seed 004).
//
// Replay reads a trace once. For every configuration it keeps, per rank,
// an extended Lamport logical clock and the paper's four counters
// (computation, wait, latency and bandwidth time, counting only what is not
// overlapped with computation, Section III-E). The configurations are a
// vector: every clock and counter is a []float64 indexed by configuration,
// so each message costs one short loop over the configurations, and 256
// configurations cost little more than 16 (the paper's Figure 10).
//
// One-sided transfers are messages waited for where the epoch completes
// them, and so communication; MPI-IO time is counted apart (onesided.go).
//
// Classify builds the 21 configurations of Table III around each
// interconnect of Table I (or any (BW, L) pair), replays them all in the
// same pass and applies rules C1-C5 of Section IV-C.
package clock

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"kairos/trace"
)

// Protocol is the point-to-point protocol of blocking and non-blocking
// sends (Section III-D).
type Protocol uint8

const (
	// Eager: the sender copies the message to a system buffer and goes on;
	// the message leaves after the copy. Dependences go from sender to
	// receiver only. The paper's default.
	Eager Protocol = iota
	// Rendezvous: a message of at least EagerLimit bytes leaves when both
	// the send and the receive are posted, and the send completes when it
	// has arrived. Smaller messages stay eager.
	Rendezvous
)

// String returns "eager" or "rendezvous".
func (p Protocol) String() string {
	if p == Rendezvous {
		return "rendezvous"
	}
	return "eager"
}

// Defaults of Options.
const (
	DefaultMemcpyGBs  = 32    // GB/s, the paper's memory-copy bandwidth (Section IV-C)
	DefaultEagerLimit = 65536 // bytes, rendezvous threshold when Rendezvous is chosen
	DefaultIntraBW    = 256   // Gbit/s (32 GB/s) between ranks of one node
	DefaultIntraLat   = 0.5   // microseconds between ranks of one node
	maxReported       = 8     // blocked ranks or unmatched messages an error lists
)

// Options are the models and inputs of a replay.
type Options struct {
	// Configs are the inter-node network configurations to predict.
	Configs []Config
	// Table, if set, is the inter-node point-to-point model instead of
	// Hockney's: a ping-pong table scaled to each configuration.
	Table *Table
	// Intra is the network between ranks of one node, the same for every
	// configuration; IntraTable replaces Hockney's model there.
	Intra      Config
	IntraTable *Table
	// RanksPerNode places ranks r..r+RanksPerNode-1 on one node; 0 or 1
	// puts every rank on its own node.
	RanksPerNode int
	// MemcpyGBs is the memory-copy bandwidth in GB/s of an eager send's
	// copy to the system buffer; 0 means DefaultMemcpyGBs.
	MemcpyGBs float64
	// Protocol and EagerLimit choose the send protocol.
	Protocol   Protocol
	EagerLimit int64
	// Speed is the flop rate (flops/s) that turns the volumes of a
	// time-independent trace's compute events into time. It may be 0 for
	// a timed trace.
	Speed float64
	// Workers splits the configurations among that many concurrent
	// replays (each reads the trace); 0 or 1 replays once.
	Workers int
	// PerRank keeps every rank's clock and counters in Result.PerRank.
	PerRank bool
}

// DefaultOptions returns options with the paper's defaults and no
// configurations.
func DefaultOptions() Options {
	return Options{
		Intra:      Config{BW: DefaultIntraBW, Lat: DefaultIntraLat},
		MemcpyGBs:  DefaultMemcpyGBs,
		EagerLimit: DefaultEagerLimit,
	}
}

// Result is what a replay predicts for each configuration.
type Result struct {
	Configs []Config
	Ranks   int
	Events  int64 // events replayed (per configuration)
	// Time is the predicted execution time in seconds: the largest final
	// logical clock over the ranks.
	Time []float64
	// Comp, Wait, Lat and BW are the four counters of Section III-A in
	// seconds, summed over ranks. Comp is the same for every
	// configuration. IO is the time in MPI-IO calls (as recorded, the
	// same for every configuration), which is neither computation nor
	// communication. For each rank the counters and IO add up to its
	// final clock, so that their sum over ranks is RankTime.
	Comp, Wait, Lat, BW, IO []float64
	// RankTime is the sum over ranks of the final clocks.
	RankTime []float64
	// PerRank holds each rank's final clock and counters when
	// Options.PerRank is set.
	PerRank []RankResult
	// BytesPerRankConfig is the memory the replay took per rank and
	// configuration: the counters, plus every clock vector, message start
	// vector and collective vector it allocated (pooled vectors are
	// reused, so this is their peak number), divided by ranks x
	// configurations.
	BytesPerRankConfig float64
	// Unmatched lists the messages sent and never received, or
	// received from no send, in a replay that every rank finished (they
	// took no part in it); nil if none.
	Unmatched *UnmatchedError
}

// RankResult is one rank's final logical clock and counters, per
// configuration (Comp is the same for all).
type RankResult struct {
	Comp, IO             float64
	Clock, Wait, Lat, BW []float64
}

// Comm returns the communication time (wait + latency + bandwidth) of
// configuration i, summed over ranks.
func (r *Result) Comm(i int) float64 { return r.Wait[i] + r.Lat[i] + r.BW[i] }

// Replay predicts src under every configuration of opt in one pass.
func Replay(src trace.Source, opt Options) (*Result, error) {
	if len(opt.Configs) == 0 {
		return nil, errors.New("clock: no network configuration to replay")
	}
	for _, c := range append([]Config{opt.Intra}, opt.Configs...) {
		if !c.Valid() {
			return nil, fmt.Errorf("clock: invalid network configuration %v: bandwidth must be positive and latency non-negative", c)
		}
	}
	w := opt.Workers
	if w <= 1 || len(opt.Configs) < 2 {
		return replayOnce(src, opt)
	}
	w = min(w, len(opt.Configs), runtime.GOMAXPROCS(0)*4)
	parts := make([]*Result, w)
	errs := make([]error, w)
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := i*len(opt.Configs)/w, (i+1)*len(opt.Configs)/w
		o := opt
		o.Configs = opt.Configs[lo:hi]
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = replayOnce(src, o)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, errs[firstErr(errs)]
	}
	return merge(parts), nil
}

func firstErr(errs []error) int {
	for i, e := range errs {
		if e != nil {
			return i
		}
	}
	return 0
}

func merge(parts []*Result) *Result {
	r := &Result{Ranks: parts[0].Ranks, Events: parts[0].Events, Unmatched: parts[0].Unmatched}
	for _, p := range parts {
		r.BytesPerRankConfig = max(r.BytesPerRankConfig, p.BytesPerRankConfig)
	}
	for _, p := range parts {
		r.Configs = append(r.Configs, p.Configs...)
		r.Time = append(r.Time, p.Time...)
		r.Comp = append(r.Comp, p.Comp...)
		r.IO = append(r.IO, p.IO...)
		r.Wait = append(r.Wait, p.Wait...)
		r.Lat = append(r.Lat, p.Lat...)
		r.BW = append(r.BW, p.BW...)
		r.RankTime = append(r.RankTime, p.RankTime...)
	}
	if parts[0].PerRank != nil {
		r.PerRank = make([]RankResult, r.Ranks)
		for i := range r.PerRank {
			pr := &r.PerRank[i]
			pr.Comp, pr.IO = parts[0].PerRank[i].Comp, parts[0].PerRank[i].IO
			for _, p := range parts {
				q := &p.PerRank[i]
				pr.Clock = append(pr.Clock, q.Clock...)
				pr.Wait = append(pr.Wait, q.Wait...)
				pr.Lat = append(pr.Lat, q.Lat...)
				pr.BW = append(pr.BW, q.BW...)
			}
		}
	}
	return r
}

func replayOnce(src trace.Source, opt Options) (*Result, error) {
	e, err := newEngine(src, opt)
	if err != nil {
		return nil, err
	}
	defer e.close()
	if err := e.run(); err != nil {
		// Messages never received (a real program's last one, say) are
		// reported with the replay, which every rank finished.
		var u *UnmatchedError
		if !errors.As(err, &u) {
			return nil, err
		}
		r := e.result()
		r.Unmatched = u
		return r, nil
	}
	return e.result(), nil
}

// result sums the ranks' clocks and counters.
func (e *engine) result() *Result {
	nc := e.nc
	r := &Result{
		Configs: append([]Config{}, e.opt.Configs...), Ranks: len(e.ranks), Events: e.events,
		Time: make([]float64, nc), Comp: make([]float64, nc), IO: make([]float64, nc), Wait: make([]float64, nc),
		Lat: make([]float64, nc), BW: make([]float64, nc), RankTime: make([]float64, nc),
		BytesPerRankConfig: float64(8*(3*len(e.ranks)+e.vectors+3)) / float64(len(e.ranks)),
	}
	for i := range e.ranks {
		st := &e.ranks[i]
		for c := 0; c < nc; c++ {
			r.Time[c] = math.Max(r.Time[c], st.clk.v[c])
			r.RankTime[c] += st.clk.v[c]
			r.Comp[c] += st.comp
			r.IO[c] += st.io
			r.Wait[c] += st.wait[c]
			r.Lat[c] += st.lat[c]
			r.BW[c] += st.bw[c]
		}
		if e.opt.PerRank {
			cp := func(v []float64) []float64 { return append([]float64{}, v...) }
			r.PerRank = append(r.PerRank, RankResult{Comp: st.comp, IO: st.io, Clock: cp(st.clk.v), Wait: cp(st.wait), Lat: cp(st.lat), BW: cp(st.bw)})
		}
	}
	return r
}

// MinBytesPerRankConfig is the replay's least memory per rank and
// configuration: the logical clock and the wait, latency and bandwidth
// counters, one float64 each (computation is one scalar per rank, the
// same for every configuration). A clock vector still shared with
// messages in flight, a rendezvous message's start vector and an open
// collective's vector add 8 bytes per configuration each; Result
// reports what a replay took.
const MinBytesPerRankConfig = 4 * 8
