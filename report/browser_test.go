package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kairos/internal/testenv"
	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
	"kairos/workload"
)

// stencilReport builds the report of a generated 2-D stencil on a grid
// (imbalanced, noisy, one rank six times slower in two iterations),
// simulated on a crossbar cluster.
func stencilReport(t testing.TB, grid []int, iterations int) *Report {
	t.Helper()
	p, err := workload.Defaults("stencil2d")
	if err != nil {
		t.Fatal(err)
	}
	p.Grid, p.Ranks = grid, grid[0]*grid[1]
	p.Iterations, p.Imbalance, p.Noise, p.Seed = iterations, 0.2, 0.05, 3
	p.Delay = workload.Delay{Rank: p.Ranks / 3, Iterations: []int{iterations/2 - 1, iterations - 1}, Factor: 6}
	gen, err := workload.New("stencil2d", p)
	if err != nil {
		t.Fatal(err)
	}
	src, err := trace.Load(gen)
	if err != nil {
		t.Fatal(err)
	}
	machine := fmt.Sprintf("%dx1Gf,125MBps,50us", p.Ranks)
	return Build(src, Options{Name: "stencil.ktr", Machine: machine, Speed: 1e9, Simulate: func(src trace.Source, _ bool) (*sim.Result, *trace.Trace, error) {
		return simulate(src, machine)
	}})
}

func simulate(src trace.Source, machine string) (*sim.Result, *trace.Trace, error) {
	plat, err := platform.ParseCluster(machine)
	if err != nil {
		return nil, nil, err
	}
	hosts, err := platform.Deploy(plat, nil, src.NumRanks(), platform.RoundRobin)
	if err != nil {
		return nil, nil, err
	}
	m, err := sim.FromPlatform(plat, hosts)
	if err != nil {
		return nil, nil, err
	}
	tt := sim.NewTimedTrace(src.NumRanks(), src.Meta())
	res, err := sim.Run(src, m, sim.DefaultConfig(), tt)
	return res, tt.T, err
}

var drawnRanks = regexp.MustCompile(`data-drawn-ranks="(\d+)"`)

// checkPage loads page in headless Chromium and checks that it renders,
// that its timeline draws ranks ranks, and that no script error is
// logged.
func checkPage(t *testing.T, page string, ranks int) string {
	t.Helper()
	dom, log := testenv.Browse(t, page)
	if !strings.Contains(dom, `data-timeline="drawn"`) {
		t.Fatalf("the timeline was not drawn; log:\n%s", log)
	}
	if m := drawnRanks.FindStringSubmatch(dom); m == nil || m[1] != fmt.Sprint(ranks) {
		t.Errorf("the timeline drew %v ranks, want %d", m, ranks)
	}
	if errs := testenv.ScriptErrors(dom, log); errs != nil {
		t.Errorf("script errors: %s", strings.Join(errs, "\n"))
	}
	return dom
}

// TestReportInChromium opens the report of a 64-rank and of a 1,024-rank
// run in headless Chromium: the page renders, the timeline draws every
// rank, and no script error is logged.
func TestReportInChromium(t *testing.T) {
	testenv.Tool(t, "chromium", "chromium")
	for _, c := range []struct {
		grid       []int
		iterations int
	}{{[]int{8, 8}, 40}, {[]int{32, 32}, 6}} {
		ranks := c.grid[0] * c.grid[1]
		t.Run(fmt.Sprint(ranks), func(t *testing.T) {
			r := stencilReport(t, c.grid, c.iterations)
			if n := r.Failed(); n > 0 {
				t.Fatalf("%d analyses failed: %v %v", n, r.SimErr, r.TimelineErr)
			}
			page := filepath.Join(t.TempDir(), "report.html")
			var b bytes.Buffer
			if err := r.WriteHTML(&b); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			dom := checkPage(t, page, ranks)
			if ranks == 64 {
				// A view given in the address: a tenth of the run on ranks
				// 16 to 31.
				t1 := 0.1 * (r.Timeline.End - r.Timeline.Start).Seconds()
				dom, log := testenv.Browse(t, fmt.Sprintf("%s#t=0,%g&r=16,32", page, t1))
				if !strings.Contains(dom, fmt.Sprintf(`data-view="0.00000,%.6g,16,32"`, t1)) || !strings.Contains(dom, `data-drawn-ranks="16"`) {
					t.Errorf("the view in the address was not shown: %s", regexp.MustCompile(`data-(view|drawn-ranks)="[^"]*"`).FindAllString(dom, -1))
				}
				if errs := testenv.ScriptErrors(dom, log); errs != nil {
					t.Errorf("script errors: %s", strings.Join(errs, "\n"))
				}
			}
			for _, want := range []string{"How long does it run?", "What bounds it?", "Which phase is slowest?", `<canvas id="tl-canvas"`} {
				if !strings.Contains(dom, want) {
					t.Errorf("the rendered page lacks %q", want)
				}
			}
		})
	}
}
