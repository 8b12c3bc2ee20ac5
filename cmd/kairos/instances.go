package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"kairos/format"
	"kairos/platform"
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
	// A job of a workload (--jobs) starts at a date, each rank on a host
	// given by its index among the platform's hosts sorted by name.
	job   bool
	start float64
	hosts []int
}

// readWith reads the file at path with parse (parseInstances, parseJobs).
func readWith(path string, parse func(io.Reader, string) ([]instance, error)) ([]instance, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parse(f, path)
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

// parseJobs reads a workload as SimGrid's replay_multiple_manual example
// does (named name in errors): a job a line, "NAME TRACE RANKS START
// HOSTS", START an integer number of seconds and HOSTS RANKS host indexes,
// comma-separated, into the platform's hosts sorted by name. As there,
// a line whose third and fourth words are not integers is text, skipped,
// and the jobs are sorted by start date, then by name.
func parseJobs(r io.Reader, name string) ([]instance, error) {
	var out []instance
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 {
			continue
		}
		ranks, err1 := strconv.Atoi(fields[2])
		start, err2 := strconv.Atoi(fields[3])
		if err1 != nil || err2 != nil {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%s:%d: %s (want: NAME TRACE RANKS START_SECONDS HOST_INDEX,HOST_INDEX,...)", name, line, fmt.Sprintf(format, a...))
		}
		switch {
		case len(fields) != 5:
			return nil, bad("%d fields", len(fields))
		case ranks < 1 || ranks > maxInstanceRanks:
			return nil, bad("ranks %d is not from 1 to %d", ranks, maxInstanceRanks)
		case start < 0:
			return nil, bad("start %d is negative", start)
		}
		in := instance{id: fields[0], trace: fields[1], ranks: ranks, job: true, start: float64(start)}
		for _, h := range strings.FieldsFunc(fields[4], func(r rune) bool { return r == ',' }) {
			i, err := strconv.Atoi(h)
			if err != nil || i < 0 {
				return nil, bad("host index %q is not a non-negative integer", h)
			}
			in.hosts = append(in.hosts, i)
		}
		if len(in.hosts) != ranks {
			return nil, bad("%d host indexes for %d ranks", len(in.hosts), ranks)
		}
		out = append(out, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no job (want lines NAME TRACE RANKS START_SECONDS HOST_INDEX,HOST_INDEX,...)", name)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].start != out[j].start {
			return out[i].start < out[j].start
		}
		return out[i].id < out[j].id
	})
	return out, nil
}

// jobHosts returns the host of each rank of the jobs, by name, from the
// platform's hosts sorted by name (the order of SimGrid's
// Engine::get_all_hosts, which the example indexes).
func jobHosts(p *platform.Platform, jobs []instance) ([]string, error) {
	names := make([]string, len(p.Hosts))
	for i, h := range p.Hosts {
		names[i] = h.Name
	}
	sort.Strings(names)
	var out []string
	for _, j := range jobs {
		for _, i := range j.hosts {
			if i >= len(names) {
				return nil, fmt.Errorf("job %s: host index %d, but platform %s has %d hosts", j.id, i, p.Name, len(names))
			}
			out = append(out, names[i])
		}
	}
	return out, nil
}

// startDelays returns the flops each rank computes before its trace
// (sim.Config.StartDelays), by rank of the merged trace.
func startDelays(ins []instance) []float64 {
	return perRank(ins, func(in *instance) float64 { return in.delay })
}

// jobActorKeys returns, by rank of the merged trace, the number SimGrid
// stores the requests of the jobs' ranks under (sim.Config.ActorKeys):
// the rank's actor number minus one, as the replay_multiple_manual
// example numbers its actors. Actor 0 is maestro; noise[0] sleepers, then
// the workload actor, exist before the run. At each start date the
// workload actor creates, one a sub-round (each creation is a simcall),
// noise[1] sleepers and then the executor of each job of that date, and
// an executor creates its job's ranks, one a sub-round, from the
// sub-round after its own creation. An actor created in a sub-round runs
// in the next one, just before its creator.
func jobActorKeys(jobs []instance, noise [2]int) []int32 {
	type creator struct {
		job  int // -1: the workload actor
		made int // actors created so far
	}
	var keys []int32
	for _, j := range jobs {
		keys = append(keys, make([]int32, j.ranks)...)
	}
	next := int32(noise[0] + 2)
	for i := 0; i < len(jobs); {
		k := i
		for k < len(jobs) && jobs[k].start == jobs[i].start {
			k++
		}
		// The workload actor's creations at this date: -1 for a sleeper.
		var todo []int
		for j := i; j < k; j++ {
			for range noise[1] {
				todo = append(todo, -1)
			}
			todo = append(todo, j)
		}
		for run := []*creator{{job: -1}}; len(run) > 0; {
			var again []*creator
			for _, c := range run {
				if c.job < 0 {
					if j := todo[c.made]; j >= 0 {
						again = append(again, &creator{job: j})
					}
				} else {
					keys[jobs[c.job].offset+c.made] = next - 1
				}
				next++
				c.made++
				if c.job < 0 && c.made < len(todo) || c.job >= 0 && c.made < jobs[c.job].ranks {
					again = append(again, c)
				}
			}
			run = again
		}
		i = k
	}
	return keys
}

// startDates returns the date each rank starts at (sim.Config.StartDates),
// by rank of the merged trace.
func startDates(ins []instance) []float64 {
	return perRank(ins, func(in *instance) float64 { return in.start })
}

// perRank returns v of each rank's instance, by rank of the merged trace.
func perRank(ins []instance, v func(*instance) float64) []float64 {
	var d []float64
	for i := range ins {
		for range ins[i].ranks {
			d = append(d, v(&ins[i]))
		}
	}
	return d
}

// maxInstanceRanks bounds an instance's size (the TI reader's own bound
// on a world).
const maxInstanceRanks = 1 << 22

// openInstances opens the traces of a description file, or of a workload
// with --jobs (paths relative to its directory), and merges them into one
// source, the instances' ranks
// one after the other; with SimGrid's quirks (quirks), waits and tests
// look their requests up as SimGrid's replay of instances does
// (trace.MergeOptions.LocalWaitKeys). SimGrid's instances are TI traces;
// Kairos takes any trace it replays (OTF2, DUMPI, .ktr, a reduced trace),
// untimed later as simulate untimes one. The format returned is TI if
// every instance is, else that of the first which is not (TI parts are
// the ones read ahead, and never untimed).
func openInstances(path string, f *simulateFlags, quirks bool) (trace.Source, []instance, format.Format, error) {
	parse := parseInstances
	if f.jobs {
		parse = parseJobs
	}
	ins, err := readWith(path, parse)
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
		np := 0
		if in.job {
			// As the example: a job's first RANKS traces of the
			// description, which must list that many.
			np = in.ranks
		}
		t, tf, err := openReplayed(p, np, f)
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
	Start         float64 `json:"start,omitempty"` // a job's start date (--jobs)
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
		out = append(out, instanceJSON{in.id, in.trace, in.start, in.offset, in.ranks, x.Finish - x.Init, x.Finish})
	}
	return out
}

// printInstances prints the instances' results, or the jobs'.
func printInstances(w io.Writer, ins []instanceJSON, jobs bool) {
	for _, in := range ins {
		what, from := "instance", ""
		if jobs {
			what, from = "job", fmt.Sprintf(", started at %g s", in.Start)
		}
		fmt.Fprintf(w, "%s %s (%s, ranks %d-%d%s): simulated time %.9f s, ended at %.9f s\n",
			what, in.ID, in.Trace, in.FirstRank, in.FirstRank+in.Ranks-1, from, in.SimulatedTime, in.End)
	}
}
