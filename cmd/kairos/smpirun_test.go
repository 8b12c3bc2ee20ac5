package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"kairos/internal/testenv"
)

// TestSmpirunArgs: smpirun's command line becomes Kairos' flags.
func TestSmpirunArgs(t *testing.T) {
	for _, c := range []struct {
		in, want []string
		err      string
	}{
		{in: []string{"-np", "4", "-platform", "p.xml", "-hostfile", "hf", "-replay", "desc"},
			want: []string{"--np", "4", "--platform", "p.xml", "--hostfile", "hf", "--", "desc"}},
		{in: []string{"-n", "2", "-machinefile", "hf", "t.ti", "-map", "-quiet", "-keep-temps", "-analyze"},
			want: []string{"--np", "2", "--hostfile", "hf", "t.ti", "--show-map", "--cfg", "smpi/display-timing:yes"}},
		{in: []string{"t.ti", "-trace"}, want: []string{"t.ti", "--paje", "smpi_simgrid.trace"}},
		{in: []string{"-trace-file", "x.paje", "t.ti", "-trace", "-trace-comment", "hello"}, want: []string{"t.ti", "--paje", "x.paje"}},
		{in: []string{"-trace-ti", "t.ti"}, want: []string{"t.ti", "--timed-trace", "smpi_simgrid.txt", "--to", "ti"}},
		{in: []string{"-trace-file", "x.paje", "t.ti"}, want: []string{"t.ti"}}, // as smpirun: no -trace, no trace
		{in: []string{"-replay", "-odd.ti", "--cluster", "2x1Gf,1GBps,1us"}, want: []string{"--cluster", "2x1Gf,1GBps,1us", "--", "-odd.ti"}},
		{in: []string{"t.ti", "--cfg=smpi/bcast:NTSL", "-v"}, want: []string{"t.ti", "--cfg=smpi/bcast:NTSL", "-v"}},
		{in: []string{"t.ti", "-replay"}, err: "smpirun's -replay needs a value"},
		{in: []string{"t.ti", "-gdb"}, err: "runs a program under a tool"},
		{in: []string{"t.ti", "-bandwidth", "1e9"}, err: "give the machine with -platform or --cluster"},
	} {
		got, err := smpirunArgs(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("%q: %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}

// TestSimulateSmpirunOptions runs simulate with smpirun's command line
// and with the SimGrid settings it stands for: the placement printed, the
// Paje and TI traces written where asked.
func TestSimulateSmpirunOptions(t *testing.T) {
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	dir := t.TempDir()
	plat, hf := testenv.Cluster(t, dir, 4)
	paje := filepath.Join(dir, "run.paje")
	code, out, errs := csRun("simulate", "-np", "4", "-platform", plat, "-hostfile", hf, "-map", "-trace", "-trace-file", paje, "-quiet", "-analyze", "-replay", ring)
	if code != 0 || !strings.HasPrefix(out, "Simulation time 0.042675 ") || !strings.HasPrefix(errs, "[rank 0] -> node-0\n[rank 1] -> node-1\n") ||
		!strings.Contains(errs, "\nSimulated time: 0.0426754 seconds. \n\nThe simulation took ") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	if data, err := os.ReadFile(paje); err != nil || !strings.Contains(string(data), "%EventDef PajeSetState") {
		t.Errorf("paje trace (%v):\n%.200s", err, data)
	}
	ti := filepath.Join(dir, "run.txt")
	code, out, errs = csRun("simulate", ring, "--platform", plat, "--cfg", "tracing:yes", "--cfg", "tracing/smpi:yes",
		"--cfg", "tracing/smpi/format:TI", "--cfg", "tracing/filename:"+ti, "--cfg", "smpi/map:1")
	if code != 0 || !strings.Contains(errs, "[rank 3] -> node-3\n") {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	// The TI trace replays to the same time.
	if code, again, errs := csRun("simulate", ti, "--platform", plat); code != 0 || !strings.HasPrefix(again, "Simulation time 0.042675 ") {
		t.Errorf("replay of the TI trace: exit %d\n%s%s", code, again, errs)
	}
	if code, _, errs := csRun("simulate", ring, "--platform", plat, "--cfg", "smpi/map:maybe"); code != 2 || !strings.Contains(errs, "smpi/map") {
		t.Errorf("smpi/map:maybe: exit %d, %s", code, errs)
	}
}

// TestShowMapMatchesSmpirun: -map prints the placement smpirun prints,
// on a hostfile with slots and more ranks than slots.
func TestShowMapMatchesSmpirun(t *testing.T) {
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir := t.TempDir()
	plat, _ := testenv.Cluster(t, dir, 4)
	if err := os.WriteFile(filepath.Join(dir, "slots"), []byte("node-2:2\nnode-0\nnode-3:3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const n = 9
	var desc strings.Builder
	for r := range n {
		name := fmt.Sprintf("r%d.ti", r)
		if err := os.WriteFile(filepath.Join(dir, name), fmt.Appendf(nil, "%d init\n%d compute 1000\n%d finalize\n", r, r, r), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&desc, name)
	}
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte(desc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runIn(dir, 2*time.Minute, "smpirun", "-np", fmt.Sprint(n), "-platform", plat, "-hostfile", "slots", "-map", "-replay", "desc",
		"--log=xbt_cfg.thresh:critical", "--log=smpi_config.thresh:critical")
	var want strings.Builder
	for _, m := range regexp.MustCompile(`\[rank \d+\] -> \S+`).FindAll(out, -1) {
		fmt.Fprintf(&want, "%s\n", m)
	}
	if err != nil || strings.Count(want.String(), "\n") != n {
		t.Fatalf("smpirun: %v\n%s", err, out)
	}
	code, _, errs := csRun("simulate", "-np", fmt.Sprint(n), "-platform", plat, "-hostfile", filepath.Join(dir, "slots"), "-map", "-replay", filepath.Join(dir, "desc"))
	if code != 0 || errs != want.String() {
		t.Errorf("exit %d, kairos:\n%s\nsmpirun:\n%s", code, errs, want.String())
	}
}

// TestPajeReadByPajeng: pajeng's pj_dump accepts the Paje trace of the
// Figure 1 ring, and finds its messages' arrows where SimGrid's -trace
// puts them (sent after the 1 ms computation, received 9.669 ms later,
// around the ring).
func TestPajeReadByPajeng(t *testing.T) {
	pjDump := testenv.Tool(t, "pj_dump", "pajeng")
	ring := testenv.WriteFile(t, "ring.ti", testenv.Figure1Ring)
	paje := filepath.Join(t.TempDir(), "ring.paje")
	if code, out, errs := csRun("simulate", ring, "--cluster", "4x1Gf,125MBps,50us", "--paje", paje); code != 0 {
		t.Fatalf("exit %d:\n%s%s", code, out, errs)
	}
	out, err := exec.Command(pjDump, paje).CombinedOutput()
	if err != nil {
		t.Fatalf("pj_dump %s: %v\n%s", paje, err, out)
	}
	var links []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Link,") {
			f := strings.Split(line, ", ")
			links = append(links, strings.Join([]string{f[3], f[4], f[8], f[9]}, " "))
		}
	}
	want := []string{
		"0.001000 0.010669 rank 0 @ node-0 rank 1 @ node-1",
		"0.011669 0.021338 rank 1 @ node-1 rank 2 @ node-2",
		"0.022338 0.032007 rank 2 @ node-2 rank 3 @ node-3",
		"0.033007 0.042675 rank 3 @ node-3 rank 0 @ node-0",
	}
	if !slices.Equal(links, want) {
		t.Errorf("pj_dump's links:\n%s\nwant:\n%s", strings.Join(links, "\n"), strings.Join(want, "\n"))
	}
}

// TestSimulateTracingInternals: from the command line, --cfg
// tracing/smpi/internals:yes makes the Paje trace draw every message of
// the run (the count the result line prints, the collectives' included),
// where without it only the trace's own point-to-point messages are drawn.
func TestSimulateTracingInternals(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "cg")
	if code, out, errs := csRun("gen", "cg", "--ranks", "4", "--iterations", "2", "-o", tr, "--to", "ti"); code != 0 {
		t.Fatalf("gen: exit %d\n%s%s", code, out, errs)
	}
	links := func(extra ...string) (drawn, messages int) {
		t.Helper()
		paje := filepath.Join(dir, fmt.Sprintf("run%d.paje", len(extra)))
		code, out, errs := csRun(append([]string{"simulate", tr, "--cluster", "4x1Gf,125MBps,50us", "--paje", paje}, extra...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", extra, code, out, errs)
		}
		m := regexp.MustCompile(`([0-9]+) messages`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no message count in:\n%s", out)
		}
		fmt.Sscan(m[1], &messages)
		b, err := os.ReadFile(paje)
		if err != nil {
			t.Fatal(err)
		}
		id := regexp.MustCompile(`(?m)^%EventDef PajeStartLink ([0-9]+)$`).FindSubmatch(b)
		if id == nil {
			t.Fatalf("%s defines no link start", paje)
		}
		return len(regexp.MustCompile(`(?m)^`+string(id[1])+` `).FindAll(b, -1)), messages
	}
	own, all := links()
	drawn, messages := links("--cfg", "tracing/smpi/internals:yes")
	if drawn != messages || own >= drawn || all != messages {
		t.Errorf("links drawn: %d without internals, %d with, for %d messages", own, drawn, messages)
	}
}
