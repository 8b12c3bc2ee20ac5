// Package platform describes the machines a trace is simulated on: hosts
// (speed, cores), network links (bandwidth, latency, sharing) and the route
// between any two hosts, read from SimGrid platform XML exactly as SimGrid
// 3.32 reads it, or built from a one-line cluster description (see
// ParseCluster). It also maps MPI ranks to hosts the way smpirun does
// (ReadHostfile, Deploy).
//
// Routes are what the simulator's network model is built on, so they
// reproduce SimGrid's routing link for link, in order, with the latency
// summed in SimGrid's order: Full, Floyd and Dijkstra zones over declared
// routes, nested zones joined by zoneRoutes through gateways, flat
// clusters and routing="Cluster" zones (SimGrid's StarZone), Vivaldi zones
// with their peers and coordinates, routing="None" zones (EmptyZone),
// bypass routes, and the TORUS, FAT_TREE and DRAGONFLY cluster topologies.
// SimGrid behaviours kept on purpose:
//
//   - a Full, Floyd or Dijkstra zone without child zones routes a host to
//     itself through the FATPIPE "__loopback__" link (network/loopback-bw
//     10 GB/s, -lat 0, changeable in <config>) unless a route is declared;
//     an undeclared route between two hosts of a Full zone is empty;
//   - a bypass route serves only routes whose common ancestor is the zone
//     declaring it; between zones, the first of the pairs of zones on the
//     ways up from the route's ends, in SimGrid's order of pairs (a
//     <bypassRoute> found that way, without gateways, is an error where
//     SimGrid crashes);
//   - a Vivaldi zone is a StarZone whose routes add the distance of
//     their ends' coordinates after the links' latency; its routes between
//     sub-zones fail (zones have no coordinates), and so do those to a
//     point without coordinates or given only a loopback route;
//   - a routing="None" zone has no route inside it, not even from a host
//     to itself (SimGrid aborts: an error here), but its hosts can be the
//     gateways that end zoneRoutes;
//   - a cluster's sharing_policy FATPIPE gives SHARED private links (3.32
//     ignores it), and its backbone exists when bb_bw or bb_lat is > 0;
//   - in a flat cluster a route lists limiter, link UP, backbone, link
//     DOWN, limiter, each link once; a host without loopback reaches itself
//     up and down its own link;
//   - a routing="Cluster" zone is built when it closes: its <backbone>,
//     then its <host_link>s, then its <cabinet>s' hosts and links
//     ("link_<host>_UP"/"_DOWN"); a host given neither a host_link nor a
//     route has empty ways up and down, one given only a loopback route
//     has none (routing to or from it fails);
//   - limiter links of TORUS, FAT_TREE and DRAGONFLY clusters are named by
//     position, loopbacks by radical; fat-tree positions and fat-tree and
//     dragonfly link numbers run on across the clusters of one platform;
//   - Dijkstra zones give each declared route's links in reverse order, as
//     SimGrid's insert_link_latency does;
//   - a platform with no hostfile deploys ranks on the hosts sorted by name;
//   - a host's speed profile (speed_file, or a <trace> given by its first
//     <trace_connect kind="SPEED">) is read from a file as given or beside
//     the platform file, a file's own PERIODICITY counting rather than the
//     <trace>'s attribute; so are a link's bandwidth_file and
//     latency_file, whose values are bytes per second and seconds, not
//     scales (SimGrid 3.32 aborts on a <trace_connect> to a link); a
//     SPLITDUPLEX link's <prop>s belong to the pair,
//     not to its halves, so the link energy model sees none.
package platform

import (
	"fmt"
	"math"
	"os"
	"sync"
)

// Sharing is how concurrent flows share a link's bandwidth.
type Sharing int

const (
	// Shared links split their bandwidth among all flows crossing them
	// (max-min fairness).
	Shared Sharing = iota
	// FatPipe links give every flow the full bandwidth.
	FatPipe
)

// String returns SimGrid's name of the policy.
func (s Sharing) String() string {
	switch s {
	case Shared:
		return "SHARED"
	case FatPipe:
		return "FATPIPE"
	}
	return fmt.Sprintf("Sharing(%d)", int(s))
}

// Link is one network resource. A SPLITDUPLEX link of the XML is two Links,
// "<id>_UP" and "<id>_DOWN", each Shared.
type Link struct {
	Name      string
	Index     int     // position in Platform.Links
	Bandwidth float64 // bytes per second
	Latency   float64 // seconds
	Sharing   Sharing
	// Props holds the <prop> children of a SHARED or FATPIPE <link> (a
	// SPLITDUPLEX link's halves have none, as in SimGrid), and PropLines
	// the line of each.
	Props     map[string]string
	PropLines map[string]int
	// BandwidthProfile and LatencyProfile, if not nil, give the link's
	// bandwidth (bytes per second) and latency (seconds) over time (its
	// bandwidth_file and latency_file); both halves of a SPLITDUPLEX link
	// have the pair's.
	BandwidthProfile, LatencyProfile *Profile
}

// Host is a machine that runs ranks.
type Host struct {
	Name  string
	Index int     // position in Platform.Hosts (definition order)
	Speed float64 // flop/s of one core (the current pstate's speed)
	Cores int
	// PState is the current pstate, of PStates (the speeds the host was
	// given): SimGrid's energy plugin wants one power range per pstate.
	PState, PStates int
	// SpeedProfile, if not nil, scales the host's speed over time
	// (speed_file, or <trace_connect kind="SPEED">).
	SpeedProfile *Profile
	// Props holds the <prop> children of the host (or of its cluster),
	// and PropLines the line of each in the platform file, for errors
	// found in their values. Hosts of one cluster share the same maps:
	// treat them as read-only.
	Props     map[string]string
	PropLines map[string]int

	np *netpoint
}

// Platform is a loaded machine description. Its methods are safe for
// concurrent use.
type Platform struct {
	// Name is where the description came from (file name or cluster spec).
	Name string
	// Hosts in definition order.
	Hosts []*Host
	// Links in creation order, including the implicit loopback
	// "__loopback__" when a zone uses it.
	Links []*Link
	// Config holds the <config><prop id= value=/></config> entries,
	// ConfigLines the line of each, for errors found in their values.
	Config      map[string]string
	ConfigLines map[string]int
	// Warnings are what SimGrid would log while loading (deprecated
	// unit-less values, hosts left out of a topology...).
	Warnings []string

	root       *zone
	hostByName map[string]*Host

	mu    sync.RWMutex
	cache map[uint64]cachedRoute
	calc  sync.Mutex // serialises route computation (zones keep scratch state)
	depth int        // of globalRoute's recursion, under calc
	// links and lat are RouteAppend's scratch route, under calc.
	links []*Link
	lat   latency
}

// maxCachedRoutes bounds the route cache (about 100 bytes per entry): an
// all-to-all on thousands of ranks would otherwise keep millions of routes.
// When full, the cache starts afresh; slices already returned stay valid.
const maxCachedRoutes = 1 << 20

type cachedRoute struct {
	links []*Link
	lat   float64
	err   error
}

// Load reads a SimGrid platform XML file.
func Load(path string) (*Platform, error) {
	return LoadWith(path, nil)
}

// LoadWith is Load with command-line settings, as ParseWith.
func LoadWith(path string, settings map[string]string) (*Platform, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("platform: %w", err)
	}
	defer f.Close()
	return ParseWith(f, path, settings)
}

// Host returns the host with that name.
func (p *Platform) Host(name string) (*Host, bool) {
	h, ok := p.hostByName[name]
	return h, ok
}

// Route returns the links a message from src to dst crosses, in order, and
// the route's latency (the sum of the link latencies, accumulated in
// SimGrid's order). It returns (nil, 0) when SimGrid would fail to find a
// route; RouteErr says why. The slice is shared by all callers: do not
// modify it. Results are cached, so calling it per message is cheap.
func (p *Platform) Route(src, dst *Host) (links []*Link, latency float64) {
	links, latency, err := p.RouteErr(src, dst)
	if err != nil {
		return nil, 0
	}
	return links, latency
}

// RouteErr is Route with the reason when there is no route (a Floyd or
// Dijkstra zone without a path, zones without a zoneRoute between them).
func (p *Platform) RouteErr(src, dst *Host) ([]*Link, float64, error) {
	c := p.cached(src, dst)
	return c.links, c.lat, c.err
}

// RouteLatency returns the addends of the latency Route gives, in the
// order SimGrid sums them (the inter-zone links first; a Vivaldi zone's
// distance after its links'), or nil when there is no route. Replays under
// link latency profiles sum them again with the links' current latencies.
// They are computed again at each call, not cached.
func (p *Platform) RouteLatency(src, dst *Host) []LatencyTerm {
	if !p.owns(src) || !p.owns(dst) {
		return nil
	}
	lat := latency{keep: true}
	p.calc.Lock()
	defer p.calc.Unlock()
	if _, err := p.globalRoute(src.np, dst.np, nil, &lat); err != nil {
		return nil
	}
	return lat.terms
}

// RouteOnce is RouteErr without the cache: for a caller that keeps the
// routes it uses itself (a replay keeps each pair's), to which the
// cache's insertion cost more than computing a route of a cluster again.
func (p *Platform) RouteOnce(src, dst *Host) ([]*Link, float64, error) {
	if !p.owns(src) || !p.owns(dst) {
		return nil, 0, fmt.Errorf("platform %s: route between hosts of another platform", p.Name)
	}
	c := p.computeRoute(src, dst)
	return c.links, c.lat, c.err
}

// RouteAppend is RouteOnce for a caller that keeps only what it computes
// from the links: it appends their indexes (Link.Index) to buf, in order,
// and returns it with the route's latency; once its scratch has grown it
// allocates nothing (a replay of thousands of ranks computes thousands of
// routes at its start).
func (p *Platform) RouteAppend(buf []int, src, dst *Host) ([]int, float64, error) {
	if !p.owns(src) || !p.owns(dst) {
		return buf, 0, fmt.Errorf("platform %s: route between hosts of another platform", p.Name)
	}
	p.calc.Lock()
	defer p.calc.Unlock()
	if p.links == nil {
		p.links = make([]*Link, 0, 8)
	}
	p.lat = latency{}
	links, err := p.globalRoute(src.np, dst.np, p.links[:0], &p.lat)
	if err != nil {
		return buf, 0, fmt.Errorf("platform %s: route %s -> %s: %w", p.Name, src.Name, dst.Name, err)
	}
	for _, l := range links {
		buf = append(buf, l.Index)
	}
	p.links = links[:0] // grown, if it had to, for the next as long
	return buf, p.lat.sum, nil
}

// cached returns the route from src to dst, computed once.
func (p *Platform) cached(src, dst *Host) cachedRoute {
	if !p.owns(src) || !p.owns(dst) {
		return cachedRoute{err: fmt.Errorf("platform %s: route between hosts of another platform", p.Name)}
	}
	key := uint64(uint32(src.Index))<<32 | uint64(uint32(dst.Index))
	p.mu.RLock()
	c, ok := p.cache[key]
	p.mu.RUnlock()
	if !ok {
		c = p.computeRoute(src, dst)
		p.mu.Lock()
		if len(p.cache) >= maxCachedRoutes {
			p.cache = make(map[uint64]cachedRoute)
		}
		p.cache[key] = c
		p.mu.Unlock()
	}
	return c
}

func (p *Platform) owns(h *Host) bool {
	return h != nil && h.Index >= 0 && h.Index < len(p.Hosts) && p.Hosts[h.Index] == h
}

func (p *Platform) computeRoute(src, dst *Host) cachedRoute {
	p.calc.Lock()
	defer p.calc.Unlock()
	var lat latency
	links, err := p.globalRoute(src.np, dst.np, make([]*Link, 0, 8), &lat)
	if err != nil {
		return cachedRoute{err: fmt.Errorf("platform %s: route %s -> %s: %w", p.Name, src.Name, dst.Name, err)}
	}
	return cachedRoute{links: links[:len(links):len(links)], lat: lat.sum}
}

// Scale multiplies every link's bandwidth by bw and latency by lat (and
// the values of their profiles), and every host's speed by speed, for what-ifs ("twice the bandwidth"): the
// platform then is the one whose description had those values. Factors
// must be positive (1 keeps a quantity).
func (p *Platform) Scale(bw, lat, speed float64) error {
	for _, f := range []float64{bw, lat, speed} {
		if !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("platform %s: scale factors must be positive, got bandwidth %g, latency %g, speed %g", p.Name, bw, lat, speed)
		}
	}
	p.calc.Lock()
	defer p.calc.Unlock()
	bwProfiles, latProfiles := map[*Profile]*Profile{}, map[*Profile]*Profile{}
	for _, l := range p.Links {
		l.Bandwidth *= bw
		l.Latency *= lat
		l.BandwidthProfile = l.BandwidthProfile.scaled(bw, bwProfiles)
		l.LatencyProfile = l.LatencyProfile.scaled(lat, latProfiles)
	}
	for _, h := range p.Hosts {
		h.Speed *= speed // a speed profile's values are scales of it
	}
	p.mu.Lock()
	p.cache = map[uint64]cachedRoute{} // latencies are summed when a route is computed
	p.mu.Unlock()
	return nil
}
