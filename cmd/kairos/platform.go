package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"kairos/platform"
	"kairos/trace"
)

func init() { addVerb("platform", newPlatformCmd) }

type platformFlags struct {
	cluster, hostfile, mapping, out string
	routes                          []string
	np                              int
	hosts, json                     bool
}

func newPlatformCmd() *cobra.Command {
	f := &platformFlags{}
	cmd := &cobra.Command{
		Use:   "platform (FILE.xml | --cluster SPEC) [flags]",
		Short: "Check a machine description and show its hosts, routes and rank placement",
		Long: `Platform loads a SimGrid platform XML file (as SimGrid 3.32 reads it) or a
one-line cluster, reports what it holds, and answers questions about it:

  --route SRC,DST   the links from host SRC to host DST, in order, with their
                    bandwidth, latency and sharing, and the route's latency
                    (repeatable; exactly SimGrid's route)
  --hosts           every host with its speed, cores, power and speed profile
  --hostfile FILE   where the ranks go (with -np and --map), as smpirun places
                    them; without a hostfile, on all hosts sorted by name

One-line clusters: "N x SPEED,BW,LAT[,option=value...]", for example
"64x1Gf,125MBps,50us" or "512x2Gf,10GBps,1us,topo=torus:8,8,8". Options:
cores=K, bb=BW[,LAT] (backbone), bb-sharing=shared|fatpipe,
sharing=splitduplex|shared|fatpipe, limiter=BW, loopback=BW[,LAT],
topo=flat|torus:X,Y,..|fat_tree:L;D..;U..;C..|dragonfly:G,B;C,K;R,L;N,
prefix=S (default "node-"), suffix=S, id=S (default "cluster").`,
		Example: `  kairos platform small_platform.xml
  kairos platform cluster_fat_tree.xml --route node-0.simgrid.org,node-15.simgrid.org
  kairos platform --cluster 64x1Gf,125MBps,50us,topo=torus:4,4,4 --route node-0,node-63 --json
  kairos platform cluster32.xml --hostfile hostfile32 --np 64 --map block`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPlatform(cmd, args, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.cluster, "cluster", "", `one-line cluster "N x SPEED,BW,LAT[,option=value...]" instead of a file`)
	fl.StringArrayVar(&f.routes, "route", nil, "show the route SRC,DST (repeatable)")
	fl.BoolVar(&f.hosts, "hosts", false, "list every host")
	fl.StringVar(&f.hostfile, "hostfile", "", "show the placement of ranks on this hostfile's hosts")
	fl.IntVar(&f.np, "np", 0, "number of ranks to place (default: one per hostfile line or host)")
	fl.StringVar(&f.mapping, "map", "roundrobin", "rank placement: roundrobin or block")
	fl.BoolVar(&f.json, "json", false, "print the results as JSON")
	fl.StringVarP(&f.out, "output", "o", "", "write to this file instead of standard output")
	return cmd
}

// platformJSON is the stable JSON form of the platform verb's results.
type platformJSON struct {
	Platform string          `json:"platform"`
	Hosts    int             `json:"hosts"`
	Cores    int             `json:"cores"`
	Links    int             `json:"links"`
	Warnings []string        `json:"warnings,omitempty"`
	HostList []platformHost  `json:"host_list,omitempty"`
	Routes   []platformRoute `json:"routes,omitempty"`
	Ranks    []string        `json:"ranks,omitempty"`
}

type platformHost struct {
	Name  string  `json:"name"`
	Speed float64 `json:"speed"`
	Cores int     `json:"cores"`
	// Power is the wattage_per_state property (the energy model's).
	Power string `json:"wattage_per_state,omitempty"`
	// ProfileEvents and ProfileRepeat describe a speed profile: its
	// number of values, and the delay before they repeat (-1: never).
	ProfileEvents int      `json:"speed_profile_events,omitempty"`
	ProfileRepeat *float64 `json:"speed_profile_repeat,omitempty"`
}

type platformRoute struct {
	Src     string         `json:"src"`
	Dst     string         `json:"dst"`
	Latency float64        `json:"latency"`
	Links   []platformLink `json:"links"`
}

type platformLink struct {
	Name      string  `json:"name"`
	Bandwidth float64 `json:"bandwidth"`
	Latency   float64 `json:"latency"`
	Sharing   string  `json:"sharing"`
	// The bandwidth and latency profiles, as a host's speed profile.
	BandwidthEvents int      `json:"bandwidth_profile_events,omitempty"`
	BandwidthRepeat *float64 `json:"bandwidth_profile_repeat,omitempty"`
	LatencyEvents   int      `json:"latency_profile_events,omitempty"`
	LatencyRepeat   *float64 `json:"latency_profile_repeat,omitempty"`
}

func runPlatform(cmd *cobra.Command, args []string, f *platformFlags) error {
	if f.np < 0 || f.np > trace.MaxRanks {
		return usagef("--np %d: expected 1 to %d ranks", f.np, trace.MaxRanks)
	}
	var p *platform.Platform
	var err error
	switch {
	case len(args) == 1 && f.cluster != "":
		return usagef("give a platform file or --cluster, not both")
	case len(args) == 1:
		p, err = platform.Load(args[0])
	case f.cluster != "":
		p, err = platform.ParseCluster(f.cluster)
	default:
		return usagef("platform needs a platform file or --cluster SPEC")
	}
	if err != nil {
		return err
	}
	mapping, err := platform.ParseMapping(f.mapping)
	if err != nil {
		return usagef("--map: %v", err)
	}
	res := platformJSON{Platform: p.Name, Hosts: len(p.Hosts), Links: len(p.Links), Warnings: p.Warnings}
	for _, h := range p.Hosts {
		res.Cores += h.Cores
		if f.hosts {
			ph := platformHost{Name: h.Name, Speed: h.Speed, Cores: h.Cores, Power: h.Props["wattage_per_state"]}
			if sp := h.SpeedProfile; sp != nil {
				ph.ProfileEvents, ph.ProfileRepeat = len(sp.Events), &sp.Repeat
			}
			res.HostList = append(res.HostList, ph)
		}
	}
	for _, r := range f.routes {
		pr, err := describeRoute(p, r)
		if err != nil {
			return err
		}
		res.Routes = append(res.Routes, pr)
	}
	var pl *platform.Placement
	if f.hostfile != "" || f.np > 0 {
		if pl, err = placeRanks(p, f, mapping); err != nil {
			return err
		}
	}
	return writeOutput(cmd, f.out, func(w io.Writer) error {
		if f.json {
			return writePlatformJSON(w, res, pl)
		}
		return writePlatformText(w, &res, pl)
	})
}

func describeRoute(p *platform.Platform, spec string) (platformRoute, error) {
	src, dst, ok := strings.Cut(spec, ",")
	if !ok {
		return platformRoute{}, usagef("--route %q: expected SRC,DST", spec)
	}
	var ends [2]*platform.Host
	for i, name := range []string{strings.TrimSpace(src), strings.TrimSpace(dst)} {
		h, ok := p.Host(name)
		if !ok {
			return platformRoute{}, usagef("--route %q: no host %q in %s", spec, name, p.Name)
		}
		ends[i] = h
	}
	hs, hd := ends[0], ends[1]
	links, lat, err := p.RouteErr(hs, hd)
	if err != nil {
		return platformRoute{}, err
	}
	pr := platformRoute{Src: hs.Name, Dst: hd.Name, Latency: lat, Links: []platformLink{}}
	for _, l := range links {
		pl := platformLink{Name: l.Name, Bandwidth: l.Bandwidth, Latency: l.Latency, Sharing: l.Sharing.String()}
		if bp := l.BandwidthProfile; bp != nil {
			pl.BandwidthEvents, pl.BandwidthRepeat = len(bp.Events), &bp.Repeat
		}
		if lp := l.LatencyProfile; lp != nil {
			pl.LatencyEvents, pl.LatencyRepeat = len(lp.Events), &lp.Repeat
		}
		pr.Links = append(pr.Links, pl)
	}
	return pr, nil
}

func placeRanks(p *platform.Platform, f *platformFlags, m platform.Mapping) (*platform.Placement, error) {
	var names []string
	var err error
	if f.hostfile != "" {
		if names, err = platform.ReadHostfileFor(p, f.hostfile); err != nil {
			return nil, err
		}
	}
	np := f.np
	if np == 0 {
		np = len(names)
		if np == 0 {
			np = len(p.Hosts)
		}
	}
	pl, err := platform.Place(p, names, np, m)
	if err != nil {
		return nil, err
	}
	return &pl, nil
}

// writeProfile describes a profile of n values that repeats after
// *repeat seconds (never if negative), if repeat is not nil.
func writeProfile(b *strings.Builder, what string, n int, repeat *float64) {
	if repeat == nil {
		return
	}
	fmt.Fprintf(b, "  %s profile of %d values", what, n)
	if *repeat >= 0 {
		fmt.Fprintf(b, ", repeating %.6g s after the last", *repeat)
	}
}

func writePlatformText(w io.Writer, r *platformJSON, pl *platform.Placement) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d hosts (%d cores), %d links\n", r.Platform, r.Hosts, r.Cores, r.Links)
	for _, warn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	for _, h := range r.HostList {
		fmt.Fprintf(&b, "host %s  %g flop/s  %d cores", h.Name, h.Speed, h.Cores)
		if h.Power != "" {
			fmt.Fprintf(&b, "  %s W", h.Power)
		}
		writeProfile(&b, "speed", h.ProfileEvents, h.ProfileRepeat)
		b.WriteString("\n")
	}
	for _, rt := range r.Routes {
		fmt.Fprintf(&b, "route %s -> %s: %d links, latency %.9g s", rt.Src, rt.Dst, len(rt.Links), rt.Latency)
		if len(rt.Links) == 0 && rt.Latency == 0 {
			b.WriteString(" (no connecting path: a message over it is an error, as in SimGrid)")
		}
		b.WriteString("\n")
		for _, l := range rt.Links {
			fmt.Fprintf(&b, "  %-40s %12.6g B/s  %10.4g s  %s", l.Name, l.Bandwidth, l.Latency, l.Sharing)
			writeProfile(&b, "bandwidth", l.BandwidthEvents, l.BandwidthRepeat)
			writeProfile(&b, "latency", l.LatencyEvents, l.LatencyRepeat)
			b.WriteString("\n")
		}
	}
	if pl != nil {
		writePlacement(&b, pl)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// maxRankParts bounds the ranges a host's line lists: a host of a million
// ranks placed round-robin is one line, not a megabyte.
const maxRankParts = 16

// writePlacement lists the ranks of each host, hosts in the order of
// their first rank, rank by rank from the placement: its memory is that
// of the hosts, whatever the number of ranks.
func writePlacement(b *strings.Builder, pl *platform.Placement) {
	perHost := map[*platform.Host]*rankRuns{}
	var order []*platform.Host
	for rank := range pl.NumRanks() {
		h := pl.Host(rank)
		rr := perHost[h]
		if rr == nil {
			rr = &rankRuns{}
			perHost[h] = rr
			order = append(order, h)
		}
		rr.add(rank)
	}
	fmt.Fprintf(b, "%d ranks on %d hosts:\n", pl.NumRanks(), len(order))
	for _, h := range order {
		fmt.Fprintf(b, "  %s: ranks %s\n", h.Name, perHost[h])
	}
}

// rankRuns gathers increasing ranks as ranges, "0-3,8,10-11": at most
// maxRankParts of them, then how many ranks there are in all.
type rankRuns struct {
	parts      []string
	first, end int // the open range, first to end-1
	n          int
}

func (rr *rankRuns) add(rank int) {
	rr.n++
	if rr.n > 1 && rank == rr.end {
		rr.end++
		return
	}
	rr.close()
	rr.first, rr.end = rank, rank+1
}

// close adds the open range to the parts, while there is room.
func (rr *rankRuns) close() {
	switch {
	case rr.end == rr.first || len(rr.parts) > maxRankParts:
	case rr.end == rr.first+1:
		rr.parts = append(rr.parts, fmt.Sprint(rr.first))
	default:
		rr.parts = append(rr.parts, fmt.Sprintf("%d-%d", rr.first, rr.end-1))
	}
}

func (rr *rankRuns) String() string {
	rr.close()
	rr.first = rr.end
	parts := rr.parts
	if len(parts) > maxRankParts {
		parts = append(parts[:maxRankParts:maxRankParts], fmt.Sprintf("... (%d ranks in all)", rr.n))
	}
	return strings.Join(parts, ",")
}

// writePlatformJSON writes res as writeJSON does, with the host of each
// rank of pl as its "ranks", written name by name rather than gathered.
func writePlatformJSON(w io.Writer, res platformJSON, pl *platform.Placement) error {
	if pl == nil {
		return writeJSON(w, res)
	}
	var head bytes.Buffer
	if err := writeJSON(&head, res); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(bytes.TrimSuffix(head.Bytes(), []byte("\n}\n")))
	bw.WriteString(",\n  \"ranks\": [")
	quoted := map[*platform.Host][]byte{}
	for rank := range pl.NumRanks() {
		h := pl.Host(rank)
		q, ok := quoted[h]
		if !ok {
			q, _ = json.Marshal(h.Name)
			quoted[h] = q
		}
		if rank > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(q)
	}
	bw.WriteString("\n  ]\n}\n")
	return bw.Flush()
}
