package sim

import (
	"fmt"

	"kairos/platform"
)

// Speed profiles (a host's speed_file, or <trace_connect kind="SPEED">)
// scale a host's speed over time, as SimGrid 3.32's future event set
// does: when the next action event is due, the profile events due no
// later are applied first, each at its own date, and cut the time advance
// there (SimGrid counts a CPU as always in use). The new speed bounds the
// host's CPU and each computation on it from the next re-solve on.
// Simultaneous events on several hosts are applied in host order;
// SimGrid's order there follows the order in which its hash tables hand
// out the profiles, which decides, where probes or tests share SMPI's
// back-off counters, the times.

// profileState is a host's position in its speed profile.
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
		if p.Repeat >= 0 {
			period := p.Repeat
			for _, e := range p.Events {
				period += e.Delay
			}
			if !(period > 0) {
				return fmt.Errorf("sim: host %s: its speed profile repeats without time passing", s.m.Hosts[i].Name)
			}
		}
		h := &s.hosts[i]
		h.prof = profileState{p: p, date: p.Events[0].Delay}
		h.track = true
		s.profiled = append(s.profiled, h)
	}
	return nil
}

// nextProfileHost returns the host with the earliest pending profile
// event (the first in host order among equal dates), or nil.
func (s *simulation) nextProfileHost() *hostState {
	var best *hostState
	for _, h := range s.profiled {
		if h.prof.date >= 0 && (best == nil || h.prof.date < best.prof.date) {
			best = h
		}
	}
	return best
}

// pop returns the value of h's due event and schedules its next one
// (Profile::next).
func (ps *profileState) pop() float64 {
	ev := ps.p.Events[ps.next]
	date := ps.date
	ps.next++
	if ps.next == len(ps.p.Events) {
		if ps.p.Repeat < 0 {
			ps.date = -1
			return ev.Value
		}
		ps.next = 0
		date += ps.p.Repeat
	}
	ps.date = date + ps.p.Events[ps.next].Delay
	return ev.Value
}

// profileEvents applies the profile events due by the next action event at
// date next (EngineImpl::solve) and returns the date time advances to.
func (s *simulation) profileEvents(next float64) float64 {
	delta := next - s.now
	for {
		h := s.nextProfileHost()
		if h == nil || h.prof.date > s.now+delta {
			return s.now + delta
		}
		at := h.prof.date
		for h != nil && h.prof.date <= at {
			if v := h.prof.pop(); v >= 0 {
				delta = at - s.now // a CPU always counts as used
				s.setSpeedScale(h, v, at)
			}
			h = s.nextProfileHost()
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
