package platformtest

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// RandomClusters returns the text of a random SimGrid platform of
// <cluster>s: one alone, or two or three in a Full or Floyd zone joined by
// zoneRoutes between gateways (hosts, or a flat cluster's router), each
// pair in a Full zone, a chain and a few more in a Floyd one, so that
// routes cross a middle cluster. Each cluster has a random topology (flat,
// with a backbone or not, torus, fat-tree or dragonfly, of random
// parameters), host speeds and core counts, link bandwidths, latencies and
// sharing policies, and maybe a limiter link, a loopback and radicals with
// gaps or beyond the topology's size. Some are platforms SimGrid 3.32
// cannot build or route (links of a fat tree named twice, dragonflies of
// more groups than routers): a test must then find that both refuse them.
func RandomClusters(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<platform version=\"4.1\">\n")
	n := 1 + rng.IntN(3)
	if n == 1 {
		randomCluster(&b, rng, "c0", "  ")
		b.WriteString("</platform>\n")
		return b.String()
	}
	routing := []string{"Full", "Floyd"}[rng.IntN(2)]
	fmt.Fprintf(&b, "  <zone id=\"world\" routing=\"%s\">\n", routing)
	gateways := make([][]string, n)
	for i := range n {
		gateways[i] = randomCluster(&b, rng, fmt.Sprintf("c%d", i), "    ")
	}
	var pairs [][2]int
	for i := 1; i < n; i++ {
		pairs = append(pairs, [2]int{i - 1, i})
	}
	// The pair closing a ring of three: always in a Full zone (whose
	// routes must all be declared), sometimes in a Floyd one.
	if closing := routing == "Full" || rng.IntN(2) == 0; closing && n == 3 {
		pairs = append(pairs, [2]int{0, 2})
	}
	for k := range pairs {
		fmt.Fprintf(&b, "    <link id=\"x%d\" bandwidth=\"%s\" latency=\"%s\"/>\n", k, pick(rng, "1GBps", "125MBps", "10GBps"), pick(rng, "1ms", "10us", "0"))
	}
	for k, p := range pairs {
		a, c := gateways[p[0]], gateways[p[1]]
		fmt.Fprintf(&b, "    <zoneRoute src=\"c%d\" dst=\"c%d\" gw_src=\"%s\" gw_dst=\"%s\"><link_ctn id=\"x%d\"/></zoneRoute>\n",
			p[0], p[1], a[rng.IntN(len(a))], c[rng.IntN(len(c))], k)
	}
	b.WriteString("  </zone>\n</platform>\n")
	return b.String()
}

// randomCluster writes a random <cluster> id and returns the names of the
// points other zones may reach it through.
func randomCluster(b *strings.Builder, rng *rand.Rand, id, indent string) []string {
	prefix, suffix := id+"-", pick(rng, "", "", ".net")
	var attrs strings.Builder
	size := 0
	router := ""
	switch rng.IntN(4) {
	case 0:
		size = 2 + rng.IntN(10)
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&attrs, ` bb_bw="%s" bb_lat="%s"`, pick(rng, "200MBps", "1GBps", "100MBps"), pick(rng, "20us", "0", "1us"))
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&attrs, ` bb_sharing_policy="%s"`, pick(rng, "SHARED", "FATPIPE"))
			}
		}
		router = prefix + id + "_router" + suffix
		if rng.IntN(3) == 0 {
			router = id + "-gw"
			fmt.Fprintf(&attrs, ` router_id="%s"`, router)
		}
	case 1:
		dims := torusDims(rng)
		size = product(dims)
		fmt.Fprintf(&attrs, ` topology="TORUS" topo_parameters="%s"`, joinInts(dims, ","))
	case 2:
		var params string
		params, size = fatTree(rng)
		fmt.Fprintf(&attrs, ` topology="FAT_TREE" topo_parameters="%s"`, params)
	default:
		var params string
		params, size = dragonfly(rng)
		fmt.Fprintf(&attrs, ` topology="DRAGONFLY" topo_parameters="%s"`, params)
	}
	if rng.IntN(3) == 0 {
		fmt.Fprintf(&attrs, ` sharing_policy="%s"`, pick(rng, "SHARED", "SPLITDUPLEX", "FATPIPE"))
	}
	if rng.IntN(3) == 0 {
		fmt.Fprintf(&attrs, ` limiter_link="%s"`, pick(rng, "150MBps", "1GBps", "2GBps"))
	}
	switch rng.IntN(4) {
	case 0:
		fmt.Fprintf(&attrs, ` loopback_bw="%s" loopback_lat="%s"`, pick(rng, "100MBps", "5GBps"), pick(rng, "1us", "0"))
	case 1:
		fmt.Fprintf(&attrs, ` loopback_bw="%s"`, pick(rng, "100MBps", "5GBps"))
	}
	radicals, ranges := radicals(rng, size)
	fmt.Fprintf(b, "%s<cluster id=\"%s\" prefix=\"%s\" suffix=\"%s\" radical=\"%s\" speed=\"%s\" core=\"%d\" bw=\"%s\" lat=\"%s\"%s/>\n",
		indent, id, prefix, suffix, ranges, pick(rng, "1Gf", "2Gf,1Gf", "500Mf"), 1+rng.IntN(3),
		pick(rng, "125MBps", "1GBps", "10MBps"), pick(rng, "50us", "1us", "10us", "0"), attrs.String())
	var points []string
	for _, r := range radicals[:size] {
		points = append(points, prefix+strconv.Itoa(r)+suffix)
	}
	if router != "" && rng.IntN(2) == 0 {
		return []string{router}
	}
	return points
}

// torusDims returns one to three dimensions of 1 to 4 nodes, 2 to 32 in
// all.
func torusDims(rng *rand.Rand) []int {
	for {
		dims := make([]int, 1+rng.IntN(3))
		for i := range dims {
			dims[i] = 1 + rng.IntN(4)
		}
		if n := product(dims); n >= 2 && n <= 32 {
			return dims
		}
	}
}

// fatTree returns the parameters of a fat tree of one to three levels
// (children, parents and link counts of 1 to 4, 3 and 2) of 2 to 32
// nodes, and its node count.
func fatTree(rng *rand.Rand) (string, int) {
	for {
		levels := 1 + rng.IntN(3)
		down, up, count := make([]int, levels), make([]int, levels), make([]int, levels)
		for i := range levels {
			down[i], up[i], count[i] = 1+rng.IntN(4), 1+rng.IntN(3), 1+rng.IntN(2)
		}
		if n := product(down); n >= 2 && n <= 32 {
			return fmt.Sprintf("%d;%s;%s;%s", levels, joinInts(down, ","), joinInts(up, ","), joinInts(count, ",")), n
		}
	}
}

// dragonfly returns the parameters of a dragonfly of 2 to 32 nodes, and
// its node count. One in eight has more groups than routers per chassis,
// which SimGrid 3.32 cannot route.
func dragonfly(rng *rand.Rand) (string, int) {
	for {
		groups, chassis, routers, nodes := 1+rng.IntN(3), 1+rng.IntN(3), 1+rng.IntN(3), 1+rng.IntN(2)
		if groups > routers && rng.IntN(8) != 0 {
			continue
		}
		if n := groups * chassis * routers * nodes; n >= 2 && n <= 32 {
			return fmt.Sprintf("%d,%d;%d,%d;%d,%d;%d", groups, 1+rng.IntN(2), chassis, 1+rng.IntN(2), routers, 1+rng.IntN(2), nodes), n
		}
	}
}

// radicals returns size increasing radicals or a few more (SimGrid's
// topologies take the first size), from a random start, in runs with gaps
// between them, and their text in SimGrid's ranges ("0-3,7").
func radicals(rng *rand.Rand, size int) ([]int, string) {
	n := size + rng.IntN(3)
	var r []int
	var runs []string
	for next := rng.IntN(3); len(r) < n; next += 2 + rng.IntN(3) {
		first := next
		for k := 1 + rng.IntN(n-len(r)); k > 0; k-- {
			r = append(r, next)
			next++
		}
		if next-1 == first {
			runs = append(runs, strconv.Itoa(first))
		} else {
			runs = append(runs, fmt.Sprintf("%d-%d", first, next-1))
		}
	}
	return r, strings.Join(runs, ",")
}

func pick(rng *rand.Rand, values ...string) string { return values[rng.IntN(len(values))] }

func product(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}
