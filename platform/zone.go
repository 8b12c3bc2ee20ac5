package platform

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

type npKind uint8

const (
	npHost npKind = iota
	npRouter
	npZone
)

// netpoint is a vertex of a zone's routing: a host, a router or a child
// zone (SimGrid's NetPoint). id is its index in the englobing zone.
type netpoint struct {
	name string
	kind npKind
	id   int
	zone *zone // englobing zone (nil for the root zone's own netpoint)
	sub  *zone // the zone itself when kind == npZone
	// coords are a host's or router's Vivaldi coordinates (x, y, height
	// in milliseconds), nil if not given.
	coords []float64
}

// zone is a SimGrid NetZone: a routing domain.
type zone struct {
	name     string
	parent   *zone
	self     *netpoint
	vertices []*netpoint
	children []*zone
	rt       router
	// bypass holds the zone's <bypassRoute>s and <bypassZoneRoute>s by
	// their ends.
	bypass map[[2]*netpoint]*zroute
}

// recursive reports SimGrid's RoutingMode::recursive: the zone has child
// zones, so its routes carry gateways and it gets no implicit loopback.
func (z *zone) recursive() bool { return len(z.children) > 0 }

func (z *zone) add(np *netpoint) {
	np.zone = z
	np.id = len(z.vertices)
	z.vertices = append(z.vertices, np)
}

// router computes the routes inside one zone (get_local_route): it appends
// the links from src to dst (both vertices of the zone) to links, adds their
// latencies to *lat in SimGrid's order, and returns the gateways of a route
// between child zones.
type router interface {
	local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error)
}

// sealer is implemented by routers that finish their tables once the whole
// zone is known (implicit loopback, Floyd's closure).
type sealer interface {
	seal(z *zone, b *builder) error
}

// LatencyTerm is an addend of a route's latency: a link's latency, or,
// with Link nil, a fixed one (a Vivaldi zone's distance).
type LatencyTerm struct {
	Link  *Link
	Fixed float64
}

// latency accumulates a route's latency as SimGrid sums it, keeping the
// addends in order: SimGrid computes a route per transfer, so that under
// link latency profiles a replay sums the links' current latencies again,
// in the same order (the rounding depends on it).
type latency struct {
	sum   float64
	keep  bool // the addends are kept in terms
	terms []LatencyTerm
}

func (t *latency) addLink(l *Link) {
	t.sum += l.Latency
	if t.keep {
		t.terms = append(t.terms, LatencyTerm{Link: l})
	}
}

func (t *latency) addFixed(d float64) {
	t.sum += d
	if t.keep {
		t.terms = append(t.terms, LatencyTerm{Fixed: d})
	}
}

func addLinks(dst []*Link, lat *latency, links ...*Link) []*Link {
	for _, l := range links {
		lat.addLink(l)
	}
	return append(dst, links...)
}

// ancestors returns the zones from np's zone up to the root.
func ancestors(np *netpoint) []*zone {
	var path []*zone
	for z := np.zone; z != nil; z = z.parent {
		path = append(path, z)
	}
	return path
}

// commonAncestors mirrors SimGrid's find_common_ancestors.
func commonAncestors(src, dst *netpoint) (common, srcAnc, dstAnc *zone) {
	if src.zone == dst.zone {
		return src.zone, src.zone, src.zone
	}
	ps, pd := ancestors(src), ancestors(dst)
	var parent *zone
	for len(ps) > 1 && len(pd) > 1 && ps[len(ps)-1] == pd[len(pd)-1] {
		parent = ps[len(ps)-1]
		ps, pd = ps[:len(ps)-1], pd[:len(pd)-1]
	}
	srcAnc, dstAnc = ps[len(ps)-1], pd[len(pd)-1]
	if srcAnc == dstAnc {
		return srcAnc, srcAnc, dstAnc
	}
	return parent, srcAnc, dstAnc
}

var errNoGateway = errors.New("no route between the zones (missing zoneRoute)")

// maxRouteDepth bounds the recursion of a route through zones and bypass
// routes, far above any real nesting.
const maxRouteDepth = 256

// globalRoute mirrors NetZoneImpl::get_global_route: the route inside the
// common ancestor, completed recursively from src to the source gateway and
// from the destination gateway to dst. Latency is accumulated in the same
// order as SimGrid (the inter-zone links first).
func (p *Platform) globalRoute(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, error) {
	if p.depth++; p.depth > maxRouteDepth {
		p.depth--
		return nil, fmt.Errorf("%s -> %s: the route does not end (gateways of bypass routes lead back to them; SimGrid 3.32 overflows its stack)", src.name, dst.name)
	}
	defer func() { p.depth-- }()
	common, srcAnc, dstAnc := commonAncestors(src, dst)
	if common == nil {
		return nil, fmt.Errorf("%s and %s have no common zone", src.name, dst.name)
	}
	if bp, key := common.findBypass(src, dst); bp != nil {
		return p.bypassRoute(bp, key, src, dst, links, lat)
	}
	if srcAnc == dstAnc {
		out, _, _, err := common.rt.local(src, dst, links, lat)
		return out, err
	}
	mid, gwSrc, gwDst, err := common.rt.local(srcAnc.self, dstAnc.self, nil, lat)
	if err != nil {
		return nil, err
	}
	if gwSrc == nil || gwDst == nil {
		return nil, fmt.Errorf("from zone %s to zone %s: %w", srcAnc.name, dstAnc.name, errNoGateway)
	}
	if src != gwSrc {
		if links, err = p.globalRoute(src, gwSrc, links, lat); err != nil {
			return nil, err
		}
	}
	links = append(links, mid...)
	if gwDst != dst {
		if links, err = p.globalRoute(gwDst, dst, links, lat); err != nil {
			return nil, err
		}
	}
	return links, nil
}

// zroute is a declared route of a Full, Floyd or Dijkstra zone.
type zroute struct {
	links        []*Link
	gwSrc, gwDst *netpoint
}

// linkRef is one <link_ctn>: a link, or a split-duplex pair used in a
// direction.
type linkRef struct {
	link     *Link   // plain link
	up, down *Link   // split-duplex halves when dir != dirNone
	dir      linkDir // direction for split-duplex links
}

type linkDir uint8

const (
	dirNone linkDir = iota
	dirUp
	dirDown
)

// resolve mirrors get_link_list_impl: split-duplex references pick their
// UP or DOWN half, swapped for the reverse (back) route.
func resolve(refs []linkRef, back bool) []*Link {
	out := make([]*Link, len(refs))
	for i, r := range refs {
		switch {
		case r.dir == dirNone:
			out[i] = r.link
		case (r.dir == dirUp) != back:
			out[i] = r.up
		default:
			out[i] = r.down
		}
	}
	return out
}

func reversed(ls []*Link) []*Link {
	out := make([]*Link, len(ls))
	for i, l := range ls {
		out[len(ls)-1-i] = l
	}
	return out
}

// newRoutes mirrors new_extended_route for a declared route and, when
// symmetrical, its reverse: links reversed with UP/DOWN swapped and
// gateways exchanged. Gateways are kept only in recursive zones.
func newRoutes(z *zone, refs []linkRef, gwSrc, gwDst *netpoint) (fwd, back *zroute) {
	if !z.recursive() {
		gwSrc, gwDst = nil, nil
	}
	fwd = &zroute{links: resolve(refs, false), gwSrc: gwSrc, gwDst: gwDst}
	back = &zroute{links: reversed(resolve(refs, true)), gwSrc: gwDst, gwDst: gwSrc}
	return fwd, back
}

// fullZone is SimGrid's FullZone: every route is declared.
type fullZone struct {
	z      *zone
	routes map[[2]int]*zroute
}

func (f *fullZone) addRoute(src, dst *netpoint, refs []linkRef, gwSrc, gwDst *netpoint, symmetrical bool) error {
	if _, dup := f.routes[[2]int{src.id, dst.id}]; dup {
		return fmt.Errorf("the route between %s and %s already exists (routes are symmetrical by default)", src.name, dst.name)
	}
	fwd, back := newRoutes(f.z, refs, gwSrc, gwDst)
	f.routes[[2]int{src.id, dst.id}] = fwd
	if symmetrical && src != dst {
		if _, dup := f.routes[[2]int{dst.id, src.id}]; dup {
			return fmt.Errorf("the route between %s and %s already exists: do not declare the reverse of a symmetrical route", dst.name, src.name)
		}
		f.routes[[2]int{dst.id, src.id}] = back
	}
	return nil
}

func (f *fullZone) seal(z *zone, b *builder) error {
	if z.recursive() {
		return nil
	}
	for _, v := range z.vertices {
		if _, ok := f.routes[[2]int{v.id, v.id}]; !ok {
			f.routes[[2]int{v.id, v.id}] = &zroute{links: []*Link{b.loopback()}}
		}
	}
	return nil
}

func (f *fullZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	r := f.routes[[2]int{src.id, dst.id}]
	if r == nil {
		return links, nil, nil, nil // SimGrid returns an empty route
	}
	return addLinks(links, lat, r.links...), r.gwSrc, r.gwDst, nil
}

// noneZone is SimGrid's EmptyZone (routing="None"): a host in it can be
// the gateway that ends a <zoneRoute>, but a route inside it, even from a
// host to itself, is an error (SimGrid aborts on it).
type noneZone struct{ z *zone }

func (n *noneZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	return nil, nil, nil, fmt.Errorf("zone %s has routing=\"None\", with no route inside it, here from %s (SimGrid 3.32 aborts: \"There can't be route in an Empty zone\")", n.z.name, src.name)
}

// addRoute refuses every route, as SimGrid's EmptyZone does.
func (n *noneZone) addRoute(src, dst *netpoint, _ []linkRef, _, _ *netpoint, _ bool) error {
	return fmt.Errorf("zone %s has routing=\"None\": it accepts no route (SimGrid 3.32 aborts: \"does not accept new routes\")", n.z.name)
}

// findBypass mirrors NetZoneImpl::get_bypass_route's search in zone z, the
// common ancestor of src and dst: the bypass between src and dst if both
// are z's own, else the first between the zones on their ways up to z, in
// SimGrid's order of pairs. It returns the route and its ends, or nil.
func (z *zone) findBypass(src, dst *netpoint) (*zroute, [2]*netpoint) {
	if len(z.bypass) == 0 {
		return nil, [2]*netpoint{}
	}
	if src.zone == z && dst.zone == z {
		key := [2]*netpoint{src, dst}
		return z.bypass[key], key
	}
	ps, pd := ancestors(src), ancestors(dst)
	for len(ps) > 1 && len(pd) > 1 && ps[len(ps)-1] == pd[len(pd)-1] {
		ps, pd = ps[:len(ps)-1], pd[:len(pd)-1]
	}
	lookup := func(i, j int) (*zroute, [2]*netpoint) {
		if i < len(ps) && j < len(pd) {
			key := [2]*netpoint{ps[i].self, pd[j].self}
			if bp := z.bypass[key]; bp != nil {
				return bp, key
			}
		}
		return nil, [2]*netpoint{}
	}
	for m := 0; m < max(len(ps), len(pd)); m++ {
		for i := 0; i < m; i++ {
			if bp, key := lookup(i, m); bp != nil {
				return bp, key
			}
			if bp, key := lookup(m, i); bp != nil {
				return bp, key
			}
		}
		if bp, key := lookup(m, m); bp != nil {
			return bp, key
		}
	}
	return nil, [2]*netpoint{}
}

// bypassRoute completes bypass route bp between key's ends into the route
// from src to dst, as get_bypass_route does: from src to its source
// gateway, its links, from its destination gateway to dst.
func (p *Platform) bypassRoute(bp *zroute, key [2]*netpoint, src, dst *netpoint, links []*Link, lat *latency) ([]*Link, error) {
	var err error
	if src != key[0] {
		if bp.gwSrc == nil {
			return nil, fmt.Errorf("the <bypassRoute> from %s to %s has no gateway to reach it from %s (SimGrid 3.32 crashes)", key[0].name, key[1].name, src.name)
		}
		if links, err = p.globalRoute(src, bp.gwSrc, links, lat); err != nil {
			return nil, err
		}
	}
	links = addLinks(links, lat, bp.links...)
	if dst != key[1] {
		if bp.gwDst == nil {
			return nil, fmt.Errorf("the <bypassRoute> from %s to %s has no gateway to leave it for %s (SimGrid 3.32 crashes)", key[0].name, key[1].name, dst.name)
		}
		if links, err = p.globalRoute(bp.gwDst, dst, links, lat); err != nil {
			return nil, err
		}
	}
	return links, nil
}

// vivaldiZone is SimGrid's VivaldiZone, a StarZone whose routes also take,
// between two points with coordinates (x, y, h), sqrt(dx² + dy²) + |h1| +
// |h2| milliseconds, after the links' latencies. Its <peer>s reach the
// center through their own links. SimGrid 3.32 aborts on a route between
// its sub-zones (a zone has no coordinates), and on a point without them.
type vivaldiZone struct{ starZone }

func (v *vivaldiZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	for _, np := range []*netpoint{src, dst} {
		if np.coords == nil {
			return nil, nil, nil, fmt.Errorf("%s %s has no Vivaldi coordinates, which routes in zone %s need (SimGrid 3.32 aborts: \"Please specify the Vivaldi coordinates\")", kindName(np.kind), np.name, v.z.name)
		}
	}
	links, _, _, err := v.starZone.local(src, dst, links, lat)
	if err != nil {
		return nil, nil, nil, err
	}
	sc, dc := src.coords, dst.coords
	dx, dy := sc[0]-dc[0], sc[1]-dc[1]
	// Explicit conversions keep each product rounded, as in SimGrid.
	d := math.Sqrt(float64(dx*dx)+float64(dy*dy)) + math.Abs(sc[2]) + math.Abs(dc[2])
	lat.addFixed(d / 1000)
	return links, nil, nil, nil
}

// addRoute takes the only <route> a Vivaldi zone accepts from XML: a
// loopback.
func (v *vivaldiZone) addRoute(src, dst *netpoint, refs []linkRef, gwSrc, gwDst *netpoint, sym bool) error {
	if src != dst {
		return fmt.Errorf("a Vivaldi zone takes only loopback routes (src = dst), not %s to %s: its peers reach the others through their own links", src.name, dst.name)
	}
	return v.starZone.addRoute(src, dst, refs, gwSrc, gwDst, sym)
}

// parseCoords reads a coordinates attribute as SimGrid does: three
// numbers separated by single spaces.
func parseCoords(s string) ([]float64, error) {
	parts := strings.Split(s, " ")
	if len(parts) != 3 {
		return nil, fmt.Errorf("coordinates %q must have 3 dimensions, separated by single spaces", s)
	}
	out := make([]float64, 3)
	for i, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("coordinates %q: %q is not a number", s, p)
		}
		out[i] = v
	}
	return out, nil
}
