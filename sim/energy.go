package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The energy model is SimGrid 3.32's host_energy plugin (--cfg
// plugin:host_energy): a host draws its Idle power while none of its cores
// computes, and Epsilon + load x (AllCores - Epsilon) while they do, load
// being the share of the host's flop rate (all cores) that its
// computations get. Energy is the integral of that power over the run,
// from 0 until the last rank ends. Communication and waiting draw
// the idle power: SMPI puts no load on the CPU for them.

// PowerRange is a host's power draw in watts in one pstate: Idle with
// nothing computing, Epsilon with computations at a load close to 0, and
// AllCores with every core busy.
type PowerRange struct {
	Idle, Epsilon, AllCores float64
}

// ParseWattage reads SimGrid's wattage_per_state host property: one
// "Idle:AllCores" or "Idle:Epsilon:AllCores" range per pstate, separated
// by commas; with two values, Epsilon is Idle.
func ParseWattage(s string, pstates int) ([]PowerRange, error) {
	parts := strings.Split(s, ",")
	if len(parts) != pstates {
		return nil, fmt.Errorf("%d power ranges for %d pstates (one \"Idle:Epsilon:AllCores\" per speed of the host)", len(parts), pstates)
	}
	out := make([]PowerRange, len(parts))
	for i, part := range parts {
		vals := strings.Split(part, ":")
		if len(vals) != 2 && len(vals) != 3 {
			return nil, fmt.Errorf("pstate %d: %q is not \"Idle:AllCores\" nor \"Idle:Epsilon:AllCores\"", i, part)
		}
		w := make([]float64, len(vals))
		for j, v := range vals {
			// As xbt_str_parse_double: leading blanks, then a number
			// that ends the field.
			x, err := strconv.ParseFloat(strings.TrimLeft(v, " \t\n"), 64)
			if err != nil {
				return nil, fmt.Errorf("pstate %d: %q is not a number of watts", i, v)
			}
			w[j] = x
		}
		if len(w) == 2 {
			w = []float64{w[0], w[0], w[1]}
		}
		out[i] = PowerRange{Idle: w[0], Epsilon: w[1], AllCores: w[2]}
	}
	return out, nil
}

// Energy is what the energy model says of a run.
type Energy struct {
	// Total is the energy of every host of the machine, in joules; Used
	// that of the hosts that computed.
	Total, Used float64
	// Hosts holds every host's energy, in the machine's host order.
	Hosts []HostEnergy
}

// HostEnergy is one host's energy in joules, and whether it computed.
type HostEnergy struct {
	Host   string
	Joules float64
	Used   bool
}

// hostEnergy is a host's energy so far, updated lazily as SimGrid's
// plugin does: when a computation starts on the host (before it takes its
// share), and, if time passed since the last update, when a CPU action of
// the host changes state: a computation ends (while it still has its
// share), a sleep ends, a blocking wait starts (SimGrid's endless sleep
// for it is marked ignored at once); and at the end. SimGrid's plugin
// starts every host in pstate 0 and reads the host's actual pstate at the
// first update: a host in another pstate draws pstate 0's power until
// then (the whole run if none comes). Kairos does the same.
type hostEnergy struct {
	power       []PowerRange // nil: without wattage_per_state, SimGrid counts 0 W
	pstate      int          // the one the host runs in
	cur         int          // the one counted
	total, last float64
	used        bool
}

// energyStateChange is the update on a change of state of one of the
// host's CPU actions, which SimGrid's plugin makes only if time passed.
func (s *simulation) energyStateChange(h *hostState, at float64) {
	if h.energy.last < at {
		s.energyUpdate(h, at)
	}
}

// energyUpdate adds the host's energy from its last update to date at,
// at the power of its current load, and reads the host's pstate.
func (s *simulation) energyUpdate(h *hostState, at float64) {
	e := h.energy
	if e.last < at {
		e.total += s.power(h) * (at - e.last)
		e.last = at
	}
	e.cur = e.pstate
}

// power is the host's power draw in watts now, in the pstate counted.
func (s *simulation) power(h *hostState) float64 {
	e := h.energy
	load := 0.0
	for _, a := range h.execs {
		load += a.v.Value()
	}
	load /= h.speed
	load /= float64(h.cores)
	load = min(load, 1)
	if load > 0 {
		e.used = true
	}
	switch {
	case e.power == nil:
		return 0
	case load > 0:
		p := e.power[e.cur]
		return p.Epsilon + load*(p.AllCores-p.Epsilon)
	}
	return e.power[e.cur].Idle
}

// execStarted and execEnded keep the host's list of computations, updating
// its energy first.
func (s *simulation) execStarted(h *hostState, a *action) {
	if h.energy != nil {
		s.energyUpdate(h, s.now)
	}
	h.execs = append(h.execs, a)
}

func (s *simulation) execEnded(h *hostState, a *action) {
	if h.energy != nil {
		s.energyStateChange(h, s.now)
	}
	for i, x := range h.execs {
		if x == a {
			h.execs = append(h.execs[:i], h.execs[i+1:]...)
			break
		}
	}
}

// initEnergy sets up the energy model of every host, or says which host's
// power description is wrong.
func (s *simulation) initEnergy() error {
	for i := range s.hosts {
		mh := &s.m.Hosts[i]
		if mh.PowerErr != nil {
			return fmt.Errorf("sim: host %s: %w", mh.Name, mh.PowerErr)
		}
		if mh.Power != nil && (mh.PState < 0 || mh.PState >= len(mh.Power)) {
			return fmt.Errorf("sim: host %s: pstate %d has no power range (%d given)", mh.Name, mh.PState, len(mh.Power))
		}
		s.hosts[i].energy = &hostEnergy{power: mh.Power, pstate: mh.PState}
	}
	return nil
}

// energy ends every host's account when the last rank ends (SimGrid's
// simulation ends with its last actor, whatever detached messages are
// still on their way) and sums them, over the hosts sorted by name as
// SimGrid does.
func (s *simulation) energy() *Energy {
	end := 0.0
	for _, r := range s.ranks {
		end = max(end, r.res.Finish)
	}
	out := &Energy{Hosts: make([]HostEnergy, len(s.hosts))}
	order := make([]int, len(s.hosts))
	for i := range s.hosts {
		h := &s.hosts[i]
		s.energyStateChange(h, end)
		out.Hosts[i] = HostEnergy{Host: s.m.Hosts[i].Name, Joules: h.energy.total, Used: h.energy.used}
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return out.Hosts[order[a]].Host < out.Hosts[order[b]].Host })
	for _, i := range order {
		out.Total += out.Hosts[i].Joules
		if out.Hosts[i].Used {
			out.Used += out.Hosts[i].Joules
		}
	}
	return out
}
