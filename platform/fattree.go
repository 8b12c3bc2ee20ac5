package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// fatTreeZone is SimGrid's FatTreeZone (after Zahavi's "D-Mod-K routing"):
// levels of switches above the hosts, routed up with d-mod-k to the first
// common ancestor and down along the destination's label.
type fatTreeZone struct {
	levels          int
	down, up, count []int // children per node, parents per node, parallel links, per level
	nodesByLevel    []int
	nodes           []*ftNode // hosts first, then switches level by level
	compute         []*ftNode // by vertex id
}

type ftNode struct {
	id, level, position int
	label               []int
	parents, children   []*ftLink
	limiter, loopback   *Link
}

type ftLink struct {
	upNode, downNode *ftNode
	up, down         *Link
}

// parseFatTree reads "levels;down,..;up,..;count,..".
func parseFatTree(params string) (levels int, down, up, count []int, err error) {
	parts := strings.Split(params, ";")
	if len(parts) != 4 {
		return 0, nil, nil, nil, fmt.Errorf("fat tree parameters %q: expected \"levels;children,..;parents,..;links,..\" (4 parts separated by ';')", params)
	}
	if levels, err = cInt(parts[0]); err != nil {
		return 0, nil, nil, nil, fmt.Errorf("fat tree parameters %q: first part is not the number of levels: %v", params, err)
	}
	if levels <= 0 {
		return 0, nil, nil, nil, fmt.Errorf("fat tree parameters %q: the number of levels must be > 0", params)
	}
	vec := func(s, what string) ([]int, error) {
		items := strings.Split(s, ",")
		if len(items) != levels {
			return nil, fmt.Errorf("fat tree parameters %q: %d levels but the %s vector has %d values", params, levels, what, len(items))
		}
		var v []int
		for _, it := range items {
			x, err := cInt(it)
			if err != nil {
				return nil, fmt.Errorf("fat tree parameters %q: %s: %v", params, what, err)
			}
			if x <= 0 || x > 1<<16 {
				return nil, fmt.Errorf("fat tree parameters %q: %s values must be in 1..65536", params, what)
			}
			v = append(v, x)
		}
		return v, nil
	}
	if down, err = vec(parts[1], "child count"); err != nil {
		return
	}
	if up, err = vec(parts[2], "parent count"); err != nil {
		return
	}
	if count, err = vec(parts[3], "link count"); err != nil {
		return
	}
	for i := range count {
		if down[i]*count[i] > 1<<16 || up[i]*count[i] > 1<<16 {
			return 0, nil, nil, nil, fmt.Errorf("fat tree parameters %q: more than 65536 ports on a node", params)
		}
	}
	return
}

// fatTreeCluster mirrors create_fatTree_zone.
func (b *builder) fatTreeCluster(a *clusterArgs) error {
	levels, down, up, count, err := parseFatTree(a.topoParams)
	if err != nil {
		return err
	}
	n, switches := 1, 0
	for _, d := range down {
		n *= d
		if n > 1<<22 {
			return fmt.Errorf("fat tree %q: too many nodes", a.topoParams)
		}
	}
	if err := b.checkHierarchical(a, "FAT_TREE", n); err != nil {
		return err
	}
	ft := &fatTreeZone{levels: levels, down: down, up: up, count: count, nodesByLevel: make([]int, levels+1)}
	ft.nodesByLevel[0] = n
	for i := 0; i < levels; i++ {
		c := 1
		for j := 0; j < levels; j++ {
			if j <= i {
				c *= up[j]
			} else {
				c *= down[j]
			}
			if c > 1<<22 { // factors are at most 2^16: no overflow
				return fmt.Errorf("fat tree %q: too many switches", a.topoParams)
			}
		}
		ft.nodesByLevel[i+1] = c
		if switches += c; switches > 1<<22 {
			return fmt.Errorf("fat tree %q: too many switches", a.topoParams)
		}
	}
	z, err := b.newZone(a.id)
	if err != nil {
		return err
	}
	z.rt = ft
	for i := 0; i < n; i++ {
		h, ll, err := b.hierarchicalLeaf(z, a, i)
		if err != nil {
			return err
		}
		node := &ftNode{id: i, level: 0, position: b.ftPosition, limiter: ll.limiter, loopback: ll.loopback,
			parents: make([]*ftLink, up[0]*count[0]), label: make([]int, levels)}
		b.ftPosition++
		ft.nodes = append(ft.nodes, node)
		for len(ft.compute) <= h.np.id {
			ft.compute = append(ft.compute, nil)
		}
		ft.compute[h.np.id] = node
	}
	if err := b.fatTreeSwitches(ft, a); err != nil {
		return err
	}
	ft.labels()
	k := 0
	for i := 0; i < levels; i++ {
		for j := 0; j < ft.nodesByLevel[i]; j++ {
			if err := b.fatTreeConnect(ft, a, ft.nodes[k]); err != nil {
				return err
			}
			k++
		}
	}
	return nil
}

func (b *builder) fatTreeSwitches(ft *fatTreeZone, a *clusterArgs) error {
	k := 2 * len(ft.nodes)
	for i := 0; i < ft.levels; i++ {
		for j := 0; j < ft.nodesByLevel[i+1]; j++ {
			k--
			lim, err := b.limiter(a, k)
			if err != nil {
				return fmt.Errorf("%v: SimGrid 3.32 names switch limiters by switch number (here %d), which collides with a host's limiter; it aborts too", err, k)
			}
			node := &ftNode{id: k, level: i + 1, position: j, limiter: lim, label: make([]int, ft.levels),
				children: make([]*ftLink, ft.down[i]*ft.count[i])}
			if i != ft.levels-1 {
				node.parents = make([]*ftLink, ft.up[i+1]*ft.count[i+1])
			}
			ft.nodes = append(ft.nodes, node)
		}
	}
	return nil
}

// labels mirrors generate_labels: a mixed-radix counter per level.
func (ft *fatTreeZone) labels() {
	k := 0
	max := make([]int, ft.levels)
	cur := make([]int, ft.levels)
	for i := 0; i <= ft.levels; i++ {
		for j := range cur {
			cur[j] = 0
			if j+1 > i {
				max[j] = ft.down[j]
			} else {
				max[j] = ft.up[j]
			}
		}
		for j := 0; j < ft.nodesByLevel[i]; j++ {
			copy(ft.nodes[k].label, cur)
			for pos := 0; pos < ft.levels; {
				cur[pos]++
				if cur[pos] < max[pos] {
					break
				}
				cur[pos] = 0
				pos++
			}
			k++
		}
	}
}

func (ft *fatTreeZone) related(parent, child *ftNode) bool {
	if parent.level != child.level+1 {
		return false
	}
	for i := 0; i < ft.levels; i++ {
		if parent.label[i] != child.label[i] && i+1 != parent.level {
			return false
		}
	}
	return true
}

// fatTreeConnect mirrors connect_node_to_parents and add_link.
func (b *builder) fatTreeConnect(ft *fatTreeZone, a *clusterArgs, node *ftNode) error {
	first := 0
	for i := 0; i <= node.level; i++ {
		first += ft.nodesByLevel[i]
	}
	lvl := node.level
	for i := 0; i < ft.nodesByLevel[lvl+1]; i++ {
		parent := ft.nodes[first+i]
		if !ft.related(parent, node) {
			continue
		}
		for j := 0; j < ft.count[lvl]; j++ {
			name := "link_from_" + strconv.Itoa(node.id) + "_" + strconv.Itoa(parent.id) + "_" + strconv.Itoa(b.ftLinkID)
			up, down, err := b.privateLink(name, a)
			if err != nil {
				return err
			}
			b.ftLinkID++
			l := &ftLink{upNode: parent, downNode: node, up: up, down: down}
			pp := node.label[lvl] + j*ft.down[lvl]
			cp := parent.label[lvl] + j*ft.up[lvl]
			if pp >= len(parent.children) || cp >= len(node.parents) {
				return fmt.Errorf("fat tree %q: inconsistent port numbers", a.topoParams)
			}
			parent.children[pp] = l
			node.parents[cp] = l
		}
	}
	return nil
}

func (ft *fatTreeZone) inSubTree(root, node *ftNode) bool {
	if root.level <= node.level {
		return false
	}
	for i := 0; i < node.level; i++ {
		if root.label[i] != node.label[i] {
			return false
		}
	}
	for i := root.level; i < ft.levels; i++ {
		if root.label[i] != node.label[i] {
			return false
		}
	}
	return true
}

func (ft *fatTreeZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	if src.kind != npHost || dst.kind != npHost {
		return links, nil, nil, nil
	}
	source, destination := ft.compute[src.id], ft.compute[dst.id]
	if source == destination && source.loopback != nil {
		return addLinks(links, lat, source.loopback), nil, nil, nil
	}
	broken := fmt.Errorf("fat tree: no route from %s to %s (inconsistent topology)", src.name, dst.name)
	cur := source
	for !ft.inSubTree(cur, destination) {
		d := destination.position
		for i := 0; i < cur.level; i++ {
			d /= ft.up[i]
		}
		if cur.level >= ft.levels {
			return nil, nil, nil, broken
		}
		d %= ft.up[cur.level] * ft.count[cur.level]
		if cur.limiter != nil {
			links = append(links, cur.limiter)
		}
		if d >= len(cur.parents) || cur.parents[d] == nil {
			return nil, nil, nil, broken
		}
		links = addLinks(links, lat, cur.parents[d].up)
		cur = cur.parents[d].upNode
	}
	for cur != destination {
		before := cur
		d := source.position % ft.count[cur.level-1]
		// As in SimGrid, the scan goes on with the child once it has moved
		// down, which decides the parallel link taken at the next level.
		for i := d * ft.down[cur.level-1]; i < len(cur.children); i++ {
			if i%ft.down[cur.level-1] == destination.label[cur.level-1] {
				c := cur.children[i]
				if c == nil {
					return nil, nil, nil, broken
				}
				links = addLinks(links, lat, c.down)
				if cur.limiter != nil {
					links = append(links, cur.limiter)
				}
				cur = c.downNode
			}
		}
		if cur == before {
			return nil, nil, nil, broken
		}
	}
	if cur.limiter != nil {
		links = append(links, cur.limiter)
	}
	return links, nil, nil, nil
}
