package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// clusterArgs are the attributes of a <cluster> (or of the one-line form),
// already converted to SI units.
type clusterArgs struct {
	id, prefix, suffix string
	radicals           []int
	speed              float64
	pstates            int // speeds given (the hosts start in pstate 0)
	cores              int
	bw, lat            float64
	sharing            string // SPLITDUPLEX, SHARED or FATPIPE
	bbBW, bbLat        float64
	bbSharing          Sharing
	limiter            float64
	loopbackBW         float64
	loopbackLat        float64
	topology           string // FLAT, TORUS, FAT_TREE, DRAGONFLY
	topoParams         string
	routerID           string
	props              props
}

// parseRadical expands "0-3,7,9-10" into {0,1,2,3,7,9,10}.
func parseRadical(s string) ([]int, error) {
	var out []int
	for _, group := range strings.Split(s, ",") {
		ends := strings.Split(group, "-")
		if len(ends) > 2 {
			return nil, fmt.Errorf("malformed radical %q", group)
		}
		start, err := cInt(ends[0])
		if err != nil {
			return nil, fmt.Errorf("radical %q: %v", group, err)
		}
		end := start
		if len(ends) == 2 {
			if end, err = cInt(ends[1]); err != nil {
				return nil, fmt.Errorf("radical %q: %v", group, err)
			}
		}
		if end-start > 1<<22 || len(out)+end-start > 1<<22 {
			return nil, fmt.Errorf("radical %q: too many hosts", group)
		}
		for i := start; i <= end; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

func (a *clusterArgs) hostName(radical int) string {
	return a.prefix + strconv.Itoa(radical) + a.suffix
}

// addCluster creates the cluster's zone inside the current zone.
func (b *builder) addCluster(a *clusterArgs) error {
	switch a.topology {
	case "FLAT":
		return b.flatCluster(a)
	case "TORUS":
		return b.torusCluster(a)
	case "FAT_TREE":
		return b.fatTreeCluster(a)
	case "DRAGONFLY":
		return b.dragonflyCluster(a)
	}
	return fmt.Errorf("unknown topology %q (expected FLAT, TORUS, FAT_TREE or DRAGONFLY)", a.topology)
}

// starZone is SimGrid's StarZone, which flat clusters use: every vertex has
// a list of links going up to the center and one coming down from it.
type starZone struct {
	z     *zone
	nodes []starNode // by vertex id
}

type starNode struct {
	up, down    []*Link
	loopback    []*Link
	hasLoopback bool
	// A vertex given only a loopback route has no way up or down (SimGrid
	// sets empty ones only for vertices given no route at all).
	noUp, noDown bool
}

func (s *starZone) node(id int) *starNode {
	for len(s.nodes) <= id {
		s.nodes = append(s.nodes, starNode{})
	}
	return &s.nodes[id]
}

// addUnique appends the links not already added by this local route, as
// StarZone does.
func addUnique(links []*Link, start int, lat *latency, add []*Link) []*Link {
next:
	for _, l := range add {
		for _, old := range links[start:] {
			if old == l {
				continue next
			}
		}
		links = append(links, l)
		lat.addLink(l)
	}
	return links
}

func (s *starZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	start := len(links)
	sn, dn := s.node(src.id), s.node(dst.id)
	if src == dst && sn.hasLoopback {
		return addUnique(links, start, lat, sn.loopback), nil, nil, nil
	}
	if sn.noUp {
		return nil, nil, nil, fmt.Errorf("zone %s: no link up from %s (it has only a loopback route)", s.z.name, src.name)
	}
	if dn.noDown {
		return nil, nil, nil, fmt.Errorf("zone %s: no link down to %s (it has only a loopback route)", s.z.name, dst.name)
	}
	links = addUnique(links, start, lat, sn.up)
	links = addUnique(links, start, lat, dn.down)
	return links, nil, nil, nil
}

// flatCluster mirrors sg_platf_new_cluster_flat: per host a private link
// "<id>_link_<radical>" (split-duplex unless sharing_policy says otherwise),
// an optional limiter and loopback, an optional backbone, and a router.
func (b *builder) flatCluster(a *clusterArgs) error {
	z, err := b.newZone(a.id)
	if err != nil {
		return err
	}
	star := &starZone{z: z, nodes: make([]starNode, 0, len(a.radicals)+1)}
	z.rt = star
	b.reserve(len(a.radicals), 2*len(a.radicals))
	routeBuf := make([]*Link, 0, 6*len(a.radicals)) // every host's up and down lists
	var backbone *Link
	if a.bbBW > 0 || a.bbLat > 0 {
		if backbone, err = b.newLink(a.id+"_backbone", a.bbBW, a.bbLat, a.bbSharing); err != nil {
			return err
		}
	}
	for _, r := range a.radicals {
		h, err := b.newHost(z, a.hostName(r), a.speed, a.cores, a.props)
		if err != nil {
			return err
		}
		h.PStates = max(a.pstates, 1)
		n := star.node(h.np.id)
		linkID := a.id + "_link_" + strconv.Itoa(r)
		if a.loopbackBW > 0 || a.loopbackLat > 0 {
			lb, err := b.newLink(linkID+"_loopback", a.loopbackBW, a.loopbackLat, FatPipe)
			if err != nil {
				return err
			}
			n.loopback, n.hasLoopback = []*Link{lb}, true
		}
		var limiter *Link
		if a.limiter > 0 {
			if limiter, err = b.newLink(linkID+"_limiter", a.limiter, 0, Shared); err != nil {
				return err
			}
		}
		up, down, err := b.privateLink(linkID, a)
		if err != nil {
			return err
		}
		// Route up: limiter, link UP, backbone; down is its reverse.
		start := len(routeBuf)
		for _, l := range []*Link{limiter, up, backbone} {
			if l != nil {
				routeBuf = append(routeBuf, l)
			}
		}
		n.up = routeBuf[start:len(routeBuf):len(routeBuf)]
		start = len(routeBuf)
		for _, l := range []*Link{backbone, down, limiter} {
			if l != nil {
				routeBuf = append(routeBuf, l)
			}
		}
		n.down = routeBuf[start:len(routeBuf):len(routeBuf)]
	}
	router := a.routerID
	if router == "" {
		router = a.prefix + a.id + "_router" + a.suffix
	}
	np, err := b.newNetpoint(z, router, npRouter)
	if err != nil {
		return err
	}
	star.node(np.id) // empty up and down lists
	return nil
}

// privateLink creates a cluster's host link: split-duplex, or else one
// Shared link. SimGrid 3.32 ignores FATPIPE here (the link is created with
// the default SHARED policy); so do we.
func (b *builder) privateLink(name string, a *clusterArgs) (up, down *Link, err error) {
	if a.sharing == "SPLITDUPLEX" {
		return b.newDuplex(name, a.bw, a.lat)
	}
	l, err := b.newLink(name, a.bw, a.lat, Shared)
	return l, l, err
}

// leafLinks are the loopback and limiter of one leaf of a torus, fat tree
// or dragonfly (fill_leaf_from_cb).
type leafLinks struct {
	loopback, limiter *Link
}

// hierarchicalLeaf creates host number pos of a TORUS, FAT_TREE or
// DRAGONFLY cluster with its loopback and limiter.
func (b *builder) hierarchicalLeaf(z *zone, a *clusterArgs, pos int) (*Host, leafLinks, error) {
	var ll leafLinks
	if pos >= len(a.radicals) {
		return nil, ll, fmt.Errorf("cluster %s: the topology needs more hosts than the radical gives (%d)", a.id, len(a.radicals))
	}
	h, err := b.newHost(z, a.hostName(a.radicals[pos]), a.speed, a.cores, a.props)
	if err != nil {
		return nil, ll, err
	}
	h.PStates = max(a.pstates, 1)
	if a.loopbackBW > 0 || a.loopbackLat > 0 {
		name := a.id + "_link_" + strconv.Itoa(a.radicals[pos]) + "_loopback"
		if ll.loopback, err = b.newLink(name, a.loopbackBW, a.loopbackLat, FatPipe); err != nil {
			return nil, ll, err
		}
	}
	if ll.limiter, err = b.limiter(a, pos); err != nil {
		return nil, ll, err
	}
	return h, ll, nil
}

// limiter creates "<id>_link_<n>_limiter" when the cluster has limiter_link
// (n is a position, not a radical, as in SimGrid).
func (b *builder) limiter(a *clusterArgs, n int) (*Link, error) {
	if a.limiter <= 0 {
		return nil, nil
	}
	return b.newLink(a.id+"_link_"+strconv.Itoa(n)+"_limiter", a.limiter, 0, Shared)
}

// checkHierarchical applies create_*_zone's checks and warns about the
// hosts of the radical the topology leaves out.
func (b *builder) checkHierarchical(a *clusterArgs, kind string, nodes int) error {
	if a.bw <= 0 {
		return fmt.Errorf("%s cluster %s: bandwidth must be positive, got %g", kind, a.id, a.bw)
	}
	if a.lat < 0 {
		return fmt.Errorf("%s cluster %s: latency must not be negative, got %g", kind, a.id, a.lat)
	}
	if nodes > len(a.radicals) {
		return fmt.Errorf("%s cluster %s: topology %q has %d nodes but the radical names only %d hosts", kind, a.id, a.topoParams, nodes, len(a.radicals))
	}
	if nodes < len(a.radicals) {
		b.p.Warnings = append(b.p.Warnings, fmt.Sprintf("%s cluster %s: topology %q has %d nodes; the other %d hosts of the radical are not created (as in SimGrid)", kind, a.id, a.topoParams, nodes, len(a.radicals)-nodes))
	}
	return nil
}
