package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The IB network model (--cfg network/model:IB) is SimGrid 3.32's
// NetworkIBModel, after Vienne's contention model for InfiniBand: the SMPI
// model, plus a penalty on the rate bound of every transfer that shares
// its sending or receiving node with others. A node sending n transfers
// divides each one's bound by n x Bs (n x Bs x ys when a receiver has
// more than two incoming), a node receiving from k nodes divides the
// bound of a transfer from a node that sends it m of them by m x Be x k;
// each transfer takes the larger penalty. Penalties are computed again,
// node by node through the transfers, whenever one starts or ends.

// IBFactors are smpi/IB-penalty-factors: Be, Bs and ys.
type IBFactors struct {
	Be, Bs, Ys float64
}

// DefaultIBFactors are SimGrid's defaults ("0.965;0.925;1.35").
var DefaultIBFactors = IBFactors{0.965, 0.925, 1.35}

// ParseIBFactors reads "Be;Bs;ys".
func ParseIBFactors(s string) (IBFactors, error) {
	parts := strings.Split(s, ";")
	if len(parts) != 3 {
		return IBFactors{}, fmt.Errorf("%q: want three numbers Be;Bs;ys, such as 0.965;0.925;1.35", s)
	}
	var v [3]float64
	for i, p := range parts {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return IBFactors{}, fmt.Errorf("%q: %q is not a number", s, p)
		}
		v[i] = x
	}
	return IBFactors{v[0], v[1], v[2]}, nil
}

// ibNode is a host's InfiniBand state: the transfers it sends, in start
// order, and the number it receives from each sender, in host order
// (SimGrid keeps them in a map keyed by node address, and nodes are
// allocated in host order).
type ibNode struct {
	id     int
	up     []*ibComm
	down   []ibSender
	nbDown int
	seen   uint32 // == ibModel.stamp when visited by this update
	stale  bool   // its factors may have changed since last computed
}

type ibSender struct {
	n *ibNode
	k int
}

// ibComm is a transfer in progress and its bound before any penalty.
type ibComm struct {
	a        *action
	dst      *ibNode
	initRate float64
}

// ibModel is the IB model's state for one run.
type ibModel struct {
	f     IBFactors
	nodes []ibNode
	comms map[*action]*ibComm
	stamp uint32
	stale int // stale nodes
	// lastEnd is the date of the last transfer end (ended: there was
	// one): the penalties after two ends at one date depend on their
	// order, which only SimGrid's re-solves keep (see ibEnd).
	lastEnd float64
	ended   bool
}

func newIBModel(f IBFactors, hosts int) *ibModel {
	m := &ibModel{f: f, nodes: make([]ibNode, hosts), comms: map[*action]*ibComm{}}
	for i := range m.nodes {
		m.nodes[i].id = i
	}
	return m
}

// received returns how many transfers n receives from node from.
func (n *ibNode) received(from *ibNode) int {
	for _, s := range n.down {
		if s.n == from {
			return s.k
		}
	}
	return 0
}

// addSender counts one more transfer from node from (d = 1) or one less
// (d = -1).
func (n *ibNode) addSender(from *ibNode, d int) {
	n.nbDown += d
	for i := range n.down {
		if s := &n.down[i]; s.n == from {
			if s.k += d; s.k == 0 {
				n.down = append(n.down[:i], n.down[i+1:]...)
			}
			return
		}
	}
	i := len(n.down)
	for i > 0 && n.down[i-1].n.id > from.id {
		i--
	}
	n.down = append(n.down, ibSender{})
	copy(n.down[i+1:], n.down[i:])
	n.down[i] = ibSender{from, d}
}

// ibStart registers transfer a from host src to host dst and updates the
// penalties (IB_comm_start_callback); a transfer within a host has none.
func (s *simulation) ibStart(a *action, src, dst int) {
	if src == dst {
		return
	}
	m := s.ib
	from, to := &m.nodes[src], &m.nodes[dst]
	c := &ibComm{a: a, dst: to, initRate: -1}
	m.comms[a] = c
	from.up = append(from.up, c)
	to.addSender(from, 1)
	s.ibUpdate(from, to)
}

// ibEnd unregisters a finished transfer and updates the penalties
// (IB_action_state_changed_callback). As in SimGrid, it runs as the
// transfer finishes, among the round's other ends and latency ends, and
// before any ended transfer's variable leaves the max-min system (see
// simulation.advance); finishAction's call is then a no-op.
func (s *simulation) ibEnd(a *action, src int) {
	m := s.ib
	c, ok := m.comms[a]
	if !ok {
		return
	}
	delete(m.comms, a)
	if m.ended && m.lastEnd == s.now && !s.cfg.NetworkFull {
		// Transfers ending together end in the order of their last
		// rescheduling, which SimGrid's re-solves keep and the
		// incremental solver does not (it reschedules only the
		// transfers whose share changed), and the penalties the walk
		// leaves stale depend on that order. The full update (Full)
		// ends them in the order they started, as SimGrid's.
		s.orderMatters()
	}
	m.lastEnd, m.ended = s.now, true
	from, to := &m.nodes[src], c.dst
	to.addSender(from, -1)
	for i, x := range from.up {
		if x == c {
			from.up = append(from.up[:i], from.up[i+1:]...)
			break
		}
	}
	s.ibUpdate(from, to)
}

// ibUpdate computes the penalties again after a transfer from node from
// to node to started or ended. SimGrid computes those of every node it
// reaches from the sender, depth first through the nodes each sends to
// and receives from (update_IB_factors_rec). Only the sender's and those
// of the nodes sending to the receiver can change, and they stay stale
// until a walk reaches them (the receiver's senders are out of the
// sender's reach once it sends nothing more there). Kairos computes the
// stale ones the walk reaches, in SimGrid's order (which decides the order
// in which bounds change, and so the max-min re-solve), and stops the walk
// when none is left.
func (s *simulation) ibUpdate(from, to *ibNode) {
	m := s.ib
	m.stamp++
	m.setStale(from)
	for _, x := range to.down {
		m.setStale(x.n)
	}
	s.ibVisit(from)
}

func (m *ibModel) setStale(n *ibNode) {
	if !n.stale {
		n.stale = true
		m.stale++
	}
}

func (s *simulation) ibVisit(n *ibNode) {
	m := s.ib
	n.seen = m.stamp
	if n.stale {
		s.ibFactors(n)
		n.stale = false
		m.stale--
	}
	for _, c := range n.up {
		if m.stale == 0 {
			return
		}
		if c.dst.seen != m.stamp {
			s.ibVisit(c.dst)
		}
	}
	for _, x := range n.down {
		if m.stale == 0 {
			return
		}
		if x.n.seen != m.stamp {
			s.ibVisit(x.n)
		}
	}
}

// ibFactors sets the bound of each transfer root sends
// (compute_IB_factors).
func (s *simulation) ibFactors(root *ibNode) {
	f := s.ib.f
	n := len(root.up)
	maxOut := 0.0
	for _, c := range root.up {
		p := 1.0
		if n != 1 {
			p = float64(n) * f.Bs
			if c.dst.nbDown > 2 {
				p *= f.Ys
			}
		}
		maxOut = math.Max(maxOut, p)
	}
	for _, c := range root.up {
		in := 1.0
		if c.dst.nbDown != 1 {
			in = float64(c.dst.received(root)) * f.Be * float64(len(c.dst.down))
		}
		penalty := math.Max(in, maxOut)
		before := c.a.v.Bound()
		if c.initRate == -1 {
			c.initRate = before
		}
		bw := c.initRate / penalty
		if math.Abs(bw-before) >= s.cfg.SurfPrecision {
			s.netSys.SetBound(c.a.v, bw)
		}
	}
}
