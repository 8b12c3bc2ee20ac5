package sim_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"kairos/format/ti"
	"kairos/sim"
	"kairos/workload"
)

// TestVerboseLogMatchesSimGrid compares Kairos' verbose log (--verbose)
// with SimGrid's (smpi_replay.thresh:verbose) line by line: the same
// actions ending at the same dates, and, among actions ending at one
// date, in the same order, which is the order in which SimGrid's actors
// run in its scheduling rounds (an action whose last simcall is answered
// at once ends in the next round). Every generator at 8 ranks (9 for the
// square ones) and random traces, on one and two ranks per host.
func TestVerboseLogMatchesSimGrid(t *testing.T) {
	t.Parallel()
	seeds := randomSeeds(t, 40)
	dir, xml, hostfile := smallCluster(t, 8, "")
	hostfiles := map[int]string{1: hostfile, 2: sharedHostfile(t, dir, 8, 2)}
	for _, kind := range workload.Kinds() {
		for _, perHost := range []int{1, 2} {
			text, n, ok := generated(t, kind, dir)
			if !ok {
				continue
			}
			compareVerbose(t, fmt.Sprintf("%s, %d per host", kind, perHost), dir, text, xml, hostfiles[perHost], n, perHost)
		}
	}
	for seed := firstSeed(); seed < firstSeed()+seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 17))
		n := 2 + rng.IntN(7)
		compareVerbose(t, fmt.Sprintf("random seed %d", seed), dir, randomTrace(rng, n), xml, hostfiles[2], n, 2)
	}
}

// generated returns the TI text of a small instance of the workload kind
// (8 ranks, or 9 where it wants a square), and its number of ranks.
func generated(t *testing.T, kind, dir string) (string, int, bool) {
	t.Helper()
	p, err := workload.Defaults(kind)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{8, 9} {
		p.Ranks, p.Grid, p.Iterations = n, nil, min(p.Iterations, 3)
		src, err := workload.New(kind, p)
		if err != nil {
			continue
		}
		path := filepath.Join(dir, "gen.ti")
		if _, err := ti.WriteFile(path, src, ti.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), n, true
	}
	t.Errorf("%s: no instance at 8 or 9 ranks", kind)
	return "", 0, false
}

var (
	sgVerbose = regexp.MustCompile(`^\[([0-9.]+)\] ([0-9]+) ([A-Za-z]+) `)
	kVerbose  = regexp.MustCompile(`^\[([0-9.]+)\] \([0-9]+@[^)]*\) ([0-9]+) ([A-Za-z]+) `)
)

// verboseLines returns the date, rank and action of each verbose line of
// out that re matches.
func verboseLines(out string, re *regexp.Regexp) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			lines = append(lines, m[1]+" "+m[2]+" "+m[3])
		}
	}
	return lines
}

// compareVerbose replays text (n ranks, perHost a host) with Kairos and
// SimGrid and requires the same verbose lines in the same order.
func compareVerbose(t *testing.T, name, dir, text, xml, hostfile string, n, perHost int) {
	t.Helper()
	tr := writeTrace(t, dir, text)
	if err := os.WriteFile(filepath.Join(dir, "desc"), []byte("t.ti\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	v := &sim.Verbose{W: &buf}
	if _, err := sim.Run(tr, machinePerHost(t, xml, n, perHost), sim.DefaultConfig(), v); err != nil {
		return // refused or deadlocked: the random differential tests compare those
	}
	_, out, err := runSimGridWithin(time.Minute, dir, "desc", xml, hostfile, n,
		"--log=smpi_replay.thresh:verbose", "--log=root.fmt:[%.6r]%e%m%n")
	if err != nil {
		t.Fatalf("%s: SimGrid: %v\n%s", name, err, out)
	}
	want, got := verboseLines(out, sgVerbose), verboseLines(buf.String(), kVerbose)
	if len(want) == 0 {
		t.Fatalf("%s: no verbose line from SimGrid:\n%s", name, out)
	}
	for i := range max(len(want), len(got)) {
		if i >= len(want) || i >= len(got) || want[i] != got[i] {
			if len(text) > 4000 {
				text = "" // a generated workload: the name says which
			}
			t.Errorf("%s: line %d: SimGrid %q, Kairos %q (%d and %d lines)\n%s", name, i+1, at(want, i), at(got, i), len(want), len(got), text)
			return
		}
	}
}

// at returns lines[i], or "" past the end.
func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}
