package platform

import (
	"container/heap"
	"fmt"
	"math"
)

// floydZone is SimGrid's FloydZone: shortest paths (in number of links)
// over the declared routes, computed once with Floyd-Warshall.
type floydZone struct {
	p      *Platform
	z      *zone
	routes map[[2]int]*zroute // declared routes, until seal
	n      int
	cost   [][]uint64
	pred   [][]int
	table  [][]*zroute
}

func (f *floydZone) addRoute(src, dst *netpoint, refs []linkRef, gwSrc, gwDst *netpoint, symmetrical bool) error {
	if _, dup := f.routes[[2]int{src.id, dst.id}]; dup {
		return fmt.Errorf("the route between %s and %s already exists (routes are symmetrical by default)", src.name, dst.name)
	}
	fwd, back := newRoutes(f.z, refs, gwSrc, gwDst)
	f.routes[[2]int{src.id, dst.id}] = fwd
	if symmetrical {
		// For a self route this fails too, as in SimGrid (write
		// symmetrical="NO" on self routes of Floyd zones).
		if _, dup := f.routes[[2]int{dst.id, src.id}]; dup {
			return fmt.Errorf("the route between %s and %s already exists: do not declare the reverse of a symmetrical route", dst.name, src.name)
		}
		f.routes[[2]int{dst.id, src.id}] = back
	}
	return nil
}

func (f *floydZone) seal(z *zone, b *builder) error {
	n := len(z.vertices)
	f.n = n
	f.cost = make([][]uint64, n)
	f.pred = make([][]int, n)
	f.table = make([][]*zroute, n)
	for i := range f.cost {
		f.cost[i] = make([]uint64, n)
		f.pred[i] = make([]int, n)
		f.table[i] = make([]*zroute, n)
		for j := range f.cost[i] {
			f.cost[i][j] = math.MaxUint64
			f.pred[i][j] = -1
		}
	}
	for k, r := range f.routes {
		f.table[k[0]][k[1]] = r
		f.pred[k[0]][k[1]] = k[0]
		f.cost[k[0]][k[1]] = uint64(len(r.links))
	}
	if !z.recursive() {
		for i := 0; i < n; i++ {
			if f.table[i][i] == nil {
				f.table[i][i] = &zroute{links: []*Link{b.loopback()}}
				f.pred[i][i] = i
				f.cost[i][i] = 1
			}
		}
	}
	const inf = math.MaxUint64
	for c := 0; c < n; c++ {
		for a := 0; a < n; a++ {
			if f.cost[a][c] == inf {
				continue
			}
			for bb := 0; bb < n; bb++ {
				if f.cost[c][bb] < inf && (f.cost[a][bb] == inf || f.cost[a][c]+f.cost[c][bb] < f.cost[a][bb]) {
					f.cost[a][bb] = f.cost[a][c] + f.cost[c][bb]
					f.pred[a][bb] = f.pred[c][bb]
				}
			}
		}
	}
	f.routes = nil
	return nil
}

func (f *floydZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	var stack []*zroute
	cur := dst.id
	for steps := 0; ; steps++ {
		pred := f.pred[src.id][cur]
		if pred == -1 || steps > f.n || f.table[pred][cur] == nil {
			return nil, nil, nil, fmt.Errorf("no route from %s to %s in Floyd zone %s", src.name, dst.name, f.z.name)
		}
		stack = append(stack, f.table[pred][cur])
		cur = pred
		if cur == src.id {
			break
		}
	}
	var gwSrc, gwDst *netpoint
	rec := f.z.recursive()
	if rec {
		gwSrc, gwDst = stack[len(stack)-1].gwSrc, stack[0].gwDst
	}
	var prevDstGw *netpoint
	for i := len(stack) - 1; i >= 0; i-- {
		e := stack[i]
		if rec && prevDstGw != nil && e.gwSrc != nil && prevDstGw.name != e.gwSrc.name {
			var err error
			if links, err = f.p.globalRoute(prevDstGw, e.gwSrc, links, lat); err != nil {
				return nil, nil, nil, err
			}
		}
		links = addLinks(links, lat, e.links...)
		prevDstGw = e.gwDst
	}
	return links, gwSrc, gwDst, nil
}

// dijkstraZone is SimGrid's DijkstraZone: a graph whose nodes are the
// vertices named in routes (in order of first appearance) and whose edges
// are the declared routes, searched per source with a priority queue.
type dijkstraZone struct {
	z      *zone
	node   map[int]int // vertex id -> graph node
	vertex []int       // graph node -> vertex id
	out    [][]dedge
	pred   map[int][]int // per source graph node
}

type dedge struct {
	to int
	r  *zroute
}

func (d *dijkstraZone) graphNode(v int) int {
	if g, ok := d.node[v]; ok {
		return g
	}
	g := len(d.vertex)
	d.node[v] = g
	d.vertex = append(d.vertex, v)
	d.out = append(d.out, nil)
	return g
}

func (d *dijkstraZone) edge(from, to int) *zroute {
	for _, e := range d.out[from] {
		if e.to == to {
			return e.r
		}
	}
	return nil
}

func (d *dijkstraZone) newEdge(src, dst *netpoint, r *zroute) error {
	s, t := d.graphNode(src.id), d.graphNode(dst.id)
	if d.edge(s, t) != nil {
		return fmt.Errorf("route from %s to %s already exists", src.name, dst.name)
	}
	d.out[s] = append(d.out[s], dedge{t, r})
	return nil
}

func (d *dijkstraZone) addRoute(src, dst *netpoint, refs []linkRef, gwSrc, gwDst *netpoint, symmetrical bool) error {
	fwd, back := newRoutes(d.z, refs, gwSrc, gwDst)
	if err := d.newEdge(src, dst, fwd); err != nil {
		return err
	}
	if symmetrical {
		return d.newEdge(dst, src, back)
	}
	return nil
}

func (d *dijkstraZone) seal(z *zone, b *builder) error {
	if z.recursive() {
		return nil
	}
	for g := range d.out {
		if d.edge(g, g) == nil {
			d.out[g] = append(d.out[g], dedge{g, &zroute{links: []*Link{b.loopback()}}})
		}
	}
	return nil
}

// prependReversed mirrors SimGrid's insert_link_latency: the links go in
// front of what the route already holds, in reverse order.
func prependReversed(links []*Link, lat *latency, add []*Link) []*Link {
	out := make([]*Link, 0, len(links)+len(add))
	for i := len(add) - 1; i >= 0; i-- {
		out = append(out, add[i])
	}
	for _, l := range add {
		lat.addLink(l)
	}
	return append(out, links...)
}

func (d *dijkstraZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	s, okS := d.node[src.id]
	t, okD := d.node[dst.id]
	if !okS || !okD {
		return nil, nil, nil, fmt.Errorf("no route from %s to %s in Dijkstra zone %s (no route names them)", src.name, dst.name, d.z.name)
	}
	noRoute := fmt.Errorf("no route from %s to %s in Dijkstra zone %s", src.name, dst.name, d.z.name)
	if s == t {
		e := d.edge(s, s)
		if e == nil {
			return nil, nil, nil, noRoute
		}
		links = prependReversed(links, lat, e.links)
	}
	pred := d.predecessors(s)
	var gwSrc, firstGw *netpoint
	for v, steps := t, 0; v != s; v, steps = pred[v], steps+1 {
		e := d.edge(pred[v], v)
		if e == nil || steps > len(d.vertex) {
			return nil, nil, nil, noRoute
		}
		prevGwSrc := gwSrc
		gwSrc = e.gwSrc
		if v == t {
			firstGw = e.gwDst
		}
		if d.z.recursive() && v != t && e.gwDst != nil && prevGwSrc != nil && e.gwDst.name != prevGwSrc.name {
			// SimGrid 3.32 dereferences null gateways here and crashes.
			return nil, nil, nil, fmt.Errorf("routes %s -> %s of Dijkstra zone %s need gateway-to-gateway routing, which SimGrid 3.32 cannot do", src.name, dst.name, d.z.name)
		}
		links = prependReversed(links, lat, e.links)
	}
	if d.z.recursive() {
		return links, gwSrc, firstGw, nil
	}
	return links, nil, nil, nil
}

// predecessors runs SimGrid's Dijkstra from graph node s, with its exact
// tie-breaking (queue ordered by cost then node index, strict improvement)
// and unsigned cost arithmetic.
func (d *dijkstraZone) predecessors(s int) []int {
	if p, ok := d.pred[s]; ok {
		return p
	}
	n := len(d.vertex)
	cost := make([]uint64, n)
	pred := make([]int, n)
	q := make(pq, 0, n)
	for i := 0; i < n; i++ {
		if i != s {
			cost[i] = math.MaxUint64
		}
		q = append(q, pqItem{cost[i], i})
	}
	heap.Init(&q)
	for q.Len() > 0 {
		v := heap.Pop(&q).(pqItem).node
		for _, e := range d.out[v] {
			c := uint64(len(e.r.links)) + cost[v]
			if c < cost[e.to] {
				pred[e.to] = v
				cost[e.to] = c
				heap.Push(&q, pqItem{c, e.to})
			}
		}
	}
	d.pred[s] = pred
	return pred
}

type pqItem struct {
	cost uint64
	node int
}

type pq []pqItem

func (q pq) Len() int { return len(q) }
func (q pq) Less(i, j int) bool {
	if q[i].cost != q[j].cost {
		return q[i].cost < q[j].cost
	}
	return q[i].node < q[j].node
}
func (q pq) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *pq) Push(x any)   { *q = append(*q, x.(pqItem)) }
func (q *pq) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}
