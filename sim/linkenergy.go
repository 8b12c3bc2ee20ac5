package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// The link energy model is SimGrid 3.32's link_energy plugin (--cfg
// plugin:link_energy): a link with a wattage_range property "IDLE:BUSY"
// draws IDLE + (BUSY - IDLE) x usage / bandwidth watts, usage being the
// rate its flows carry (cross-traffic included). As SimGrid's, the energy
// is integrated lazily: when a transfer starts or ends, every link of its
// flow (forward and reverse routes) adds the power of its current usage
// since its last update; and at the end. The usage of a link between two
// such updates is taken as the one at the second, so rates changed by
// transfers on other links are counted from the next update, exactly as
// SimGrid counts them.

// ParseWattageRange reads SimGrid's wattage_range link property:
// "IDLE:BUSY" watts (several comma-separated ranges: the last counts).
func ParseWattageRange(s string) (idle, busy float64, err error) {
	for _, part := range strings.Split(s, ",") {
		vals := strings.Split(part, ":")
		if len(vals) != 2 {
			return 0, 0, fmt.Errorf("%q is not \"IDLE:BUSY\" watts", part)
		}
		if idle, err = strconv.ParseFloat(strings.TrimSpace(vals[0]), 64); err != nil {
			return 0, 0, fmt.Errorf("%q: idle power %q is not a number", part, vals[0])
		}
		if busy, err = strconv.ParseFloat(strings.TrimSpace(vals[1]), 64); err != nil {
			return 0, 0, fmt.Errorf("%q: busy power %q is not a number", part, vals[1])
		}
	}
	return idle, busy, nil
}

// LinkEnergy is what the link energy model says of a run.
type LinkEnergy struct {
	// Total is the energy of every link, in joules.
	Total float64
	// Links holds each link's energy, in the machine's link order (the
	// implicit loopback left out, as SimGrid leaves it).
	Links []LinkJoules
}

// LinkJoules is one link's energy.
type LinkJoules struct {
	Link   string
	Joules float64
}

// linkEnergy is a link's energy so far.
type linkEnergy struct {
	idle, busy  float64
	total, last float64
}

// initLinkEnergy reads every link's power range, or says which is wrong.
func (s *simulation) initLinkEnergy() error {
	s.linkEnergy = make([]linkEnergy, len(s.m.Links))
	for i, l := range s.m.Links {
		if l.PowerErr != nil {
			return fmt.Errorf("sim: link %s: %w", l.Name, l.PowerErr)
		}
		s.linkEnergy[i].idle, s.linkEnergy[i].busy = l.IdleWatts, l.BusyWatts
	}
	return nil
}

// linkUpdate adds link i's energy from its last update to date at
// (LinkEnergy::update).
func (s *simulation) linkUpdate(i int32, at float64) {
	e := &s.linkEnergy[i]
	bw := s.m.Links[i].Bandwidth
	if s.linkBw != nil {
		bw = s.linkBw[i] // SimGrid's plugin sees a bandwidth change at the next update
	}
	w := e.idle + (e.busy-e.idle)*(s.links[i].Usage()/bw)
	e.total += w * (at - e.last)
	e.last = at
}

// flowLinksUpdate updates the links of a transfer's flow, as SimGrid does
// when a communication starts or completes.
func (s *simulation) flowLinksUpdate(rt *route) {
	for _, i := range rt.idx {
		s.linkUpdate(i, s.now)
	}
}

// linkEnergyReport ends every link's account when the last rank ends and
// sums them.
func (s *simulation) linkEnergyReport() *LinkEnergy {
	end := 0.0
	for _, r := range s.ranks {
		end = max(end, r.res.Finish)
	}
	out := &LinkEnergy{}
	for i, l := range s.m.Links {
		if l.Name == "__loopback__" {
			continue
		}
		if s.linkEnergy[i].last < end {
			s.linkUpdate(int32(i), end)
		}
		out.Links = append(out.Links, LinkJoules{Link: l.Name, Joules: s.linkEnergy[i].total})
		out.Total += s.linkEnergy[i].total
	}
	return out
}
