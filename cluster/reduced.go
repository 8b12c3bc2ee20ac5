package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"kairos/prsd"
	"kairos/trace"
)

// Attributes of a reduced trace's metadata: the number of ranks it stands
// for, the method, and for each of its ranks (a representative) the
// representative's rank and the group's ranklist.
const (
	attrRanks  = "reduced.ranks"
	attrMethod = "reduced.method"
	attrGroup  = "reduced.group." // + index of the representative in the reduced trace
)

// Representatives returns src restricted to the groups' representatives:
// its rank i is groups[i]'s representative, and its metadata says which
// ranks each stands for, so that Expand (or FromReduced after writing it)
// gives back a trace of every rank.
func Representatives(src trace.Source, res *Result) trace.Source {
	m := src.Meta().Clone()
	m.Attrs[attrRanks] = strconv.Itoa(res.Ranks)
	m.Attrs[attrMethod] = string(res.Method)
	reps := make([]int, len(res.Groups))
	for i, g := range res.Groups {
		reps[i] = int(g.Rep)
		m.Attrs[attrGroup+strconv.Itoa(i)] = strconv.Itoa(int(g.Rep)) + " " + prsd.NewRanklist(g.Members).String()
	}
	return &selection{src: src, ranks: reps, meta: m}
}

// IsReduced reports whether src's metadata describes a reduced trace.
func IsReduced(src trace.Source) bool { return src.Meta().Attrs[attrRanks] != "" }

// FromReduced reads the groups a reduced trace's metadata describes and
// returns the trace of every rank it stands for (see Expand).
func FromReduced(src trace.Source) (trace.Source, error) {
	attrs := src.Meta().Attrs
	n, err := strconv.Atoi(attrs[attrRanks])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("reduced trace: %s %q is not a number of ranks", attrRanks, attrs[attrRanks])
	}
	groups := make([]Group, src.NumRanks())
	for i := range groups {
		key := attrGroup + strconv.Itoa(i)
		rep, list, ok := strings.Cut(attrs[key], " ")
		r, err := strconv.Atoi(rep)
		if !ok || err != nil {
			return nil, fmt.Errorf("reduced trace: %s %q: want a representative rank and its ranklist", key, attrs[key])
		}
		rl, err := prsd.ParseRanklist(list)
		if err != nil {
			return nil, fmt.Errorf("reduced trace: %s: %w", key, err)
		}
		groups[i] = Group{Rep: int32(r), Members: rl.Ranks()}
	}
	return Expand(src, n, groups)
}

// Expand returns the trace of n ranks that reps stands for: reps' rank i
// is groups[i]'s representative, and every member of the group replays it
// as ScalaReplay does, its point-to-point end-points moved by its offset
// from the representative (modulo n) and every other parameter verbatim.
// Every rank below n must be in exactly one group.
func Expand(reps trace.Source, n int, groups []Group) (trace.Source, error) {
	if reps.NumRanks() != len(groups) {
		return nil, fmt.Errorf("cluster: %d groups for %d representatives", len(groups), reps.NumRanks())
	}
	total := 0
	for _, g := range groups {
		total += len(g.Members)
	}
	if total != n {
		return nil, fmt.Errorf("cluster: the groups hold %d ranks, not %d", total, n)
	}
	of := make([]int, n)
	for i := range of {
		of[i] = -1
	}
	for i, g := range groups {
		if !slices.Contains(g.Members, g.Rep) {
			return nil, fmt.Errorf("cluster: representative %d is not in its group %v", g.Rep, prsd.NewRanklist(g.Members))
		}
		for _, r := range g.Members {
			if r < 0 || int(r) >= n {
				return nil, fmt.Errorf("cluster: group of %d has rank %d, outside 0-%d", g.Rep, r, n-1)
			}
			if of[r] >= 0 {
				return nil, fmt.Errorf("cluster: rank %d is in the groups of %d and %d", r, groups[of[r]].Rep, g.Rep)
			}
			of[r] = i
		}
	}
	for r, g := range of {
		if g < 0 {
			return nil, fmt.Errorf("cluster: rank %d is in no group", r)
		}
	}
	m := reps.Meta().Clone()
	for k := range m.Attrs {
		if strings.HasPrefix(k, "reduced.") {
			delete(m.Attrs, k)
		}
	}
	m.Attrs["expanded-from"] = strconv.Itoa(len(groups)) + " representatives"
	x := &expanded{reps: reps, n: n, groups: groups, of: of, meta: m}
	x.comms = sync.OnceValue(func() map[string]uint32 {
		byMembers := make(map[string]uint32, len(x.meta.Comms))
		for _, c := range x.meta.Comms {
			byMembers[membersKey(c.Members, 0, int32(x.n))] = c.ID
		}
		return byMembers
	})
	return x, nil
}

// selection is some ranks of a source.
type selection struct {
	src   trace.Source
	ranks []int
	meta  trace.Meta
}

func (s *selection) Meta() *trace.Meta { return &s.meta }
func (s *selection) NumRanks() int     { return len(s.ranks) }
func (s *selection) OpenRank(i int) (trace.Reader, error) {
	if i < 0 || i >= len(s.ranks) {
		return nil, fmt.Errorf("cluster: no representative %d", i)
	}
	return s.src.OpenRank(s.ranks[i])
}

// expanded is the trace of every rank a set of representatives stands for.
type expanded struct {
	reps   trace.Source
	n      int
	groups []Group
	of     []int // group of each rank
	meta   trace.Meta
	// comms finds a communicator by its members (see memberReader.comm),
	// built once, on first use, whichever goroutine opens a rank first.
	comms func() map[string]uint32
}

func (x *expanded) Meta() *trace.Meta { return &x.meta }
func (x *expanded) NumRanks() int     { return x.n }

func (x *expanded) OpenRank(r int) (trace.Reader, error) {
	if r < 0 || r >= x.n {
		return nil, fmt.Errorf("cluster: no rank %d", r)
	}
	g := x.of[r]
	rd, err := x.reps.OpenRank(g)
	if err != nil {
		return nil, err
	}
	rep := x.groups[g].Rep
	return &memberReader{in: rd, rank: int32(r), rep: rep, shift: int32(r) - rep, n: int32(x.n), meta: &x.meta, comms: x.comms}, nil
}

// membersKey is the key of a communicator's members, each moved by shift
// modulo n.
func membersKey(members []int32, shift, n int32) string {
	b := make([]byte, 0, 4*len(members))
	for _, p := range members {
		b = binary.LittleEndian.AppendUint32(b, uint32(((p+shift)%n+n)%n))
	}
	return string(b)
}

// memberReader replays a representative's events for another member.
type memberReader struct {
	in        trace.Reader
	rank, rep int32
	shift, n  int32
	meta      *trace.Meta
	comms     func() map[string]uint32
	ev        trace.Event
	err       error
	// The last communicator looked up, and the member's (most calls are
	// on the communicator of the call before).
	from, to uint32
	known    bool
}

func (m *memberReader) Next() bool {
	if m.err != nil || !m.in.Next() {
		return false
	}
	m.ev = *m.in.Event()
	if m.shift == 0 {
		return true
	}
	if !m.ev.Kind.IsRooted() {
		m.ev.Partner = m.move(m.ev.Partner)
	}
	m.ev.Source = m.move(m.ev.Source)
	c, ok := m.comm(m.ev.Comm)
	if !ok {
		m.err = fmt.Errorf("rank %d replays rank %d's %s on communicator %d, which it is not in: the clustering merged ranks on different communicators", m.rank, m.rep, m.ev.Kind, m.ev.Comm)
		return false
	}
	m.ev.Comm = c
	if m.ev.NewComm != 0 {
		if c, ok := m.comm(m.ev.NewComm); ok {
			m.ev.NewComm = c
		}
	}
	return true
}

// comm returns the communicator the member makes the representative's
// call on: c if the member is in it, else the one whose members are c's
// moved by the member's offset (each rank's own duplicate of
// MPI_COMM_SELF, PETSc's and SLEPc's); false if the trace has none.
func (m *memberReader) comm(c uint32) (uint32, bool) {
	if c == trace.WorldComm {
		return c, true
	}
	if m.known && m.from == c {
		return m.to, true
	}
	members := m.meta.Members(c, int(m.n))
	if members == nil {
		return 0, false
	}
	id, ok := c, true
	if indexOf(members, m.rank) < 0 {
		id, ok = m.comms()[membersKey(members, m.shift, m.n)]
	}
	if ok {
		m.from, m.to, m.known = c, id, true
	}
	return id, ok
}

// move shifts a world rank by the member's offset, modulo the ranks.
func (m *memberReader) move(p int32) int32 {
	if p < 0 {
		return p // no partner, ANY_SOURCE
	}
	return ((p+m.shift)%m.n + m.n) % m.n
}

func (m *memberReader) Event() *trace.Event { return &m.ev }
func (m *memberReader) Err() error          { return errors.Join(m.err, m.in.Err()) }
func (m *memberReader) Close() error        { return m.in.Close() }
