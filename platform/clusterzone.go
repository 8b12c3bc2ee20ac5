package platform

import (
	"fmt"
	"strconv"
)

// A <zone routing="Cluster"> is a star built by hand: SimGrid 3.32 makes it
// a StarZone and, when the zone closes (sg_platf_zone_cluster_populate),
// creates its <backbone>, joins each <host_link>'s host to the star through
// its up and down links, and creates each <cabinet>'s hosts with their
// links. Every host route goes up its link then through the backbone, and
// comes down the backbone then its link; the backbone is crossed once.

// clusterZoneArgs are what a Cluster zone's elements declare, kept until the
// zone closes, each with its line for errors.
type clusterZoneArgs struct {
	backbone  *backboneArgs
	hostLinks []hostLinkArgs
	cabinets  []cabinetArgs
}

type backboneArgs struct {
	id      string
	bw, lat float64
	line    int
}

type hostLinkArgs struct {
	host, up, down string
	line           int
}

type cabinetArgs struct {
	id, prefix, suffix string
	radicals           []int
	speed, bw, lat     float64
	line               int
}

// zoneError is a problem in a Cluster zone's element, at its line.
type zoneError struct {
	elem string
	line int
	attr string
	err  error
}

func (e *zoneError) Error() string { return e.err.Error() }

// populateClusterZone does what SimGrid does when a Cluster zone closes, in
// its order: the backbone, then the host links, then the cabinets.
func (b *builder) populateClusterZone(z *zone, star *starZone, a *clusterZoneArgs) error {
	var bb *Link
	if a.backbone != nil {
		var err error
		if bb, err = b.newLink(a.backbone.id, a.backbone.bw, a.backbone.lat, Shared); err != nil {
			return &zoneError{"backbone", a.backbone.line, "id", err}
		}
	}
	for _, hl := range a.hostLinks {
		if err := b.hostLink(z, star, hl, bb); err != nil {
			return err
		}
	}
	for _, c := range a.cabinets {
		for _, r := range c.radicals {
			name := c.prefix + strconv.Itoa(r) + c.suffix
			h, err := b.newHost(z, name, c.speed, 1, props{})
			if err != nil {
				return &zoneError{"cabinet", c.line, "radical", err}
			}
			up, err := b.newLink("link_"+name+"_UP", c.bw, c.lat, Shared)
			if err != nil {
				return &zoneError{"cabinet", c.line, "radical", err}
			}
			down, err := b.newLink("link_"+name+"_DOWN", c.bw, c.lat, Shared)
			if err != nil {
				return &zoneError{"cabinet", c.line, "radical", err}
			}
			star.setHostLinks(h.np, up, down, bb)
		}
	}
	return nil
}

// hostLink joins a host of the zone to the star (sg_platf_build_hostlink).
func (b *builder) hostLink(z *zone, star *starZone, hl hostLinkArgs, bb *Link) error {
	np, ok := b.netpoints[hl.host]
	if !ok || np.kind != npHost {
		return &zoneError{"host_link", hl.line, "id", fmt.Errorf("no host %q", hl.host)}
	}
	if np.zone != z {
		return &zoneError{"host_link", hl.line, "id", fmt.Errorf("host %q is not in zone %s", hl.host, z.name)}
	}
	var ends [2]*Link
	for i, name := range []string{hl.up, hl.down} {
		l, ok := b.links[name]
		if !ok {
			err := fmt.Errorf("no such link %q", name)
			if _, dup := b.duplex[name]; dup {
				err = fmt.Errorf("link %q is SPLITDUPLEX: name one of its halves, %s_UP or %s_DOWN", name, name, name)
			}
			return &zoneError{"host_link", hl.line, []string{"up", "down"}[i], err}
		}
		ends[i] = l
	}
	star.setHostLinks(np, ends[0], ends[1], bb)
	return nil
}

// setHostLinks sets a vertex's routes to and from the center
// (sg_platf_cluster_set_hostlink); a later call replaces an earlier one.
func (s *starZone) setHostLinks(np *netpoint, up, down, backbone *Link) {
	n := s.node(np.id)
	n.noUp, n.noDown = false, false
	if backbone != nil {
		n.up, n.down = []*Link{up, backbone}, []*Link{backbone, down}
	} else {
		n.up, n.down = []*Link{up}, []*Link{down}
	}
}

// addRoute takes the only <route> a StarZone accepts from XML: a loopback.
func (s *starZone) addRoute(src, dst *netpoint, refs []linkRef, _, _ *netpoint, _ bool) error {
	if src != dst {
		return fmt.Errorf("a routing=\"Cluster\" zone takes only loopback routes (src = dst), not %s to %s: its hosts are joined by <host_link> or <cabinet>", src.name, dst.name)
	}
	n := s.node(src.id)
	if !n.hasLoopback && len(n.up) == 0 && len(n.down) == 0 {
		n.noUp, n.noDown = true, true
	}
	n.loopback, n.hasLoopback = resolve(refs, false), true
	return nil
}
