package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// dragonflyZone is SimGrid's DragonflyZone (Cray Cascade style): groups of
// chassis of blades (routers) of nodes; green links join the routers of a
// chassis, black links the chassis of a group, blue links the groups.
// Routing is minimal, as in SimGrid.
type dragonflyZone struct {
	groups, chassis, blades, nodes int
	linksPerLink                   int // 2 for split-duplex links
	routers                        []dfRouter
	leaves                         []leafLinks // by vertex id
}

type dfRouter struct {
	group, chassis, blade int
	blue, limiter         *Link
	black, green, local   []*Link
}

// parseDragonfly reads "groups,blue;chassis,black;routers,green;nodes".
func parseDragonfly(params string) (v [7]int, err error) {
	parts := strings.Split(params, ";")
	bad := func(format string, a ...any) ([7]int, error) {
		return v, fmt.Errorf("dragonfly parameters %q: %s (expected \"groups,links;chassis,links;routers,links;nodes\")", params, fmt.Sprintf(format, a...))
	}
	if len(parts) != 4 {
		return bad("4 parts separated by ';' are needed")
	}
	names := []string{"groups", "blue links", "chassis", "black links", "routers", "green links", "nodes"}
	for i := 0; i < 3; i++ {
		pair := strings.Split(parts[i], ",")
		if len(pair) != 2 {
			return bad("part %d must be two numbers", i+1)
		}
		for j := 0; j < 2; j++ {
			if v[2*i+j], err = cInt(pair[j]); err != nil {
				return bad("%s: %v", names[2*i+j], err)
			}
		}
	}
	if v[6], err = cInt(parts[3]); err != nil {
		return bad("nodes: %v", err)
	}
	for i, x := range v {
		if x <= 0 || x > 1<<16 {
			return bad("the number of %s must be in 1..65536", names[i])
		}
	}
	if v[0] > v[4] {
		return bad("%d groups but %d routers per chassis: SimGrid 3.32 reaches group g through router g of a chassis, so groups must not exceed routers", v[0], v[4])
	}
	// Nodes, then links (local, green, black, blue), must stay reasonable.
	routers := v[0] * v[2] * v[4] // each factor is at most 2^16
	if routers > 1<<22 || routers*v[6] > 1<<22 || routers*(v[6]+v[4]+v[2])+v[0]*v[0] > 1<<23 {
		return bad("too many nodes or links")
	}
	return v, nil
}

// dragonflyCluster mirrors create_dragonfly_zone.
func (b *builder) dragonflyCluster(a *clusterArgs) error {
	v, err := parseDragonfly(a.topoParams)
	if err != nil {
		return err
	}
	df := &dragonflyZone{groups: v[0], chassis: v[2], blades: v[4], nodes: v[6], linksPerLink: 1}
	if a.sharing == "SPLITDUPLEX" {
		df.linksPerLink = 2
	}
	n := df.groups * df.chassis * df.blades * df.nodes
	if err := b.checkHierarchical(a, "DRAGONFLY", n); err != nil {
		return err
	}
	z, err := b.newZone(a.id)
	if err != nil {
		return err
	}
	z.rt = df
	df.leaves = make([]leafLinks, n)
	for i := 0; i < n; i++ {
		h, ll, err := b.hierarchicalLeaf(z, a, i)
		if err != nil {
			return err
		}
		df.leaves[h.np.id] = ll
	}
	id := 2 * n
	for g := 0; g < df.groups; g++ {
		for c := 0; c < df.chassis; c++ {
			for bl := 0; bl < df.blades; bl++ {
				r := dfRouter{group: g, chassis: c, blade: bl}
				if a.limiter > 0 {
					id--
					if r.limiter, err = b.limiter(a, id); err != nil {
						return err
					}
				}
				df.routers = append(df.routers, r)
			}
		}
	}
	return b.dragonflyLinks(df, a, v[1], v[3], v[5])
}

// dfLink creates one dragonfly cable of numLinks parallel links.
func (b *builder) dfLink(a *clusterArgs, name string, numLinks int) (up, down *Link, err error) {
	scaled := *a
	scaled.bw = a.bw * float64(numLinks)
	up, down, err = b.privateLink(name, &scaled)
	b.dfLinkID++
	return up, down, err
}

func (b *builder) dragonflyLinks(df *dragonflyZone, a *clusterArgs, blue, black, green int) error {
	uid := func() string { return "_" + strconv.Itoa(b.dfLinkID) }
	itoa := strconv.Itoa
	nl := df.linksPerLink
	for i := range df.routers {
		r := &df.routers[i]
		r.local = make([]*Link, nl*df.nodes)
		r.green = make([]*Link, df.blades)
		r.black = make([]*Link, df.chassis)
		for j := 0; j < nl*df.nodes; j += nl {
			up, down, err := b.dfLink(a, "local_link_from_router_"+itoa(i)+"_to_node_"+itoa(j/nl)+uid(), 1)
			if err != nil {
				return err
			}
			r.local[j] = up
			if nl == 2 {
				r.local[j+1] = down
			}
		}
	}
	for i := 0; i < df.groups*df.chassis; i++ {
		for j := 0; j < df.blades; j++ {
			for k := j + 1; k < df.blades; k++ {
				name := "green_link_in_chassis_" + itoa(i%df.chassis) + "_between_routers_" + itoa(j) + "_and_" + itoa(k) + uid()
				up, down, err := b.dfLink(a, name, green)
				if err != nil {
					return err
				}
				df.routers[i*df.blades+j].green[k] = up
				df.routers[i*df.blades+k].green[j] = down
			}
		}
	}
	perGroup := df.blades * df.chassis
	for i := 0; i < df.groups; i++ {
		for j := 0; j < df.chassis; j++ {
			for k := j + 1; k < df.chassis; k++ {
				for l := 0; l < df.blades; l++ {
					name := "black_link_in_group_" + itoa(i) + "_between_chassis_" + itoa(j) + "_and_" + itoa(k) + "_blade_" + itoa(l) + uid()
					up, down, err := b.dfLink(a, name, black)
					if err != nil {
						return err
					}
					df.routers[i*perGroup+j*df.blades+l].black[k] = up
					df.routers[i*perGroup+k*df.blades+l].black[j] = down
				}
			}
		}
	}
	for i := 0; i < df.groups; i++ {
		for j := i + 1; j < df.groups; j++ {
			ri, rj := i*perGroup+j, j*perGroup+i
			name := "blue_link_between_group_" + itoa(i) + "_and_" + itoa(j) + "_routers_" + itoa(ri) + "_and_" + itoa(rj) + uid()
			up, down, err := b.dfLink(a, name, blue)
			if err != nil {
				return err
			}
			df.routers[ri].blue = up
			df.routers[rj].blue = down
		}
	}
	return nil
}

type dfCoords struct{ group, chassis, blade, node int }

func (df *dragonflyZone) coords(rank int) dfCoords {
	var c dfCoords
	perGroup := df.chassis * df.blades * df.nodes
	c.group, rank = rank/perGroup, rank%perGroup
	c.chassis, rank = rank/(df.blades*df.nodes), rank%(df.blades*df.nodes)
	c.blade, c.node = rank/df.nodes, rank%df.nodes
	return c
}

func (df *dragonflyZone) router(group, chassis, blade int) *dfRouter {
	return &df.routers[group*df.chassis*df.blades+chassis*df.blades+blade]
}

func (df *dragonflyZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	if src.kind != npHost || dst.kind != npHost {
		return links, nil, nil, nil
	}
	if src.id == dst.id && df.leaves[src.id].loopback != nil {
		return addLinks(links, lat, df.leaves[src.id].loopback), nil, nil, nil
	}
	my, target := df.coords(src.id), df.coords(dst.id)
	myRouter := df.router(my.group, my.chassis, my.blade)
	targetRouter := df.router(target.group, target.chassis, target.blade)
	cur := myRouter
	limit := func(r *dfRouter) {
		if r.limiter != nil {
			links = append(links, r.limiter)
		}
	}
	if l := df.leaves[src.id].limiter; l != nil {
		links = append(links, l)
	}
	links = addLinks(links, lat, myRouter.local[my.node*df.linksPerLink])
	if targetRouter != myRouter {
		if targetRouter.group != cur.group {
			if cur.blade != target.group {
				limit(cur)
				links = addLinks(links, lat, cur.green[target.group])
				cur = df.router(my.group, my.chassis, target.group)
			}
			if cur.chassis != 0 {
				limit(cur)
				links = addLinks(links, lat, cur.black[0])
				cur = &df.routers[my.group*df.chassis*df.blades+target.group]
			}
			links = addLinks(links, lat, cur.blue)
			limit(cur)
			cur = &df.routers[target.group*df.chassis*df.blades+my.group]
		}
		if targetRouter.blade != cur.blade {
			limit(cur)
			links = addLinks(links, lat, cur.green[target.blade])
			cur = df.router(target.group, 0, target.blade)
		}
		if targetRouter.chassis != cur.chassis {
			limit(cur)
			links = addLinks(links, lat, cur.black[target.chassis])
		}
	}
	limit(targetRouter)
	links = addLinks(links, lat, targetRouter.local[target.node*df.linksPerLink+df.linksPerLink-1])
	if l := df.leaves[dst.id].limiter; l != nil {
		links = append(links, l)
	}
	return links, nil, nil, nil
}
