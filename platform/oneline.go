package platform

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseCluster builds a platform made of one cluster from a one-line
// description, for quick what-ifs without writing XML:
//
//	N x SPEED , BW , LAT [, option=value]...
//
// for example "256x1Gf,125MBps,50us" or
// "512x2Gf,10GBps,1us,bb=100GBps,500ns,topo=torus:8,8,8". The three
// positional fields are the number of hosts, the speed of one core, and the
// bandwidth and latency of each host's private link, with SimGrid's units.
// Options (a value may itself contain commas; it runs to the next
// "name="):
//
//	cores=K              cores per host (default 1)
//	bb=BW[,LAT]          a backbone link shared by all routes (flat clusters)
//	bb-sharing=P         backbone policy: shared (default) or fatpipe
//	sharing=P            private links: splitduplex (default), shared or fatpipe
//	limiter=BW           a per-host limiter link
//	loopback=BW[,LAT]    a per-host loopback link (else routes to self go
//	                     up and down the host's link)
//	topo=T               flat (default), torus:X,Y,..., fat_tree:L;D,..;U,..;C,..
//	                     or dragonfly:G,B;C,K;R,L;N (SimGrid's topo_parameters)
//	watts=I:E:A          the hosts' power (wattage_per_state, for the energy
//	                     model): idle, epsilon (optional) and all cores busy
//	prefix=S, suffix=S   host names are prefix+i+suffix, i = 0..N-1
//	                     (default "node-" and "")
//	id=S                 cluster id, used in link names (default "cluster")
//
// The result is exactly the platform SimGrid builds from the equivalent
// <cluster> element placed directly under <platform> (radical="0-(N-1)"),
// so hostfiles naming node-0, node-1... work unchanged. With a topology, N
// must equal the topology's number of nodes.
func ParseCluster(spec string) (*Platform, error) {
	a, err := parseClusterSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("platform: cluster %q: %w", spec, err)
	}
	b := newBuilder(spec)
	if err := b.addCluster(a); err != nil {
		return nil, fmt.Errorf("platform: cluster %q: %w", spec, err)
	}
	return b.finish()
}

func parseClusterSpec(spec string) (*clusterArgs, error) {
	fields := strings.Split(spec, ",")
	if len(fields) < 3 {
		return nil, fmt.Errorf("expected NxSPEED,BW,LAT[,option=value...]")
	}
	a := &clusterArgs{id: "cluster", prefix: "node-", cores: 1, sharing: "SPLITDUPLEX", bbSharing: Shared, topology: "FLAT"}
	count, speed, ok := strings.Cut(strings.TrimSpace(fields[0]), "x")
	if !ok {
		return nil, fmt.Errorf("first field %q: expected NxSPEED, such as 64x1Gf", fields[0])
	}
	n, err := strconv.Atoi(count)
	if err != nil || n <= 0 || n > maxOneLineHosts {
		return nil, fmt.Errorf("first field %q: host count %q is not an integer from 1 to %d", fields[0], count, maxOneLineHosts)
	}
	if a.speed, _, err = speedQ.parse(speed); err != nil {
		return nil, err
	}
	if a.bw, _, err = bandwidthQ.parse(strings.TrimSpace(fields[1])); err != nil {
		return nil, err
	}
	if a.lat, _, err = timeQ.parse(strings.TrimSpace(fields[2])); err != nil {
		return nil, err
	}
	// Group the options: a field without '=' continues the previous value.
	var keys, values []string
	for _, f := range fields[3:] {
		if k, v, ok := strings.Cut(f, "="); ok {
			keys, values = append(keys, strings.TrimSpace(k)), append(values, v)
		} else if len(keys) > 0 {
			values[len(values)-1] += "," + f
		} else {
			return nil, fmt.Errorf("field %q: expected option=value", f)
		}
	}
	seen := map[string]bool{}
	for i, k := range keys {
		if seen[k] {
			return nil, fmt.Errorf("option %s given twice", k)
		}
		seen[k] = true
		if err := a.option(k, values[i]); err != nil {
			return nil, fmt.Errorf("option %s=%s: %w", k, values[i], err)
		}
	}
	if a.speed <= 0 || a.bw <= 0 {
		return nil, fmt.Errorf("speed and bandwidth must be positive")
	}
	a.radicals = make([]int, n)
	for i := range a.radicals {
		a.radicals[i] = i
	}
	if a.topology != "FLAT" {
		if want, err := topologySize(a.topology, a.topoParams); err != nil {
			return nil, err
		} else if want != n {
			return nil, fmt.Errorf("topology %s:%s has %d nodes, not %d", strings.ToLower(a.topology), a.topoParams, want, n)
		}
	}
	return a, nil
}

// bwLat reads "BW[,LAT]".
func bwLat(v string) (bw, lat float64, err error) {
	b, l, hasLat := strings.Cut(v, ",")
	if bw, _, err = bandwidthQ.parse(strings.TrimSpace(b)); err != nil {
		return 0, 0, err
	}
	if hasLat {
		lat, _, err = timeQ.parse(strings.TrimSpace(l))
	}
	return bw, lat, err
}

func (a *clusterArgs) option(k, v string) error {
	var err error
	switch k {
	case "cores":
		if a.cores, err = strconv.Atoi(strings.TrimSpace(v)); err != nil || a.cores <= 0 {
			return fmt.Errorf("expected a positive number of cores")
		}
	case "bb":
		a.bbBW, a.bbLat, err = bwLat(v)
	case "bb-sharing":
		switch strings.ToLower(v) {
		case "shared":
			a.bbSharing = Shared
		case "fatpipe":
			a.bbSharing = FatPipe
		default:
			return fmt.Errorf("expected shared or fatpipe")
		}
	case "sharing":
		a.sharing = strings.ToUpper(v)
		if a.sharing != "SPLITDUPLEX" && a.sharing != "SHARED" && a.sharing != "FATPIPE" {
			return fmt.Errorf("expected splitduplex, shared or fatpipe")
		}
	case "limiter":
		a.limiter, _, err = bandwidthQ.parse(strings.TrimSpace(v))
	case "loopback":
		a.loopbackBW, a.loopbackLat, err = bwLat(v)
	case "topo":
		kind, params, _ := strings.Cut(v, ":")
		a.topology, a.topoParams = strings.ToUpper(strings.ReplaceAll(kind, "-", "_")), params
		switch a.topology {
		case "FLAT", "TORUS", "FAT_TREE", "DRAGONFLY":
		default:
			return fmt.Errorf("expected flat, torus:X,Y,..., fat_tree:L;D..;U..;C.. or dragonfly:G,B;C,K;R,L;N")
		}
	case "watts":
		// The hosts' wattage_per_state property, for the energy model.
		parts := strings.Split(v, ":")
		for _, w := range parts {
			if _, perr := strconv.ParseFloat(w, 64); perr != nil || len(parts) < 2 || len(parts) > 3 {
				return fmt.Errorf("expected IDLE:ALLCORES or IDLE:EPSILON:ALLCORES watts, such as 100:120:200")
			}
		}
		a.props = props{vals: map[string]string{"wattage_per_state": v}, lines: map[string]int{}}
	case "prefix":
		a.prefix = v
	case "suffix":
		a.suffix = v
	case "id":
		if v == "" {
			return fmt.Errorf("empty id")
		}
		a.id = v
	default:
		return fmt.Errorf("unknown option (expected cores, bb, bb-sharing, sharing, limiter, loopback, topo, watts, prefix, suffix or id)")
	}
	return err
}

// topologySize is the number of hosts a topology holds.
func topologySize(topology, params string) (int, error) {
	switch topology {
	case "TORUS":
		dims, err := parseTorus(params)
		return product(dims), err
	case "FAT_TREE":
		_, down, _, _, err := parseFatTree(params)
		return product(down), err
	case "DRAGONFLY":
		v, err := parseDragonfly(params)
		return v[0] * v[2] * v[4] * v[6], err
	}
	return 0, fmt.Errorf("unknown topology %q", topology)
}

// maxOneLineHosts bounds the host count of a one-line cluster: 4 Mi hosts,
// far beyond any machine, so that a typo cannot exhaust memory.
const maxOneLineHosts = 1 << 22
