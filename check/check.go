// Package check validates MPI traces: that every point-to-point message is
// matched, every request completed exactly once, every collective entered
// by all members of its communicator in the same order, that volumes are
// sane, and, optionally, that the trace replays without deadlock under a
// given send protocol.
//
// Check streams the trace: it opens every rank's reader at once and
// advances the ranks as state machines of a dependency-driven replay (no
// timing), so that memory grows with the messages and collectives in
// flight, not with the trace.
//
// # Rules
//
// Point-to-point messages match per (communicator, source, destination,
// tag) in the order they are posted, as MPI's non-overtaking rule says. A
// receive from AnySource or with AnyTag matches the earliest-posted eligible
// message, and a message matches the earliest-posted eligible receive, in
// Kairos' replay order: ranks take turns in rank order, each running until
// it blocks (or for 4096 events), and a send never blocks in the static
// pass (eager semantics; where every rank is blocked, the static pass lets
// the earliest-blocked one go on, so that a stuck trace is still checked to
// its end). MPI leaves the choice among wildcard matches to timing; a
// trace whose validity depends on it is judged in that order. A receive of fewer bytes than the
// message it matches is a truncation error; a Recv or Irecv with
// RecvBytes < 0 (SimGrid's probe-first form) accepts any size.
//
// Requests: an Isend or Irecv starts a request that exactly one Wait or
// Waitall completes (a Waitall with Requests == nil completes all the
// rank's outstanding requests). A Test may complete it: a request tested
// and never waited for is taken as completed by the test, and a Wait after
// a Test is accepted (SimGrid's rule). Waits and tests that name their
// request by key (TI) find it in SimGrid's request storage (keyed.go). Waiting on or testing a request that
// is not outstanding, and starting a request whose id is still
// outstanding, are errors. Requests still outstanding when a rank's trace
// ends are Warnings: MPI calls it a leak, and SimGrid silently waits for
// them at the end, so the replay is well defined.
//
// Collectives: each member of the communicator (trace.Meta.Members) enters
// the same sequence of collective kinds, with the same root, and the same
// byte counts where MPI requires every member to give the same and they are
// significant on every member: send and receive sizes of bcast, reduce,
// allreduce, scan, exscan, alltoall and allgather, the send size of a
// gather, the receive size of a scatter, the receive counts of
// reduce_scatter and allgatherv. Count vectors have one count per member,
// and the v-collectives agree pairwise: each member's gatherv send is the
// root's receive count for it, and the same for scatterv, allgatherv, and
// alltoallv (member i's send count for j is j's receive count for i; on
// communicators of up to 1,024 members, whose counts are kept until every
// member has entered).
//
// One-sided communication and MPI-IO: window creation, release and
// fences, and file open and close, are collectives of their communicator;
// each rank's epochs on each window are followed, so that every transfer
// is in an access epoch covering its target and is completed by the
// synchronisation that closes it, locks are taken and released in pairs,
// and starts pair with posts (onesided.go has the rules). I/O calls name
// an open file; non-blocking ones start requests that a file_wait
// completes.
//
// Volumes: negative, NaN or infinite byte counts, count vectors, flops and
// sleep times are errors.
//
// Deadlock (Options.Protocol != None): a second replay in which sends block
// as the protocol says, receives, probes and waits block until matched, a
// collective completes once all members have entered it (but a
// broadcast's root leaves at once where its message goes eagerly, as in
// SMPI's binomial tree), and under SimGrid
// a rank's end waits for its leftover requests (all of them, where SimGrid
// 3.32 waits only the last of each key: Kairos is the stricter). When no rank
// can progress, every blocked rank is reported, as an Error, with the event
// it waits in and what it waits for. The replay is skipped when the static
// pass proves it would end (see needsReplay).
package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"kairos/trace"
)

// Protocol is the send semantics of the deadlock replay.
type Protocol int

// Protocols.
const (
	// None runs the static checks only.
	None Protocol = iota
	// Eager buffers every send: a send completes at once.
	Eager
	// Rendezvous makes every blocking send wait until its receive is
	// posted; an Isend's request completes when it is matched.
	Rendezvous
	// SimGrid detaches sends of fewer than Options.EagerLimit bytes and
	// makes larger ones rendezvous, as SimGrid 3.32's
	// smpi/send-is-detached-thresh does.
	SimGrid
)

var protocolNames = []string{"none", "eager", "rendezvous", "simgrid"}

// String returns the protocol's name as the CLI spells it.
func (p Protocol) String() string {
	if p >= 0 && int(p) < len(protocolNames) {
		return protocolNames[p]
	}
	return fmt.Sprintf("protocol(%d)", int(p))
}

// ParseProtocol returns the protocol called name (none, eager, rendezvous,
// simgrid).
func ParseProtocol(name string) (Protocol, error) {
	for i, n := range protocolNames {
		if strings.EqualFold(n, name) {
			return Protocol(i), nil
		}
	}
	return None, fmt.Errorf("unknown protocol %q (want %s)", name, strings.Join(protocolNames, ", "))
}

// DefaultEagerLimit is SimGrid 3.32's smpi/send-is-detached-thresh, in
// bytes.
const DefaultEagerLimit = 65536

// DefaultMaxProblems is the number of problems recorded when
// Options.MaxProblems is 0.
const DefaultMaxProblems = 1000

// Options says what Check checks.
type Options struct {
	// Protocol selects the deadlock replay; None skips it.
	Protocol Protocol
	// EagerLimit is the size in bytes from which a SimGrid send is
	// rendezvous; 0 means DefaultEagerLimit.
	EagerLimit int64
	// MaxProblems bounds the problems recorded (the others are only
	// counted in Report.Omitted); 0 means DefaultMaxProblems, < 0 no
	// bound.
	MaxProblems int
	// ErrorsOnly records errors alone: warnings are only counted.
	ErrorsOnly bool
}

// Severity says whether a problem makes a trace invalid.
type Severity int

// Severities.
const (
	// Error makes the trace invalid.
	Error Severity = iota
	// Warning is worth knowing but leaves the trace valid (requests left
	// outstanding at the end).
	Warning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// MarshalText makes a Severity a JSON string.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses "error" or "warning".
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "error":
		*s = Error
	case "warning":
		*s = Warning
	default:
		return fmt.Errorf("unknown severity %q", b)
	}
	return nil
}

// Problem is one thing wrong with a trace, at one event.
type Problem struct {
	// Rank and Index locate the event (Index counts from 0 in the rank's
	// stream).
	Rank  int `json:"rank"`
	Index int `json:"index"`
	// Pos is "file:line" when the trace's reader knows it.
	Pos      string   `json:"pos,omitempty"`
	Severity Severity `json:"severity"`
	Msg      string   `json:"msg"`
}

// String formats p as "FILE:LINE: rank R event I: MSG", without the
// position when it is unknown, with "warning: " before MSG for warnings.
func (p Problem) String() string {
	var b strings.Builder
	if p.Pos != "" {
		b.WriteString(p.Pos)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "rank %d event %d: ", p.Rank, p.Index)
	if p.Severity == Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Report is what Check found.
type Report struct {
	Protocol string `json:"protocol"`
	Ranks    int    `json:"ranks"`
	// Events, Messages (matched point-to-point messages), Collectives
	// (completed collective operations) and Requests (started) count what
	// the static pass saw.
	Events      int64 `json:"events"`
	Messages    int64 `json:"messages"`
	Collectives int64 `json:"collectives"`
	Requests    int64 `json:"requests"`
	Errors      int   `json:"errors"`
	Warnings    int   `json:"warnings"`
	// Omitted counts problems found beyond Options.MaxProblems.
	Omitted int `json:"omitted"`
	// Unreceived counts the sends no receive matched.
	Unreceived int `json:"unreceived"`
	// Deadlock is set when the replay under Protocol got stuck.
	Deadlock bool      `json:"deadlock"`
	Problems []Problem `json:"problems"`
	// EmptyRanks counts the ranks that have no events, and EmptyList
	// names them as ranges ("0-999998"), at most 10 of them. A rank of a
	// real run has at least its init: a trace that claims ranks it has no
	// events for (a shared TI file whose one line names rank 999999, a
	// file cut short) is valid, but the CLI says so.
	EmptyRanks int    `json:"empty_ranks"`
	EmptyList  string `json:"empty_list,omitempty"`
	// Unfinalized counts the ranks whose trace ends without MPI_Finalize
	// though it has its MPI_Init or another rank its MPI_Finalize, and
	// UnfinalizedList names them as ranges, at most 10: a run cut short
	// (MPI_Abort, a crash, a job killed), or a trace that lost its end.
	// The trace is valid to its end; the CLI says so, after the problems
	// the cut may explain.
	Unfinalized     int    `json:"unfinalized"`
	UnfinalizedList string `json:"unfinalized_list,omitempty"`

	max        int
	errorsOnly bool
	listedWarn int // warnings in Problems, which an error past max may replace
}

// countEmpty counts the ranks of the static pass that had no event.
func (r *Report) countEmpty(ranks []rankState) {
	isEmpty := func(i int) bool { return ranks[i].index < 0 }
	for i := range ranks {
		if isEmpty(i) {
			r.EmptyRanks++
		}
	}
	if r.EmptyRanks > 0 {
		r.EmptyList = trace.RankRanges(len(ranks), 10, isEmpty)
	}
}

// OK reports whether the trace has no errors (warnings allowed).
func (r *Report) OK() bool { return r.Errors == 0 }

func (r *Report) add(sev Severity, rank, index int, format string, a ...any) {
	if sev == Warning {
		r.Warnings++
		if r.errorsOnly {
			return
		}
	} else {
		r.Errors++
	}
	if r.max >= 0 && len(r.Problems) >= r.max {
		r.Omitted++
		// An error takes the place of a warning listed: the errors are
		// what makes a trace invalid, and a list full of warnings hid them.
		if sev == Warning || r.listedWarn == 0 {
			return
		}
		i := slices.IndexFunc(r.Problems, func(p Problem) bool { return p.Severity == Warning })
		r.Problems = slices.Delete(r.Problems, i, i+1)
		r.listedWarn--
	}
	if sev == Warning {
		r.listedWarn++
	}
	r.Problems = append(r.Problems, Problem{Rank: rank, Index: index, Severity: sev, Msg: fmt.Sprintf(format, a...)})
}

// Check validates src. It returns an error only when the trace cannot be
// read; problems with its content are in the Report.
func Check(src trace.Source, opt Options) (*Report, error) {
	if opt.Protocol < None || opt.Protocol > SimGrid {
		return nil, fmt.Errorf("check: unknown protocol %d", int(opt.Protocol))
	}
	if opt.EagerLimit == 0 {
		opt.EagerLimit = DefaultEagerLimit
	}
	rep := &Report{Protocol: opt.Protocol.String(), Ranks: src.NumRanks(), max: opt.MaxProblems, errorsOnly: opt.ErrorsOnly, Problems: []Problem{}}
	if rep.max == 0 {
		rep.max = DefaultMaxProblems
	}
	static := newEngine(src, rep, Eager, opt.EagerLimit, true)
	static.target = opt.Protocol
	if err := static.run(); err != nil {
		return nil, err
	}
	if static.needsReplay(opt.Protocol) {
		if err := newEngine(src, rep, opt.Protocol, opt.EagerLimit, false).run(); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { // errors first, then by place
		a, b := &rep.Problems[i], &rep.Problems[j]
		if a.Severity != b.Severity {
			return a.Severity == Error
		}
		if a.Rank != b.Rank {
			return a.Rank < b.Rank
		}
		return a.Index < b.Index
	})
	if err := locate(src, rep.Problems); err != nil {
		return nil, err
	}
	return rep, nil
}

// locate fills the Pos of problems from readers that implement
// trace.Positioner, reading each rank with problems again up to its last
// problem. problems must be sorted by rank and index.
func locate(src trace.Source, problems []Problem) error {
	for i := 0; i < len(problems); {
		j := i
		for j < len(problems) && problems[j].Rank == problems[i].Rank {
			j++
		}
		if err := locateRank(src, problems[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func locateRank(src trace.Source, problems []Problem) error {
	rank := problems[0].Rank
	if rank < 0 || rank >= src.NumRanks() {
		return nil
	}
	rd, err := src.OpenRank(rank)
	if err != nil {
		return fmt.Errorf("rank %d: %w", rank, err)
	}
	defer rd.Close()
	pos, ok := rd.(trace.Positioner)
	if !ok {
		return nil
	}
	k := 0
	for idx := 0; k < len(problems) && rd.Next(); idx++ {
		for ; k < len(problems) && problems[k].Index <= idx; k++ {
			if problems[k].Index == idx {
				problems[k].Pos = pos.Position()
			}
		}
	}
	return nil
}
