package sim

import (
	"fmt"
	"sort"

	"kairos/platform"
	"kairos/trace"
)

// FromPlatform builds the Machine of a parsed platform with rank i on
// hosts[i] (a deployment, see platform.Deploy).
func FromPlatform(p *platform.Platform, hosts []*platform.Host) (*Machine, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("sim: no host to run on")
	}
	m := &Machine{RankHost: make([]int, len(hosts)),
		Hosts: make([]MachineHost, 0, len(p.Hosts)), Links: make([]MachineLink, 0, len(p.Links))}
	for _, h := range p.Hosts {
		mh := MachineHost{Name: h.Name, Speed: h.Speed, Cores: h.Cores}
		for _, prop := range []struct {
			key string
			o   *Overhead
		}{{"smpi/os", &mh.SendOverhead}, {"smpi/ois", &mh.ISendOverhead}, {"smpi/or", &mh.RecvOverhead}} {
			key, o := prop.key, prop.o
			if v, ok := h.Props[key]; ok {
				var err error
				if *o, err = ParseOverhead(v); err != nil {
					return nil, fmt.Errorf("sim: %w", &platform.Error{File: p.Name, Line: h.PropLines[key], Elem: "prop", Attr: "value",
						Err: fmt.Errorf("host %s: property %s: %v", h.Name, key, err)})
				}
				if *o == nil {
					*o = Overhead{} // set, and zero
				}
			}
		}
		if v, ok := h.Props["wattage_per_state"]; ok {
			if ranges, err := ParseWattage(v, h.PStates); err != nil {
				mh.PowerErr = &platform.Error{File: p.Name, Line: h.PropLines["wattage_per_state"], Elem: "prop", Attr: "value",
					Err: fmt.Errorf("host %s: property wattage_per_state: %v", h.Name, err)}
			} else {
				mh.Power = ranges
			}
		}
		mh.PState = h.PState
		mh.SpeedProfile = h.SpeedProfile
		m.Hosts = append(m.Hosts, mh)
	}
	for _, l := range p.Links {
		ml := MachineLink{Name: l.Name, Bandwidth: l.Bandwidth, Latency: l.Latency, FatPipe: l.Sharing == platform.FatPipe,
			BandwidthProfile: l.BandwidthProfile, LatencyProfile: l.LatencyProfile}
		for _, key := range []string{"wattage_range", "watt_range"} { // the second, deprecated, only without the first
			if v, ok := l.Props[key]; ok {
				var err error
				if ml.IdleWatts, ml.BusyWatts, err = ParseWattageRange(v); err != nil {
					ml.PowerErr = &platform.Error{File: p.Name, Line: l.PropLines[key], Elem: "prop", Attr: "value",
						Err: fmt.Errorf("link %s: property %s: %v", l.Name, key, err)}
				}
				break
			}
		}
		m.Links = append(m.Links, ml)
	}
	for i, h := range hosts {
		if h == nil || h.Index < 0 || h.Index >= len(p.Hosts) || p.Hosts[h.Index] != h {
			return nil, fmt.Errorf("sim: rank %d: host is not in platform %s", i, p.Name)
		}
		m.RankHost[i] = h.Index
	}
	m.Route = func(src, dst int) ([]int, float64, error) {
		links, lat, err := p.RouteOnce(p.Hosts[src], p.Hosts[dst]) // s.route keeps it
		if err != nil {
			return nil, 0, err
		}
		idx := make([]int, len(links))
		for i, l := range links {
			idx[i] = l.Index
		}
		return idx, lat, nil
	}
	m.RouteAppend = func(buf []int, src, dst int) ([]int, float64, error) {
		return p.RouteAppend(buf, p.Hosts[src], p.Hosts[dst])
	}
	m.RouteLatency = func(src, dst int) []LatencyTerm {
		terms := p.RouteLatency(p.Hosts[src], p.Hosts[dst])
		out := make([]LatencyTerm, len(terms))
		for i, t := range terms {
			out[i] = LatencyTerm{Link: -1, Fixed: t.Fixed}
			if t.Link != nil {
				out[i].Link = t.Link.Index
			}
		}
		return out
	}
	return m, nil
}

// ApplyPlatformConfig applies the settings of p's <config> element to
// cfg, as SimGrid does, except those whose keys are in given: settings
// given on the command line win, and so do those smpirun always gives
// (network/model, surf/precision).
func ApplyPlatformConfig(cfg *Config, p *platform.Platform, given map[string]bool) error {
	keys := make([]string, 0, len(p.Config))
	for k := range p.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if given[k] || platform.IsPlatformSetting(k) || smpirunSettings[k] {
			continue
		}
		if err := cfg.Set(k, p.Config[k]); err != nil {
			return &platform.Error{File: p.Name, Line: p.ConfigLines[k], Elem: "prop", Attr: "value", Err: fmt.Errorf("<config>: %w", err)}
		}
	}
	return nil
}

// smpirunSettings are the settings smpirun puts on SimGrid's command line
// (besides smpi/privatization, which a replay ignores).
var smpirunSettings = map[string]bool{"network/model": true, "surf/precision": true}

// Simulate replays src on platform p with smpirun's deployment: rank i on
// hostnames[i mod len] (all of p's hosts, in SimGrid's order, when
// hostnames is empty). It is Run for callers that hold a platform.
func Simulate(src trace.Source, p *platform.Platform, hostnames []string, cfg Config, obs Observer) (*Result, error) {
	hosts, err := platform.Deploy(p, hostnames, src.NumRanks(), platform.RoundRobin)
	if err != nil {
		return nil, err
	}
	m, err := FromPlatform(p, hosts)
	if err != nil {
		return nil, err
	}
	return Run(src, m, cfg, obs)
}
