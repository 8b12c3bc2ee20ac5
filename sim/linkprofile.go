package sim

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"kairos/sim/maxmin"
)

// Link profiles, as SimGrid 3.32's CM02 links apply them
// (NetworkCm02Link::set_bandwidth and set_latency). A bandwidth event sets
// the link's capacity and, with weight-S, moves the sharing penalty of
// every flow on the link by weight-S/new - weight-S/old; a latency event
// moves each flow's latency (and so its penalty) by the difference and
// bounds its rate anew by TCP-gamma / (2 x latency). New transfers take
// the links' current values. Flows are visited as SimGrid lists them: the
// enabled ones newest first, then those still paying their latency, in
// the order they started. Two SimGrid quirks are copied (Config.Compat,
// with SimGrid's own re-solves: see Run) and fixed without it. SimGrid
// sets the penalty of a flow paying its latency too, which enables it at
// once: it shares the bandwidth before its latency is paid, its latency
// end changes nothing, and it is rescheduled only when a later re-solve
// reports it, its transfer counted from then on (if nothing does, the
// replay stalls: SimGrid reports a deadlock; under network/optim:Full,
// whose steps count every transfer down, its latency too, it goes on
// from then). And SimGrid moves the penalty of the flows whose
// cross-traffic crosses the link as well, which can make it negative:
// SimGrid aborts, and so does Kairos.

// linkProfile is a link's bandwidth or latency profile in progress.
type linkProfile struct {
	link    int32
	latency bool // a latency profile (else bandwidth)
	prof    profileState
}

// initLinkProfiles schedules every link's first profile events and keeps
// the links' current values, or says which profile cannot be replayed.
func (s *simulation) initLinkProfiles() error {
	for i, l := range s.m.Links {
		for _, lat := range []bool{false, true} {
			p, what := l.BandwidthProfile, "bandwidth"
			if lat {
				p, what = l.LatencyProfile, "latency"
			}
			if p == nil || len(p.Events) == 0 {
				continue
			}
			err := checkPeriod(p)
			for _, e := range p.Events {
				if err == nil && !lat && e.Value == 0 {
					err = errors.New("has a bandwidth of 0") // negative values are skipped, as in SimGrid
				}
			}
			if err == nil && s.cfg.Model == ModelIB {
				err = errors.New("is not supported with network/model:IB")
			}
			if err != nil {
				return fmt.Errorf("sim: link %s: its %s profile %w", l.Name, what, err)
			}
			if s.linkBw == nil {
				s.linkBw, s.linkLat = make([]float64, len(s.m.Links)), make([]float64, len(s.m.Links))
				for j, m := range s.m.Links {
					s.linkBw[j], s.linkLat[j] = m.Bandwidth, m.Latency
				}
			}
			s.linkProfs = append(s.linkProfs, &linkProfile{link: int32(i), latency: lat, prof: profileState{p: p, date: p.Events[0].Delay}})
		}
	}
	return nil
}

// hasLinkProfiles reports whether a link of m has a bandwidth or latency
// profile.
func (m *Machine) hasLinkProfiles() bool {
	for _, l := range m.Links {
		if l.BandwidthProfile != nil || l.LatencyProfile != nil {
			return true
		}
	}
	return false
}

// setLinkValue applies a link profile's value v at date at.
func (s *simulation) setLinkValue(l *linkProfile, v, at float64) {
	i := l.link
	var delta float64
	if l.latency {
		delta = v - s.linkLat[i]
		s.linkLat[i] = v
	} else {
		old := s.linkBw[i]
		s.linkBw[i] = v
		if !s.cfg.Analytic {
			s.netSys.SetConstraintBound(s.links[i], v)
		}
		if s.weightS <= 0 {
			return
		}
		delta = s.weightS/v - s.weightS/old
	}
	if s.cfg.Analytic {
		return
	}
	for _, a := range s.flowsOn(i) {
		a.penalty += delta
		if l.latency {
			a.latCurrent += delta
			b := s.cfg.TCPGamma / (2 * a.latCurrent)
			if a.netBound >= 0 && !(b < a.netBound) {
				b = a.netBound
			}
			s.netSys.SetBound(a.v, b)
		}
		if !s.cfg.Compat && (a.v.Penalty() <= 0 || a.penalty <= 0) {
			// Enabled with its new penalty once its latency is paid; or
			// its latency and weight-S terms are gone, to rounding.
			continue
		}
		if a.penalty < 0 && s.err == nil {
			what := "bandwidth"
			if l.latency {
				what = "latency"
			}
			s.err = fmt.Errorf("sim: at %.9f s the %s profile of link %s makes a flow's sharing penalty negative, "+
				"where SimGrid 3.32 aborts (\"Variable penalty should not be negative!\": it moves the penalty of the flows whose "+
				"cross-traffic crosses the link too); --cfg kairos/simgrid-quirks:no moves only those of the flows crossing it", at, what, s.m.Links[i].Name)
			return
		}
		s.netSys.SetPenalty(a.v, a.penalty)
	}
}

// flowsOn lists the transfers with a flow on link i in SimGrid's order:
// the enabled ones newest first, then those paying their latency, oldest
// first. SimGrid lists the transfers whose cross-traffic crosses the link
// too; without its quirks, they are left out.
func (s *simulation) flowsOn(i int32) []*action {
	var vars []*maxmin.Variable
	vars = s.links[i].Enabled(vars)
	out := make([]*action, 0, len(vars))
	for _, v := range vars {
		if a := s.acts[v.ID]; s.cfg.Compat || s.crosses(a, i) {
			out = append(out, a)
		}
	}
	first := len(out)
	for _, a := range s.acts {
		if a == nil || a.kind != actComm || !a.inSystem || a.v.Penalty() > 0 {
			continue
		}
		rt := s.route(s.ranks[a.comm.src].host, s.ranks[a.comm.dst].host)
		if s.cfg.Compat && slices.Contains(rt.idx, i) || slices.Contains(rt.idx[:len(rt.links)], i) {
			out = append(out, a)
		}
	}
	slices.SortFunc(out[first:], func(a, b *action) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// crosses reports whether transfer a's forward route takes link i.
func (s *simulation) crosses(a *action, i int32) bool {
	rt := s.route(s.ranks[a.comm.src].host, s.ranks[a.comm.dst].host)
	return slices.Contains(rt.idx[:len(rt.links)], i)
}

// stalled reports whether a is a transfer that a link profile enabled
// before its latency was paid, out of the heap since.
func (s *simulation) stalled(a *action) bool {
	return a != nil && a.kind == actComm && a.inSystem && a.running && a.htype == hNone && a.v.Penalty() > 0
}

// stalledFlows counts the stalled transfers.
func (s *simulation) stalledFlows() int {
	n := 0
	for _, a := range s.acts {
		if len(s.linkProfs) > 0 && s.stalled(a) {
			n++
		}
	}
	return n
}

// stalledFlowCanResume reports whether a stalled transfer crosses a link
// whose profile has an event to come: that event reports it again, and
// SimGrid's ranks that poll for messages keep time going until then.
func (s *simulation) stalledFlowCanResume() bool {
	if len(s.linkProfs) == 0 || s.cfg.Analytic {
		return false
	}
	for _, a := range s.acts {
		if !s.stalled(a) {
			continue
		}
		rt := s.route(s.ranks[a.comm.src].host, s.ranks[a.comm.dst].host)
		for _, lp := range s.linkProfs {
			if lp.prof.date >= 0 && slices.Contains(rt.idx, lp.link) {
				return true
			}
		}
	}
	return false
}

// latencyTerms returns the addends of the latency of the route from host
// src to host dst through links fwd (the links in order if the machine
// does not say).
func (s *simulation) latencyTerms(src, dst int, fwd []int) []LatencyTerm {
	if s.m.RouteLatency != nil {
		return s.m.RouteLatency(src, dst)
	}
	terms := make([]LatencyTerm, len(fwd))
	for i, l := range fwd {
		terms[i] = LatencyTerm{Link: l}
	}
	return terms
}

// currentRoute returns a route's latency, smallest bandwidth and sharing
// penalty (see route) with the links' current values.
func (s *simulation) currentRoute(rt *route) (lat, minBw, penalty float64) {
	minBw = -1
	for _, t := range rt.lat {
		if t.Link >= 0 {
			lat += s.linkLat[t.Link]
		} else {
			lat += t.Fixed
		}
	}
	fwd := rt.idx[:len(rt.links)]
	for _, l := range fwd {
		if bw := s.linkBw[l]; minBw < 0 || bw < minBw {
			minBw = bw
		}
	}
	penalty = lat
	if s.weightS > 0 {
		for _, l := range fwd {
			penalty += s.weightS / s.linkBw[l]
		}
	}
	return lat, minBw, penalty
}
