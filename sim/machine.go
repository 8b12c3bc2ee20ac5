package sim

import "kairos/platform"

// Machine is the simulated machine as the simulator sees it: hosts, links
// and the routes between hosts. FromPlatform builds one from a parsed
// platform; tests build small ones by hand.
type Machine struct {
	Hosts []MachineHost
	Links []MachineLink
	// Route returns the links (indexes of Links) from host src to host
	// dst, in order, and the route's latency, or why there is none. It is
	// called once per ordered host pair and cached.
	Route func(src, dst int) (links []int, latency float64, err error)
	// RouteAppend, if not nil, is Route appending the links to buf, for
	// a caller that keeps only their latency and bandwidth (the
	// dependency-driven engine): it need not allocate.
	RouteAppend func(buf []int, src, dst int) (links []int, latency float64, err error)
	// RouteLatency, if not nil, returns the addends of the latency Route
	// gives, in the order they are summed. Under link latency profiles a
	// transfer's latency is summed again from the links' current values,
	// as SimGrid computes a route per transfer; nil means the route's
	// links in order.
	RouteLatency func(src, dst int) []LatencyTerm
	// RankHost maps each rank to its host (the deployment).
	RankHost []int
}

// LatencyTerm is an addend of a route's latency: the latency of link Link
// (an index of Links), or, with Link -1, Fixed seconds (a Vivaldi zone's
// distance).
type LatencyTerm struct {
	Link  int
	Fixed float64
}

// MachineHost is a host: its name (for messages), its speed per core in
// flop/s and its number of cores.
type MachineHost struct {
	Name  string
	Speed float64
	Cores int
	// Overheads, if not nil, replace Config's smpi/os, smpi/ois and
	// smpi/or for the ranks on this host (SimGrid's host properties of
	// the same names).
	SendOverhead, ISendOverhead, RecvOverhead Overhead
	// SpeedProfile, if not nil, scales the host's speed over time.
	SpeedProfile *platform.Profile
	// PState is the pstate the host runs in (its speed is that pstate's):
	// SimGrid sets a pstate other than the first once the host exists,
	// which touches its CPU.
	PState int
	// Power is the host's power draw in each pstate (wattage_per_state),
	// nil if not given; PowerErr says why it could not be read. Only the
	// energy model (Config.Energy) uses them.
	Power    []PowerRange
	PowerErr error
}

// MachineLink is a link: bandwidth in bytes/s, latency in seconds, and
// whether it is a fat pipe (each flow gets the whole bandwidth) rather
// than shared.
type MachineLink struct {
	Name      string
	Bandwidth float64
	Latency   float64
	FatPipe   bool
	// IdleWatts and BusyWatts are the link's power (wattage_range), 0
	// if not given; PowerErr says why it could not be read. Only the
	// link energy model (Config.LinkEnergy) uses them.
	IdleWatts, BusyWatts float64
	PowerErr             error
	// BandwidthProfile and LatencyProfile, if not nil, give the link's
	// bandwidth and latency over time.
	BandwidthProfile, LatencyProfile *platform.Profile
}
