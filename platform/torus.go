package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// torusZone is SimGrid's TorusZone: hosts on a wrap-around grid, routed
// dimension by dimension (x first) in the shorter direction.
type torusZone struct {
	dims  []int
	nodes []torusNode // by rank (= vertex id)
}

type torusNode struct {
	leafLinks
	up, down []*Link // per dimension: link to the next node in that dimension
}

func parseTorus(params string) ([]int, error) {
	var dims []int
	total := 1
	for _, s := range strings.Split(params, ",") {
		d, err := cInt(s)
		if err != nil {
			return nil, fmt.Errorf("torus dimensions %q: %v (expected \"X,Y,Z...\")", params, err)
		}
		if d <= 0 {
			return nil, fmt.Errorf("torus dimensions %q: each value must be > 0", params)
		}
		total *= d
		if total > 1<<22 {
			return nil, fmt.Errorf("torus dimensions %q: too many nodes", params)
		}
		dims = append(dims, d)
	}
	return dims, nil
}

func product(v []int) int {
	n := 1
	for _, x := range v {
		n *= x
	}
	return n
}

// torusCluster mirrors create_torus_zone: node i gets, per dimension j, the
// link "<id>_link_from_<i>_to_<neighbour>" towards its successor.
func (b *builder) torusCluster(a *clusterArgs) error {
	dims, err := parseTorus(a.topoParams)
	if err != nil {
		return err
	}
	n := product(dims)
	if err := b.checkHierarchical(a, "TORUS", n); err != nil {
		return err
	}
	z, err := b.newZone(a.id)
	if err != nil {
		return err
	}
	t := &torusZone{dims: dims, nodes: make([]torusNode, n)}
	z.rt = t
	for i := 0; i < n; i++ {
		h, ll, err := b.hierarchicalLeaf(z, a, i)
		if err != nil {
			return err
		}
		node := &t.nodes[h.np.id]
		node.leafLinks = ll
		dimProduct := 1
		for _, d := range dims {
			neighbour := i + dimProduct
			if (i/dimProduct)%d == d-1 {
				neighbour = i - (d-1)*dimProduct
			}
			name := a.id + "_link_from_" + strconv.Itoa(h.np.id) + "_to_" + strconv.Itoa(neighbour)
			up, down, err := b.privateLink(name, a)
			if err != nil {
				return err
			}
			node.up = append(node.up, up)
			node.down = append(node.down, down)
			dimProduct *= d
		}
	}
	return nil
}

func (t *torusZone) local(src, dst *netpoint, links []*Link, lat *latency) ([]*Link, *netpoint, *netpoint, error) {
	if src.kind != npHost || dst.kind != npHost {
		return links, nil, nil, nil
	}
	s, d := src.id, dst.id
	if s == d && t.nodes[s].loopback != nil {
		return addLinks(links, lat, t.nodes[s].loopback), nil, nil, nil
	}
	n := len(t.dims)
	var myBuf, targetBuf [8]int
	my, target := myBuf[:0], targetBuf[:0]
	if n > len(myBuf) {
		my, target = make([]int, 0, n), make([]int, 0, n)
	}
	my, target = my[:n], target[:n]
	prod := 1
	for i, dim := range t.dims {
		my[i] = (s / prod) % dim
		target[i] = (d / prod) % dim
		prod *= dim
	}
	cur := s
	for cur != d {
		next, lnk := 0, (*Link)(nil)
		dimProduct := 1
		for j, dim := range t.dims {
			if (cur/dimProduct)%dim != (d/dimProduct)%dim {
				right := (target[j] > my[j] && target[j] <= my[j]+dim/2) ||
					(my[j] > dim/2 && (my[j]+dim/2)%dim >= target[j])
				if right {
					if (cur/dimProduct)%dim == dim-1 {
						next = cur + dimProduct - dimProduct*dim
					} else {
						next = cur + dimProduct
					}
					lnk = t.nodes[cur].up[j]
				} else {
					if (cur/dimProduct)%dim == 0 {
						next = cur - dimProduct + dimProduct*dim
					} else {
						next = cur - dimProduct
					}
					lnk = t.nodes[next].down[j]
				}
				break
			}
			dimProduct *= dim
		}
		if l := t.nodes[cur].limiter; l != nil { // limiters add no latency in SimGrid
			links = append(links, l)
		}
		links = addLinks(links, lat, lnk)
		cur = next
	}
	if l := t.nodes[d].limiter; l != nil {
		links = append(links, l)
	}
	return links, nil, nil, nil
}
