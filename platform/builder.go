package platform

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Default implicit loopback of SimGrid's CM02/LV08/SMPI network models
// (network/loopback-bw, network/loopback-lat): Full, Floyd and Dijkstra
// zones without child zones route a host to itself through this FATPIPE
// link, named "__loopback__", when no route to self is declared. A
// <config> element of the platform can change both values.
const (
	DefaultLoopbackBandwidth = 10e9
	DefaultLoopbackLatency   = 0.0
)

// builder creates the platform's objects in SimGrid's order and checks the
// names, which share one namespace per kind (links; hosts, routers and
// zones).
type builder struct {
	p         *Platform
	cur       *zone
	netpoints map[string]*netpoint
	links     map[string]*Link
	duplex    map[string][2]*Link
	lb        *Link
	lbBW      float64
	lbLat     float64
	zones     []*zone // creation order

	// SimGrid keeps these in function-level statics, so they run on across
	// the fat trees and dragonflies of one platform.
	ftPosition, ftLinkID, dfLinkID int

	// Slabs that objects are carved from, so that clusters of tens of
	// thousands of hosts load quickly.
	linkSlab []Link
	hostSlab []Host
	npSlab   []netpoint
}

const slabSize = 256

func carve[T any](slab *[]T) *T {
	if len(*slab) == 0 {
		*slab = make([]T, slabSize)
	}
	x := &(*slab)[0]
	*slab = (*slab)[1:]
	return x
}

// reserve grows the name tables ahead of a cluster of that many hosts and
// links, which saves rehashing them again and again (a third of the
// instructions of loading a 64-host cluster, and 28 of its page faults).
// It leaves them to grow as maps do for a cluster smaller than what they
// hold: copying them for each of many small clusters would take the
// square of their hosts.
func (b *builder) reserve(hosts, links int) {
	if hosts+links < len(b.netpoints)+len(b.links) {
		return
	}
	b.netpoints = grown(b.netpoints, hosts)
	b.p.hostByName = grown(b.p.hostByName, hosts)
	b.links = grown(b.links, links)
	b.duplex = grown(b.duplex, hosts)
}

func grown[V any](m map[string]V, more int) map[string]V {
	out := make(map[string]V, len(m)+more)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func newBuilder(name string) *builder {
	return &builder{
		p: &Platform{
			Name:        name,
			Config:      map[string]string{},
			ConfigLines: map[string]int{},
			hostByName:  map[string]*Host{},
			cache:       map[uint64]cachedRoute{},
		},
		netpoints: map[string]*netpoint{},
		links:     map[string]*Link{},
		duplex:    map[string][2]*Link{},
		lbBW:      DefaultLoopbackBandwidth,
		lbLat:     DefaultLoopbackLatency,
	}
}

func (b *builder) newLink(name string, bw, lat float64, sh Sharing) (*Link, error) {
	if _, dup := b.links[name]; dup {
		return nil, fmt.Errorf("link %q already exists", name)
	}
	l := carve(&b.linkSlab)
	*l = Link{Name: name, Index: len(b.p.Links), Bandwidth: bw, Latency: lat, Sharing: sh}
	b.links[name] = l
	b.p.Links = append(b.p.Links, l)
	return l, nil
}

// newDuplex creates a SPLITDUPLEX link: two Shared links "<name>_UP" and
// "<name>_DOWN".
func (b *builder) newDuplex(name string, bw, lat float64) (up, down *Link, err error) {
	if _, dup := b.duplex[name]; dup {
		return nil, nil, fmt.Errorf("link %q already exists", name)
	}
	if up, err = b.newLink(name+"_UP", bw, lat, Shared); err != nil {
		return nil, nil, err
	}
	if down, err = b.newLink(name+"_DOWN", bw, lat, Shared); err != nil {
		return nil, nil, err
	}
	b.duplex[name] = [2]*Link{up, down}
	return up, down, nil
}

// setLoopback applies network/loopback-bw or network/loopback-lat.
func (b *builder) setLoopback(key, val string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", val)
	}
	if key == "network/loopback-bw" {
		b.lbBW = v
	} else {
		b.lbLat = v
	}
	return nil
}

// loopback returns the network model's implicit loopback link, created on
// first use.
func (b *builder) loopback() *Link {
	if b.lb == nil {
		b.lb = &Link{Name: "__loopback__", Index: len(b.p.Links), Bandwidth: b.lbBW, Latency: b.lbLat, Sharing: FatPipe}
		b.p.Links = append(b.p.Links, b.lb)
	}
	return b.lb
}

func (b *builder) newNetpoint(z *zone, name string, kind npKind) (*netpoint, error) {
	if name == "" {
		return nil, fmt.Errorf("empty name")
	}
	if old, dup := b.netpoints[name]; dup {
		return nil, fmt.Errorf("refusing to create a second %s called %q (a %s has that name)", kindName(kind), name, kindName(old.kind))
	}
	np := carve(&b.npSlab)
	*np = netpoint{name: name, kind: kind}
	b.netpoints[name] = np
	if z != nil {
		z.add(np)
	}
	return np, nil
}

func kindName(k npKind) string {
	switch k {
	case npHost:
		return "host"
	case npRouter:
		return "router"
	}
	return "zone"
}

// props are the <prop> children of an element, and their lines.
type props struct {
	vals  map[string]string
	lines map[string]int
}

func (b *builder) newHost(z *zone, name string, speed float64, cores int, pr props) (*Host, error) {
	if speed <= 0 {
		return nil, fmt.Errorf("host %q: speed must be positive, got %g", name, speed)
	}
	if cores <= 0 {
		return nil, fmt.Errorf("host %q: core count must be positive, got %d", name, cores)
	}
	np, err := b.newNetpoint(z, name, npHost)
	if err != nil {
		return nil, err
	}
	h := carve(&b.hostSlab)
	*h = Host{Name: name, Index: len(b.p.Hosts), Speed: speed, Cores: cores, PStates: 1, Props: pr.vals, PropLines: pr.lines, np: np}
	b.p.Hosts = append(b.p.Hosts, h)
	b.p.hostByName[name] = h
	return h, nil
}

// newZone creates a zone inside the current one (or the root zone).
func (b *builder) newZone(name string) (*zone, error) {
	if b.cur == nil && b.p.root != nil {
		return nil, fmt.Errorf("the platform already has a root zone (%s): put %q inside it", b.p.root.name, name)
	}
	np, err := b.newNetpoint(b.cur, name, npZone)
	if err != nil {
		return nil, err
	}
	z := &zone{name: name, parent: b.cur, self: np}
	np.sub = z
	if b.cur != nil {
		b.cur.children = append(b.cur.children, z)
	} else {
		b.p.root = z
	}
	b.zones = append(b.zones, z)
	return z, nil
}

// finish seals every zone (implicit loopbacks, Floyd tables) and returns
// the platform.
func (b *builder) finish() (*Platform, error) {
	if b.p.root == nil {
		return nil, fmt.Errorf("the platform has no zone and no cluster")
	}
	for _, z := range b.zones {
		if s, ok := z.rt.(sealer); ok {
			if err := s.seal(z, b); err != nil {
				return nil, fmt.Errorf("zone %s: %w", z.name, err)
			}
		}
	}
	if len(b.p.Hosts) == 0 {
		return nil, fmt.Errorf("the platform has no host")
	}
	return b.p, nil
}

// cInt reads an int the way C++'s std::stoi does: leading white space, a
// sign and digits; anything after the digits is ignored.
func cInt(s string) (int, error) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	j := i
	for j < len(t) && t[j] >= '0' && t[j] <= '9' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	v, err := strconv.ParseInt(t[:j], 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range (expected an integer from %d to %d)", s, math.MinInt32, math.MaxInt32)
	}
	return int(v), nil
}
