package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"kairos/format"
	"kairos/sim"
	"kairos/trace"
)

// instance is one application of a replay of several side by side, as a
// line of SimGrid's replay_multiple description file names it.
type instance struct {
	id     string
	trace  string  // path, as the line gives it
	ranks  int     // the instance's MPI_COMM_WORLD size
	delay  float64 // flops each rank computes before its trace starts
	offset int     // its first rank among all instances'
}

// readInstances reads the replay_multiple description file at path.
func readInstances(path string) ([]instance, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseInstances(f, path)
}

// parseInstances reads a replay_multiple description (named name in
// errors): one instance a line, "ID TRACE RANKS [DELAY_FLOPS]", blank
// lines and # comments skipped.
func parseInstances(r io.Reader, name string) ([]instance, error) {
	var out []instance
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s (want: ID TRACE RANKS [DELAY_FLOPS])", name, line, fmt.Sprintf(format, a...))
		}
		if len(fields) < 3 || len(fields) > 4 {
			return nil, bad("%d fields", len(fields))
		}
		in := instance{id: fields[0], trace: fields[1]}
		var err error
		if in.ranks, err = strconv.Atoi(fields[2]); err != nil || in.ranks < 1 || in.ranks > maxInstanceRanks {
			return nil, bad("ranks %q is not an integer from 1 to %d", fields[2], maxInstanceRanks)
		}
		if len(fields) == 4 {
			if in.delay, err = strconv.ParseFloat(fields[3], 64); err != nil || !(in.delay >= 0 && in.delay <= 1e300) {
				return nil, bad("start delay %q is not a number of flops", fields[3])
			}
		}
		out = append(out, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no instance (want lines ID TRACE RANKS [DELAY_FLOPS])", name)
	}
	return out, nil
}

// startDelays returns the flops each rank computes before its trace
// (sim.Config.StartDelays), by rank of the merged trace.
func startDelays(ins []instance) []float64 {
	var d []float64
	for _, in := range ins {
		for range in.ranks {
			d = append(d, in.delay)
		}
	}
	return d
}

// maxInstanceRanks bounds an instance's size (the TI reader's own bound
// on a world).
const maxInstanceRanks = 1 << 22

// openInstances opens the traces of a description file (paths relative
// to its directory) and merges them into one source, the instances' ranks
// one after the other; with SimGrid's quirks (quirks), waits and tests
// look their requests up as SimGrid's replay of instances does
// (trace.MergeOptions.LocalWaitKeys). SimGrid's instances are TI traces;
// Kairos takes any trace it replays (OTF2, DUMPI, .ktr, a reduced trace),
// untimed later as simulate untimes one. The format returned is TI if
// every instance is, else that of the first which is not (TI parts are
// the ones read ahead, and never untimed).
func openInstances(path string, f *simulateFlags, quirks bool) (trace.Source, []instance, format.Format, error) {
	ins, err := readInstances(path)
	if err != nil {
		return nil, nil, format.Format{}, err
	}
	var parts []trace.Source
	var merged format.Format
	for i := range ins {
		in := &ins[i]
		p := in.trace
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		t, tf, err := openReplayed(p, 0, f)
		if err != nil {
			return nil, nil, tf, fmt.Errorf("instance %s: %w", in.id, err)
		}
		if t.NumRanks() != in.ranks {
			// As SimGrid's generate_multiple_deployment.sh refuses it.
			return nil, nil, tf, fmt.Errorf("%s: instance %s: %s has %d ranks, the description says %d", path, in.id, p, t.NumRanks(), in.ranks)
		}
		if merged.Name == "" || merged.Name == "ti" {
			merged = tf
		}
		parts = append(parts, t)
	}
	m, err := trace.Merge(parts, trace.MergeOptions{LocalWaitKeys: quirks})
	if err != nil {
		return nil, nil, merged, err
	}
	for i, off := range m.Offsets() {
		ins[i].offset = off
	}
	return m, ins, merged, nil
}

// instanceJSON is one instance's result: its simulated time, from its
// last rank's init to that rank's end (SimGrid's replay's), and its end.
type instanceJSON struct {
	ID            string  `json:"id"`
	Trace         string  `json:"trace"`
	FirstRank     int     `json:"first_rank"`
	Ranks         int     `json:"ranks"`
	SimulatedTime float64 `json:"simulated_time"`
	End           float64 `json:"end"`
}

// instanceResults returns each instance's result from res.
func instanceResults(ins []instance, res *sim.Result) []instanceJSON {
	var out []instanceJSON
	for _, in := range ins {
		if in.offset+in.ranks > len(res.Ranks) {
			continue
		}
		last := in.offset
		for r := in.offset; r < in.offset+in.ranks; r++ {
			if res.Ranks[r].Finish >= res.Ranks[last].Finish {
				last = r
			}
		}
		x := res.Ranks[last]
		out = append(out, instanceJSON{in.id, in.trace, in.offset, in.ranks, x.Finish - x.Init, x.Finish})
	}
	return out
}

// printInstances prints the instances' results.
func printInstances(w io.Writer, ins []instanceJSON) {
	for _, in := range ins {
		fmt.Fprintf(w, "instance %s (%s, ranks %d-%d): simulated time %.9f s, ended at %.9f s\n",
			in.ID, in.Trace, in.FirstRank, in.FirstRank+in.Ranks-1, in.SimulatedTime, in.End)
	}
}
