package sim

import (
	"errors"
	"fmt"

	"kairos/platform"
)

// Profiles change resources over time, as SimGrid 3.32's future event set
// does: when the next action event is due, the profile events due no
// later are applied first, each at its own date, and those of date 0
// before any rank starts (presolve). A host's speed profile
// (speed_file, or <trace_connect kind="SPEED">) scales its speed; the new
// speed bounds the host's CPU and each computation on it from the next
// re-solve on; SimGrid counts a CPU as always in use, so each event cuts
// the time advance there. A link's bandwidth and latency profiles
// (bandwidth_file, latency_file, kinds BANDWIDTH and LATENCY) set its
// values (see linkprofile.go); an event on a link no flow uses does not
// cut the time advance. Simultaneous events are applied hosts first, in
// host order, then links, in link order; SimGrid's order there follows the
// addresses of its event records, which decides, where probes or tests
// share SMPI's back-off counters, the times.

// profileState is a resource's position in its profile.
type profileState struct {
	p    *platform.Profile
	next int     // index of the next event
	date float64 // of the next event; < 0 when none is left
}

// initProfiles schedules every host's first profile event, or says which
// profile would repeat without time passing.
func (s *simulation) initProfiles() error {
	for i := range s.m.Hosts {
		p := s.m.Hosts[i].SpeedProfile
		if p == nil || len(p.Events) == 0 {
			continue
		}
		if err := checkPeriod(p); err != nil {
			return fmt.Errorf("sim: host %s: its speed profile %w", s.m.Hosts[i].Name, err)
		}
		h := &s.hosts[i]
		h.prof = profileState{p: p, date: p.Events[0].Delay}
		h.track = true
		s.profiled = append(s.profiled, h)
	}
	return nil
}

// checkPeriod says if p would repeat without time passing.
func checkPeriod(p *platform.Profile) error {
	if p.Repeat < 0 {
		return nil
	}
	period := p.Repeat
	for _, e := range p.Events {
		period += e.Delay
	}
	if !(period > 0) {
		return errors.New("repeats without time passing")
	}
	return nil
}

// nextProfile returns the pending profile event with the earliest date,
// and the host or link it is for (see the order above), or nil.
func (s *simulation) nextProfile() (ps *profileState, h *hostState, l *linkProfile) {
	for _, hh := range s.profiled {
		if hh.prof.date >= 0 && (ps == nil || hh.prof.date < ps.date) {
			ps, h = &hh.prof, hh
		}
	}
	for _, ll := range s.linkProfs {
		if ll.prof.date >= 0 && (ps == nil || ll.prof.date < ps.date) {
			ps, h, l = &ll.prof, nil, ll
		}
	}
	return ps, h, l
}

// pop returns the value of h's due event and schedules its next one
// (Profile::next).
func (ps *profileState) pop() float64 {
	ev := ps.p.Events[ps.next]
	ps.next++
	wrap := 0.0
	if ps.next == len(ps.p.Events) {
		if ps.p.Repeat < 0 {
			ps.date = -1
			return ev.Value
		}
		ps.next = 0
		wrap = ps.p.Repeat
	}
	// SimGrid adds the loop delay to the first event's delay, then that
	// to the date: rounded so, the dates of repeated events tie (or not)
	// with other events' as in SimGrid.
	ps.date += ps.p.Events[ps.next].Delay + wrap
	return ev.Value
}

// presolve applies the profile events of date 0 before any rank starts,
// as SimGrid's EngineImpl::presolve does.
func (s *simulation) presolve() {
	for {
		ps, h, l := s.nextProfile()
		if ps == nil || ps.date > s.now {
			return
		}
		at := ps.date
		if v := ps.pop(); v >= 0 {
			s.applyProfile(h, l, v, at)
		}
	}
}

// applyProfile applies value v of a profile event of date at to host h,
// or to link l.
func (s *simulation) applyProfile(h *hostState, l *linkProfile, v, at float64) {
	if h != nil {
		s.setSpeedScale(h, v, at)
	} else {
		s.setLinkValue(l, v, at)
	}
}

// profileEvents applies the profile events due by the next action event,
// delta from now (EngineImpl::solve), and returns the step time advances
// by: to the first of them on a resource in use, if it comes first.
func (s *simulation) profileEvents(delta float64) float64 {
	for {
		ps, h, l := s.nextProfile()
		if ps == nil || ps.date > s.now+delta {
			return delta
		}
		at := ps.date
		for ps != nil && ps.date <= at {
			if v := ps.pop(); v >= 0 {
				if h != nil || s.links[l.link].Used() {
					delta = at - s.now // a CPU always counts as used
				}
				s.applyProfile(h, l, v, at)
			}
			ps, h, l = s.nextProfile()
		}
	}
}

// setSpeedScale applies a speed profile value to h at date at
// (CpuCas01::apply_event).
func (s *simulation) setSpeedScale(h *hostState, v, at float64) {
	h.scale = v
	s.cpuSys.SetConstraintBound(h.cpu, float64(h.cores)*h.scale*h.speed)
	for _, a := range h.execs {
		s.cpuSys.SetBound(a.v, h.execBound(a.userBound))
	}
	if h.energy != nil {
		s.energyUpdate(h, at) // the plugin sees the speed change
	}
}
