package sim_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kairos/sim"
)

// randomMessages returns a random trace of point-to-point messages between
// n ranks, blocking and not, eager and rendezvous, sendRecv exchanges,
// with computations between them, the non-blocking ones waited for by wait or waitall. All
// carry tag 0: SimGrid's tracing ends a waitall's links with tag 0.
// Every rank posts its side of the messages in one global order, so the
// trace cannot deadlock. With colls, collectives that every rank calls
// come between the messages.
func randomMessages(rng *rand.Rand, n int, colls bool) string {
	lines := make([][]string, n)
	pend := make([][][2]int, n) // outstanding (src, dst)
	add := func(r int, format string, a ...any) {
		lines[r] = append(lines[r], fmt.Sprintf("%d "+format, append([]any{r}, a...)...))
	}
	for r := range lines {
		add(r, "init")
	}
	for step := 5 + rng.IntN(25); step > 0; step-- {
		if colls && rng.IntN(4) == 0 {
			c := []string{"barrier", "bcast 5000", "bcast 70000", "reduce 1000 10000", "allreduce 2000 10000",
				"alltoall 500 500", "allgather 1000 1000", "gather 1000 1000 0"}[rng.IntN(8)]
			for r := range lines {
				add(r, "%s", c)
			}
			continue
		}
		if rng.IntN(5) == 0 {
			add(rng.IntN(n), "compute %g", []float64{1e4, 1e5, 1e6}[rng.IntN(3)])
			continue
		}
		a, b := rng.IntN(n), rng.IntN(n-1)
		if b >= a {
			b++
		}
		size := []int{100, 5000, 70000, 300000}[rng.IntN(4)]
		if rng.IntN(6) == 0 {
			back := []int{100, 70000}[rng.IntN(2)]
			add(a, "sendRecv %d %d %d %d 0 0", size, b, back, b)
			add(b, "sendRecv %d %d %d %d 0 0", back, a, size, a)
			continue
		}
		sk, rk := []string{"send", "isend"}[rng.IntN(2)], []string{"recv", "irecv"}[rng.IntN(2)]
		add(a, "%s %d 0 %d", sk, b, size)
		if sk == "isend" {
			pend[a] = append(pend[a], [2]int{a, b})
		}
		add(b, "%s %d 0 %d", rk, a, size)
		if rk == "irecv" {
			pend[b] = append(pend[b], [2]int{a, b})
		}
		for _, r := range []int{a, b} {
			switch k := rng.IntN(10); {
			case len(pend[r]) == 0 || k >= 4:
			case k < 2:
				i := rng.IntN(len(pend[r]))
				add(r, "wait %d %d 0", pend[r][i][0], pend[r][i][1])
				pend[r] = slices.Delete(pend[r], i, i+1)
			default:
				add(r, "waitall")
				pend[r] = nil
			}
		}
	}
	return closeRandomTrace(lines, func(r int) bool { return len(pend[r]) > 0 })
}

// link is a message as a timeline draws it.
type link struct {
	src, dst   int
	start, end float64
}

// ends lists the starts and, apart, the ends of links, by sender and
// receiver, in time order: SimGrid's tracing pairs the n-th link start
// from one rank to another with the n-th end (its keys count per sender,
// receiver and tag), where Kairos pairs each with its message's own, so
// the two draw the same arrows' ends but may pair them otherwise when
// messages between two ranks are received out of order.
func ends(ls []link) map[[2]int][2][]float64 {
	out := map[[2]int][2][]float64{}
	for _, l := range ls {
		k := [2]int{l.src, l.dst}
		e := out[k]
		e[0], e[1] = append(e[0], l.start), append(e[1], l.end)
		out[k] = e
	}
	for k, e := range out {
		slices.Sort(e[0])
		slices.Sort(e[1])
		out[k] = e
	}
	return out
}

// sameEnds reports whether a and b (from ends) hold the same dates, to
// SimGrid's printed precision.
func sameEnds(a, b map[[2]int][2][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok {
			return false
		}
		for i := range 2 {
			if !slices.EqualFunc(x[i], y[i], func(p, q float64) bool { return math.Abs(p-q) <= 1e-9 }) {
				return false
			}
		}
	}
	return true
}

// simgridLinks reads the point-to-point links of a Paje trace SimGrid's
// tracing (tracing/smpi) wrote: each PajeStartLink and PajeEndLink pair
// of one key, between the containers named rank-N.
func simgridLinks(t *testing.T, path string) []link {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids := map[string]string{} // event id -> Paje event name
	rank := map[string]int{}   // container alias -> rank
	open := map[string]*link{}
	var links []link
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 3 && fields[0] == "%EventDef" {
			ids[fields[2]] = fields[1]
		}
		if len(fields) == 0 || strings.HasPrefix(fields[0], "%") || strings.HasPrefix(fields[0], "#") {
			continue
		}
		at := func() float64 {
			x, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, sc.Text(), err)
			}
			return x
		}
		switch ids[fields[0]] {
		case "PajeCreateContainer":
			if name, ok := strings.CutPrefix(strings.Trim(fields[len(fields)-1], `"`), "rank-"); ok {
				rank[fields[2]], _ = strconv.Atoi(name)
			}
		case "PajeStartLink": // time type container value startContainer key
			open[fields[6]] = &link{src: rank[fields[5]], dst: -1, start: at(), end: -1}
		case "PajeEndLink":
			l := open[fields[6]]
			if l == nil {
				t.Fatalf("%s: %q ends a link that did not start", path, sc.Text())
			}
			l.dst, l.end = rank[fields[5]], at()
			links = append(links, *l)
			delete(open, fields[6])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Fatalf("%s: %d links never end", path, len(open))
	}
	return links
}

// pair is a sender and a receiver.
type pair [2]int

// simgridLinkEnds reads the link starts and, apart, the link ends of a
// Paje trace SimGrid's tracing wrote, by sender and receiver (a key,
// src_dst_tag_n in actor ids, names the other side), for traces where
// SimGrid ends some links twice (tracing/smpi/internals).
func simgridLinkEnds(t *testing.T, path string) (starts, ends map[pair][]float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	rank := map[string]int{}
	starts, ends = map[pair][]float64{}, map[pair][]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "%EventDef" {
			ids[f[2]] = f[1]
		}
		if len(f) < 3 || strings.HasPrefix(f[0], "%") {
			continue
		}
		kind := ids[f[0]]
		if kind == "PajeCreateContainer" {
			if name, ok := strings.CutPrefix(strings.Trim(f[len(f)-1], `"`), "rank-"); ok {
				rank[f[2]], _ = strconv.Atoi(name)
			}
			continue
		}
		if (kind != "PajeStartLink" && kind != "PajeEndLink") || len(f) < 7 {
			continue
		}
		at, _ := strconv.ParseFloat(f[1], 64)
		var src, dst int
		if _, err := fmt.Sscanf(strings.ReplaceAll(f[6], "_", " "), "%d %d", &src, &dst); err != nil {
			t.Fatalf("%s: %q: key %v", path, line, err)
		}
		if kind == "PajeStartLink" {
			k := pair{rank[f[5]], dst - 1}
			starts[k] = append(starts[k], at)
		} else {
			k := pair{src - 1, rank[f[5]]}
			ends[k] = append(ends[k], at)
		}
	}
	return starts, ends
}

// starts and linkEnds list links' starts and ends (with extra) by sender
// and receiver.
func starts(ls []link) map[pair][]float64 {
	out := map[pair][]float64{}
	for _, l := range ls {
		out[pair{l.src, l.dst}] = append(out[pair{l.src, l.dst}], l.start)
	}
	return out
}

func linkEnds(ls []link) map[pair][]float64 {
	out := map[pair][]float64{}
	for _, l := range ls {
		out[pair{l.src, l.dst}] = append(out[pair{l.src, l.dst}], l.end)
	}
	return out
}

// explains reports whether sg holds, for each pair, the dates of k and,
// besides, only dates of plain (each at most as often), to 1e-9 s.
func explains(k, sg, plain map[pair][]float64) bool {
	for p := range k {
		if _, ok := sg[p]; !ok {
			return false
		}
	}
	for p, xs := range sg {
		rest := slices.Clone(xs)
		take := func(d float64) bool {
			i := slices.IndexFunc(rest, func(x float64) bool { return math.Abs(x-d) <= 1e-9 })
			if i >= 0 {
				rest = slices.Delete(rest, i, i+1)
			}
			return i >= 0
		}
		for _, d := range k[p] {
			if !take(d) {
				return false // a message of Kairos' that SimGrid does not draw
			}
		}
		for _, d := range plain[p] {
			take(d)
		}
		if len(rest) > 0 {
			return false
		}
	}
	return true
}

// TestMessagesMatchSimGridTracing replays random point-to-point traces with
// a TimedTrace observer and with SimGrid 3.32's tracing on (smpirun
// -trace), and requires the messages Kairos reports to be the links
// SimGrid's Paje trace draws: as many, between the same ranks, starting
// when the sending actions start and ending when the receives, waits or
// waitalls return with them (see ends for how they are paired); on one
// rank per host, and in small-message mode with two (where a receive
// takes a message that arrived before it was posted). With
// tracing/smpi/internals, on traces with collectives too, every message
// is drawn, from its send's post to the return of the wait that gets it.
func TestMessagesMatchSimGridTracing(t *testing.T) {
	t.Parallel()
	seeds := randomSeeds(t, 40)
	for _, c := range []struct {
		name    string
		perHost int
		cfg     []string
		colls   bool
	}{
		{"flat", 1, nil, false},
		{"small-message-mode-2-per-host", 2, []string{"smpi/async-small-thresh:65536"}, false},
		{"internals", 1, []string{"tracing/smpi/internals:yes"}, true},
		{"internals-2-per-host-overheads", 2, []string{"tracing/smpi/internals:yes", "smpi/os:0:1e-5:1e-9", "smpi/ois:0:2e-5:0"}, true},
		{"internals-small-message-mode", 2, []string{"tracing/smpi/internals:yes", "smpi/async-small-thresh:65536"}, true},
	} {
		t.Run(c.name, func(t *testing.T) { messagesDifferential(t, seeds, c.perHost, c.colls, c.cfg) })
	}
}

// messagesDifferential is TestMessagesMatchSimGridTracing with perHost
// ranks per host, collectives if colls, and the settings cfg.
func messagesDifferential(t *testing.T, seeds, perHost int, colls bool, cfg []string) {
	dir, xml, hostfile := smallCluster(t, 8, "")
	if perHost > 1 {
		hostfile = sharedHostfile(t, dir, 8, perHost)
	}
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("t.ti\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kcfg := sim.DefaultConfig()
	sgArgs := setBoth(t, &kcfg, cfg)
	sgTrace := filepath.Join(dir, "sg.trace")
	total := 0
	for seed := firstSeed(); seed < firstSeed()+seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 17))
		n := 2 + rng.IntN(7)
		text := randomMessages(rng, n, colls)
		tr := writeTrace(t, dir, text)
		timed := sim.NewTimedTrace(n, tr.Meta())
		res, err := sim.Run(tr, machinePerHost(t, xml, n, perHost), kcfg, timed)
		if err != nil {
			// Small-message mode can deadlock or abort a trace that mixes
			// sizes between two ranks (see TestAsyncSmallMatchesSimGrid);
			// Kairos checks a message at its match, SimGrid when its
			// receive is waited for, so one may abort where the other
			// deadlocks first. Either way there is no run to compare.
			if kcfg.AsyncSmallThreshold == 0 || !simgridFails(dir, xml, hostfile, n, sgArgs) {
				t.Errorf("seed %d: %v\n%s", seed, err, text)
			}
			continue
		}
		sg, err := runSimGridCfg(dir, "desc", xml, hostfile, n, append(sgArgs, "--cfg=tracing:yes", "--cfg=tracing/smpi:yes",
			"--cfg=tracing/filename:"+sgTrace, "--cfg=tracing/precision:9")...)
		if err != nil || math.Abs(sg-res.Time) > 1e-9 {
			t.Fatalf("seed %d: SimGrid %v (%v), Kairos %.9f\n%s", seed, sg, err, res.Time, text)
		}
		var got []link
		for _, m := range timed.Messages {
			got = append(got, link{m.Src, m.Dst, m.Sent, m.Arrived})
		}
		total += len(got)
		if kcfg.TraceInternals {
			// SimGrid's replay also traces, a second time, the start of
			// a sendRecv's send when the action starts, and the end of
			// every receive a wait, waitall or sendRecv action returns
			// with when the action ends (as without internals): the
			// links it draws are Kairos' messages and, besides, some of
			// the dates of the messages without internals.
			plain := kcfg
			plain.TraceInternals = false
			pl := sim.NewTimedTrace(n, tr.Meta())
			if _, err := sim.Run(tr, machinePerHost(t, xml, n, perHost), plain, pl); err != nil {
				t.Fatal(err)
			}
			var was []link
			for _, m := range pl.Messages {
				was = append(was, link{m.Src, m.Dst, m.Sent, m.Arrived})
			}
			sgStarts, sgEnds := simgridLinkEnds(t, sgTrace)
			if !explains(starts(got), sgStarts, starts(was)) || !explains(linkEnds(got), sgEnds, linkEnds(was)) {
				t.Errorf("seed %d: Kairos' messages\n%v\nSimGrid's link starts\n%v\nand ends\n%v\n%s", seed, got, sgStarts, sgEnds, text)
			}
			continue
		}
		want := simgridLinks(t, sgTrace)
		if len(got) != len(want) || !sameEnds(ends(got), ends(want)) {
			t.Errorf("seed %d: Kairos' messages\n%v\nSimGrid's links\n%v\n%s", seed, got, want, text)
		}
	}
	t.Logf("%d random traces, %d messages", seeds, total)
}

// TestPerfettoFlowsBindToSlices replays random point-to-point traces with
// the Perfetto writer and checks every message's flow as the viewers bind
// it (Chrome's by equal category, thread and timestamp, Perfetto's to the
// slice open at the timestamp): its start on a slice of the sender,
// written before it, its end on a slice of the receiver, written before
// it, one of each per message. With tracing/smpi/internals, on traces
// with collectives, a flow starts when its send is posted, inside the
// sending action's slice: it must follow a slice that contains it.
func TestPerfettoFlowsBindToSlices(t *testing.T) {
	dir := t.TempDir()
	internals := sim.DefaultConfig()
	internals.TraceInternals = true
	for seed := range 40 {
		rng := rand.New(rand.NewPCG(uint64(seed), 23))
		n := 2 + rng.IntN(7)
		cfg := sim.DefaultConfig()
		if seed%2 == 1 {
			cfg = internals
		}
		text := randomMessages(rng, n, cfg.TraceInternals)
		tr := writeTrace(t, dir, text)
		var out strings.Builder
		hosts := make([]string, n)
		pf := sim.NewPerfetto(&out, hosts)
		timed := sim.NewTimedTrace(n, tr.Meta())
		m := machinePerHost(t, clusterXML(t, dir, 8, ""), n, 1)
		if _, err := sim.Run(tr, m, cfg, sim.Observers{pf, timed}); err != nil {
			t.Fatal(err)
		}
		if err := pf.Close(); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			TraceEvents []struct {
				Ph, Cat string
				ID      int
				Tid     int
				Ts, Dur float64
			}
		}
		if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		type slice struct{ ts, end float64 }
		slices := map[int][]slice{} // MPI slices written so far, by thread
		starts, ends := map[int]int{}, map[int]int{}
		for i, e := range doc.TraceEvents {
			switch e.Ph {
			case "X":
				if e.Cat == "mpi" {
					slices[e.Tid] = append(slices[e.Tid], slice{e.Ts, e.Ts + e.Dur})
				}
			case "s", "f":
				bound := false
				for _, sl := range slices[e.Tid] {
					// A flow binds at a slice's start, or, a send posted
					// inside an action (internals), within it.
					// (Times have 3 decimals of a microsecond: a slice's
					// end, ts + dur, may round below a flow at it.)
					bound = bound || sl.ts == e.Ts || cfg.TraceInternals && e.Ph == "s" && sl.ts <= e.Ts && e.Ts <= sl.end+0.002
				}
				if e.Cat != "mpi" || !bound {
					t.Errorf("seed %d: flow event %d (%s of %d, rank %d at %.3f us) follows no MPI slice there", seed, i, e.Ph, e.ID, e.Tid, e.Ts)
				}
				if e.Ph == "s" {
					starts[e.ID]++
				} else {
					ends[e.ID]++
				}
			}
		}
		if len(starts) != len(timed.Messages) || len(ends) != len(timed.Messages) {
			t.Errorf("seed %d: %d flow starts and %d ends for %d messages", seed, len(starts), len(ends), len(timed.Messages))
		}
		for id, k := range starts {
			if k != 1 || ends[id] != 1 {
				t.Errorf("seed %d: flow %d starts %d and ends %d times", seed, id, k, ends[id])
			}
		}
	}
}

// simgridFails reports whether SimGrid's replay of dir/desc deadlocks or
// aborts.
func simgridFails(dir, xml, hostfile string, n int, sgArgs []string) bool {
	_, out, _ := runSimGridWithin(time.Minute, dir, "desc", xml, hostfile, n, sgArgs...)
	return strings.Contains(out, "Stalling SMPI instance") || strings.Contains(out, "Execution failed with code")
}
