// Package platformtest builds random SimGrid platform descriptions for
// the differential tests of package platform (routes) and package sim
// (replays) against SimGrid.
package platformtest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// RandomGraph returns the text of a random SimGrid platform: one graph
// zone (Floyd, Dijkstra, DijkstraCache or Full) of hosts (of a few speeds
// and core counts) and routers joined by routes of one or two links,
// shared between routes, of every sharing policy, symmetrical or not,
// with few distinct latencies and bandwidths so that routes tie; or, every
// other time, a graph zone of two to four such zones joined by zoneRoutes
// between gateways. Every host reaches every other, and nothing in it
// makes SimGrid 3.32 crash or loop.
func RandomGraph(rng *rand.Rand) string {
	return randomGraph(&graphGen{rng: rng})
}

// RandomProfiledGraph is RandomGraph with bandwidth and latency profiles
// (SimGrid's DATE VALUE lines, periodic) on about a third of the links. It
// returns the platform's text and the profile files it names, by name, to
// write beside it.
func RandomProfiledGraph(rng *rand.Rand) (string, map[string]string) {
	g := &graphGen{rng: rng, files: map[string]string{}}
	return randomGraph(g), g.files
}

func randomGraph(g *graphGen) string {
	rng := g.rng
	g.b.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n")
	if rng.IntN(2) == 0 {
		g.zone("z", "")
	} else {
		routing := g.routing()
		fmt.Fprintf(&g.b, "  <zone id=\"top\" routing=\"%s\">\n", routing)
		var zones []string
		gateways := map[string][]string{}
		for i := range 2 + rng.IntN(3) {
			id := fmt.Sprintf("z%d", i)
			zones = append(zones, id)
			gateways[id] = g.zone(id, id+"-")
		}
		// Links between zones come after the zones, as SimGrid wants
		// them declared before the routes that use them.
		g.routes = g.routes[:0]
		g.declared = map[[2]string]bool{}
		g.link = func(a, c string, ctn string) string {
			ga, gc := gateways[a], gateways[c]
			return fmt.Sprintf("    <zoneRoute src=\"%s\" dst=\"%s\" gw_src=\"%s\" gw_dst=\"%s\"%%s>%s</zoneRoute>\n",
				a, c, ga[rng.IntN(len(ga))], gc[rng.IntN(len(gc))], ctn)
		}
		// SimGrid 3.32 crashes on a route through a zone between two
		// others in a Dijkstra zone (Kairos refuses it): zones of one are
		// joined each to each.
		g.connect(zones, routing != "Floyd")
		g.flush()
		g.b.WriteString("  </zone>\n")
	}
	g.b.WriteString("</platform>\n")
	return g.b.String()
}

// graphGen writes the random platforms of RandomGraph.
type graphGen struct {
	rng      *rand.Rand
	files    map[string]string // profiles, by file name; nil: none
	b        strings.Builder
	links    []graphLink
	routes   []string
	declared map[[2]string]bool
	// link formats the route from a to c over links ctn, with a %s for
	// its symmetrical attribute; nil: a <route>.
	link func(a, c, ctn string) string
}

type graphLink struct {
	name   string
	duplex bool
}

func (g *graphGen) routing() string {
	return []string{"Floyd", "Dijkstra", "DijkstraCache", "Full"}[g.rng.IntN(4)]
}

// zone writes a graph zone id of hosts and routers named with prefix and
// returns the names of its points (its routers, or its hosts if it has
// none), the gateways other zones may reach it through.
func (g *graphGen) zone(id, prefix string) []string {
	rng := g.rng
	routing := g.routing()
	fmt.Fprintf(&g.b, "  <zone id=\"%s\" routing=\"%s\">\n", id, routing)
	var nodes, hosts, routers []string
	// Two points at least: SimGrid 3.32 crashes on the loopback of a
	// lone host in a Dijkstra zone (no route names it).
	for i := range 2 + rng.IntN(4) {
		hosts = append(hosts, fmt.Sprintf("%sh%d", prefix, i))
		fmt.Fprintf(&g.b, "    <host id=\"%s\" speed=\"%s\" core=\"%d\"/>\n", hosts[i],
			[]string{"1Gf", "2Gf", "500Mf"}[rng.IntN(3)], []int{1, 1, 2, 4}[rng.IntN(4)])
	}
	nodes = append(nodes, hosts...)
	if routing != "Full" {
		for i := range rng.IntN(4) {
			routers = append(routers, fmt.Sprintf("%sr%d", prefix, i))
			fmt.Fprintf(&g.b, "    <router id=\"%s\"/>\n", routers[i])
		}
		nodes = append(nodes, routers...)
	}
	g.routes, g.declared, g.link = g.routes[:0], map[[2]string]bool{}, nil
	g.connect(nodes, routing == "Full")
	g.flush()
	g.b.WriteString("  </zone>\n")
	if len(routers) > 0 {
		return routers
	}
	return hosts
}

// connect declares routes between nodes: a spanning tree, then extra
// ones; with full, between every pair. A route is symmetrical, or
// one-way, paired on the tree with one back over other links, so that
// every point reaches every other: SimGrid 3.32's Dijkstra zones loop
// forever on a route without a path.
func (g *graphGen) connect(nodes []string, full bool) {
	rng := g.rng
	if full {
		for _, a := range nodes {
			for _, c := range nodes {
				g.route(a, c, true)
			}
		}
		return
	}
	order := rng.Perm(len(nodes))
	for i := 1; i < len(order); i++ {
		g.route(nodes[order[i]], nodes[order[rng.IntN(i)]], true)
	}
	for range rng.IntN(2 * len(nodes)) {
		g.route(nodes[rng.IntN(len(nodes))], nodes[rng.IntN(len(nodes))], rng.IntN(2) == 0)
	}
}

func (g *graphGen) route(a, c string, both bool) {
	if a == c || g.declared[[2]string{a, c}] || g.declared[[2]string{c, a}] {
		return
	}
	if g.rng.IntN(4) != 0 {
		g.declared[[2]string{a, c}], g.declared[[2]string{c, a}] = true, true
		g.routes = append(g.routes, g.format(a, c, ""))
		return
	}
	g.declared[[2]string{a, c}] = true
	g.routes = append(g.routes, g.format(a, c, ` symmetrical="NO"`))
	if both {
		g.declared[[2]string{c, a}] = true
		g.routes = append(g.routes, g.format(c, a, ` symmetrical="NO"`))
	}
}

// format returns a route from a to c over one or two links, new ones
// (declared at once) or ones of earlier routes.
func (g *graphGen) format(a, c, sym string) string {
	var ctn strings.Builder
	for range 1 + g.rng.IntN(2) {
		var l graphLink
		if len(g.links) > 0 && g.rng.IntN(3) == 0 {
			l = g.links[g.rng.IntN(len(g.links))]
		} else {
			l = g.newLink()
		}
		if l.duplex {
			fmt.Fprintf(&ctn, `<link_ctn id="%s" direction="%s"/>`, l.name, []string{"UP", "DOWN"}[g.rng.IntN(2)])
		} else {
			fmt.Fprintf(&ctn, `<link_ctn id="%s"/>`, l.name)
		}
	}
	if g.link != nil {
		return fmt.Sprintf(g.link(a, c, ctn.String()), sym)
	}
	return fmt.Sprintf("    <route src=\"%s\" dst=\"%s\"%s>%s</route>\n", a, c, sym, ctn.String())
}

// newLink declares a link of a few bandwidths and latencies (so that
// routes tie) and sharing policies.
func (g *graphGen) newLink() graphLink {
	l := graphLink{name: fmt.Sprintf("l%d", len(g.links))}
	policy := ""
	switch g.rng.IntN(5) {
	case 0:
		policy = ` sharing_policy="FATPIPE"`
	case 1:
		policy, l.duplex = ` sharing_policy="SPLITDUPLEX"`, true
	}
	fmt.Fprintf(&g.b, "    <link id=\"%s\" bandwidth=\"%s\" latency=\"%s\"%s%s/>\n", l.name,
		[]string{"125MBps", "1GBps", "10MBps"}[g.rng.IntN(3)], []string{"0", "10us", "50us", "1.5us"}[g.rng.IntN(4)], policy, g.profiles(l.name))
	g.links = append(g.links, l)
	return l
}

// profiles returns the profile attributes of link name, about one link
// in three, and keeps their files.
func (g *graphGen) profiles(name string) string {
	if g.files == nil || g.rng.IntN(3) != 0 {
		return ""
	}
	var attrs string
	kind := g.rng.IntN(3)
	if kind != 1 {
		file := name + "-bw.txt"
		g.files[file] = g.profile([]string{"10000000", "50000000", "125000000", "1000000000"})
		attrs += ` bandwidth_file="` + file + `"`
	}
	if kind != 0 {
		file := name + "-lat.txt"
		// No latency of 0: SimGrid 3.32 may crash when a transfer's
		// latency reaches 0 (its TCP-gamma bound, gamma / 2 latency).
		g.files[file] = g.profile([]string{"0.0000005", "0.000001", "0.00002", "0.0001"})
		attrs += ` latency_file="` + file + `"`
	}
	return attrs
}

// profile returns a periodic profile of two events, of values from
// values, every few milliseconds.
func (g *graphGen) profile(values []string) string {
	d1 := 0.0005 + 0.0015*g.rng.Float64()
	d2 := d1 + 0.001 + 0.002*g.rng.Float64()
	period := d2 + 0.001 + 0.003*g.rng.Float64()
	return fmt.Sprintf("%.6f %s\n%.6f %s\nPERIODICITY %.6f\n", d1, values[g.rng.IntN(len(values))], d2, values[g.rng.IntN(len(values))], period)
}

// flush writes the routes declared since the zone's links.
func (g *graphGen) flush() {
	for _, r := range g.routes {
		g.b.WriteString(r)
	}
}
