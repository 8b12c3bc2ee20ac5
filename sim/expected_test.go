package sim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
)

// simCase is one line of expected_cases.tsv.
type simCase struct {
	id, dir, desc, plat, hosts, extra, expected string
	np                                          int
}

func readCases(t *testing.T) (string, []simCase) {
	t.Helper()
	base := testenv.Shared(t, "simgrid-replay-tests")
	data, err := os.ReadFile(filepath.Join(base, "expected_cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []simCase
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 8 {
			t.Fatalf("bad case line %q", line)
		}
		np, _ := strconv.Atoi(f[3])
		cases = append(cases, simCase{id: f[0], dir: f[1], desc: f[2], np: np, plat: f[4], hosts: f[5], extra: f[6], expected: f[7]})
	}
	return base, cases
}

// setup opens a case's trace and machine.
func (c simCase) setup(t *testing.T, base string) (*ti.Trace, *sim.Machine, sim.Config) {
	t.Helper()
	dir := filepath.Join(base, c.dir)
	desc := ""
	if strings.HasPrefix(c.desc, "@") {
		desc = filepath.Join(dir, c.desc[1:])
	} else {
		desc = filepath.Join(t.TempDir(), "desc.txt")
		var lines []string
		for _, p := range strings.Split(c.desc, ";") {
			lines = append(lines, filepath.Join(dir, p))
		}
		if err := os.WriteFile(desc, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := ti.OpenWith(desc, ti.ReaderOptions{NumRanks: c.np})
	if err != nil {
		t.Fatalf("%s: %v", c.id, err)
	}
	p, err := platform.Load(filepath.Join(dir, c.plat))
	if err != nil {
		t.Fatalf("%s: %v", c.id, err)
	}
	var names []string
	if strings.HasPrefix(c.hosts, "@") {
		names = strings.Split(c.hosts[1:], ";")
	} else if names, err = platform.ReadHostfile(filepath.Join(dir, c.hosts)); err != nil {
		t.Fatal(err)
	}
	hosts, err := platform.Deploy(p, names, c.np, platform.RoundRobin)
	if err != nil {
		t.Fatal(err)
	}
	m, err := sim.FromPlatform(p, hosts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.DefaultConfig()
	if c.extra != "-" {
		for _, a := range strings.Fields(c.extra) {
			kv, ok := strings.CutPrefix(a, "--cfg=")
			if !ok {
				continue
			}
			k, v, _ := strings.Cut(kv, ":")
			if err := cfg.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return tr, m, cfg
}

// TestExpectedCases replays every case of SimGrid's replay tests and
// compares the simulated time with what SimGrid 3.32 prints (6 decimals).
func TestExpectedCases(t *testing.T) {
	base, cases := readCases(t)
	var table strings.Builder
	fmt.Fprintf(&table, "%-34s %14s %14s\n", "case", "SimGrid 3.32", "Kairos")
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			tr, m, cfg := c.setup(t, base)
			res, err := sim.Run(tr, m, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("%.6f", res.Time)
			fmt.Fprintf(&table, "%-34s %14s %14s\n", c.id, c.expected, got)
			if got != c.expected {
				t.Errorf("simulated time %s (%.9f), SimGrid prints %s", got, res.Time, c.expected)
			}
		})
	}
	t.Log("\n" + table.String())
}

// timing is one verbose replay line: the action's end date and duration.
type timing struct{ end, dur string }

// recorder keeps every action's timing per rank, as SimGrid logs them
// (init and finalize are not logged).
type recorder struct{ byRank map[int][]timing }

func (r *recorder) Action(rank int, e *trace.Event, start, end float64) {
	if e.Kind == trace.Init || e.Kind == trace.Finalize {
		return
	}
	r.byRank[rank] = append(r.byRank[rank], timing{fmt.Sprintf("%.6f", end), fmt.Sprintf("%.6f", end-start)})
}

// teshTimings reads replay.tesh: for each verbose run, the trace files it
// replays (joined by ';') and the per-rank timings SimGrid printed.
func teshTimings(t *testing.T, path string) map[string]map[int][]timing {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int][]timing{}
	var inputs []string
	var cur map[int][]timing
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "< replay/"):
			if cur != nil {
				inputs, cur = nil, nil
			}
			inputs = append(inputs, strings.TrimPrefix(line, "< "))
		case strings.HasPrefix(line, "$ ") && strings.Contains(line, "smpi_replay.thresh:verbose"):
			cur = map[int][]timing{}
			out[strings.Join(inputs, ";")] = cur
		case strings.HasPrefix(line, "> ") && cur != nil && strings.Contains(line, "[smpi_replay/VERBOSE]"):
			f := strings.Fields(line[strings.Index(line, "VERBOSE]")+8:])
			head := strings.Fields(line[strings.Index(line, "(")+1:])
			end := strings.TrimSuffix(head[1], "]")
			r, _ := strconv.Atoi(f[0])
			cur[r] = append(cur[r], timing{end, f[len(f)-1]})
		case strings.HasPrefix(line, "$ rm"):
			inputs, cur = nil, nil
		}
	}
	return out
}

// TestReplayTeshTimings checks every action's end date and duration
// against the verbose lines of SimGrid's replay.tesh.
func TestReplayTeshTimings(t *testing.T) {
	base, cases := readCases(t)
	want := teshTimings(t, filepath.Join(base, "examples/smpi/replay/replay.tesh"))
	checked := 0
	for _, c := range cases {
		w, ok := want[c.desc]
		if !ok || c.dir != "examples/smpi" {
			continue
		}
		t.Run(c.id, func(t *testing.T) {
			tr, m, cfg := c.setup(t, base)
			rec := &recorder{byRank: map[int][]timing{}}
			if _, err := sim.Run(tr, m, cfg, rec); err != nil {
				t.Fatal(err)
			}
			for r, seq := range w {
				got := rec.byRank[r]
				if len(got) != len(seq) {
					t.Fatalf("rank %d: %d actions logged, SimGrid logs %d", r, len(got), len(seq))
				}
				for i := range seq {
					if got[i] != seq[i] {
						t.Errorf("rank %d action %d: ends %s after %s, SimGrid: %s after %s", r, i, got[i].end, got[i].dur, seq[i].end, seq[i].dur)
					}
				}
			}
		})
		checked++
	}
	if checked < 8 {
		t.Errorf("only %d tesh runs matched a case", checked)
	}
}

// TestSimulateOnPlatform: the platform-level entry point deploys as
// smpirun does.
func TestSimulateOnPlatform(t *testing.T) {
	dir := testenv.Shared(t, "simgrid-replay-tests/examples/smpi")
	tr, err := ti.OpenWith(filepath.Join(dir, "replay/actions_bcast.txt"), ti.ReaderOptions{NumRanks: 3})
	if err != nil {
		t.Fatal(err)
	}
	p, err := platform.Load(filepath.Join(dir, "../platforms/small_platform.xml"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := platform.ReadHostfile(filepath.Join(dir, "hostfile"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Simulate(tr, p, names, sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%.6f", res.Time); got != "19.692506" {
		t.Errorf("simulated time %s, want 19.692506", got)
	}
}
