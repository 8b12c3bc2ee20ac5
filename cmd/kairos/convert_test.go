package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
	"kairos/internal/testenv"
	"kairos/trace"
)

// csEvents reads every event of the trace at path, as strings.
func csEvents(t *testing.T, path string) []string {
	t.Helper()
	src, err := openTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		s := e.String()
		if e.HasTime {
			s += " timed"
		}
		out = append(out, strings.Repeat(" ", r)+s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestConvertCLI(t *testing.T) {
	in := statsSample(t) // timed
	dir := t.TempDir()

	for _, args := range [][]string{{in, "copy.ktr"}, {in, "-o", "copy-o.ktr"}} { // OUT, or -o OUT as other verbs take it
		out := filepath.Join(dir, args[len(args)-1])
		args = append(append([]string{"convert"}, args[:len(args)-1]...), out)
		if code, stdout, errs := csRun(args...); code != 0 || stdout != "" || errs != "" {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, errs)
		}
		if got, want := csEvents(t, out), csEvents(t, in); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%v: copy differs:\n%s\nwant\n%s", args, got, want)
		}
	}

	untimed := filepath.Join(dir, "untimed.bin")
	if code, _, errs := csRun("convert", "--to", "ktr", "--speed", "1Gf", in, untimed); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := csEvents(t, untimed)
	// Rank 1: recv, recv, compute (its own 2 ms becomes 2e6 flops, plus
	// the gaps around it), allreduce, bcast; a 1 ms gap before each.
	want := []string{
		" recv peer=0 tag=0 recv=100",
		" compute compute=1e+06",
		" recv peer=0 tag=0 recv=100",
		" compute compute=4e+06",
		" allreduce send=8 recv=8 compute=5",
		" compute compute=1e+06",
		" bcast root=0 send=64 recv=64",
	}
	var rank1 []string
	for _, s := range got {
		if strings.HasPrefix(s, " ") && !strings.HasPrefix(s, "  ") {
			rank1 = append(rank1, s)
		}
	}
	if strings.Join(rank1, "\n") != strings.Join(want, "\n") {
		t.Errorf("untimed rank 1:\n%s\nwant\n%s", strings.Join(rank1, "\n"), strings.Join(want, "\n"))
	}
}

func TestConvertCLIUsage(t *testing.T) {
	in := statsSample(t)
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"convert", in, filepath.Join(dir, "out.unknown")}, 2, "cannot tell the output format"},
		{[]string{"convert", "--to", "nope", in, filepath.Join(dir, "x")}, 2, "cannot write format"},
		{[]string{"convert", "--speed", "-3", in, filepath.Join(dir, "x.ktr")}, 2, "not a positive flop rate"},
		{[]string{"convert", "--speed", "fast", in, filepath.Join(dir, "x.ktr")}, 2, "not a positive flop rate"},
		{[]string{"convert", in}, 2, "takes IN and OUT, or IN and -o OUT: got 1 argument(s)"},
		{[]string{"convert", in, filepath.Join(dir, "x.ktr"), "-o", filepath.Join(dir, "y.ktr")}, 2, "got 2 argument(s) besides -o"},
		{[]string{"convert", filepath.Join(dir, "none.ktr"), filepath.Join(dir, "x.ktr")}, 1, "none.ktr"},
	} {
		code, _, errs := csRun(c.args...)
		if code != c.code || !strings.Contains(errs, c.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errs, c.code, c.err)
		}
	}
}

// TestConvertCLIToTI converts a timed trace to TI text, with and without
// --speed, when the ti format can be written.
func TestConvertCLIToTI(t *testing.T) {
	if f, ok := format.ByName("ti"); !ok || f.Write == nil {
		t.Skip("the ti format cannot be written yet")
	}
	in := statsSample(t)
	out := filepath.Join(t.TempDir(), "out.ti")
	code, _, errs := csRun("convert", in, out)
	if code != 0 || !strings.Contains(errs, "is timed") {
		t.Errorf("without --speed: exit %d, stderr %q", code, errs)
	}
	code, _, errs = csRun("convert", "--speed", "1e9", in, out)
	if code != 0 || !strings.Contains(errs, "ranks without init were given one") || strings.Contains(errs, "is timed") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if code, out, _ := csRun("check", out); code != 0 || out != "" {
		t.Errorf("converted trace does not pass check: %s", out)
	}
	// Per rank, into a directory not made yet, as convert --help shows.
	desc := filepath.Join(t.TempDir(), "run-ti", "index.txt")
	if code, _, errs := csRun("convert", "--to", "ti", "--speed", "1e9", in, desc); code != 0 {
		t.Errorf("into a new directory: exit %d: %s", code, errs)
	} else if code, out, _ := csRun("check", desc); code != 0 || out != "" {
		t.Errorf("%s does not pass check: %s", desc, out)
	}
	local := csWrite(t, "ktr", "local.ktr", []trace.Event{csEvent(trace.Init, nil), csEvent(trace.Local, nil), csEvent(trace.Local, nil)})
	code, _, errs = csRun("convert", local, out)
	if want := "warning: " + out + ": 2 events TI cannot express were left out (local 2)\n"; code != 0 || errs != want {
		t.Errorf("dropped events: exit %d, stderr %q, want %q", code, errs, want)
	}
}

// TestConvertReduction: a reduction converted says that its times read
// back within its time error (they changed in silence), and one of exact
// times says nothing.
func TestConvertReduction(t *testing.T) {
	dir := t.TempDir()
	in := genTrace(t, dir, "stencil2d", "--noise", "0.05")
	for _, eps := range []string{"0.01", "0"} {
		rsd := filepath.Join(dir, "r"+eps+".rsd")
		if code, _, errs := csRun("reduce", "--time-error", eps, "-o", rsd, in); code != 0 {
			t.Fatalf("reduce: %s", errs)
		}
		out := filepath.Join(dir, "r"+eps+".ktr")
		code, _, errs := csRun("convert", rsd, out)
		want := ""
		if eps != "0" {
			want = "note: " + rsd + " is a reduction: its computations and times read back within its time error (1%), and " + out + " has them so\n"
		}
		if code != 0 || errs != want {
			t.Errorf("--time-error %s: exit %d, stderr %q, want %q", eps, code, errs, want)
		}
	}
}

// TestConvertReaderWarnings: what the TI reader tolerated is said, through
// the read-ahead that wraps the reader.
func TestConvertReaderWarnings(t *testing.T) {
	in := testenv.WriteFile(t, "cut.ti", "0 init\n0 compute 10\n0 finalize")
	out := filepath.Join(t.TempDir(), "out.ktr")
	code, _, errs := csRun("convert", in, out)
	if code != 0 || !strings.Contains(errs, "warning: ") || !strings.Contains(errs, "last line has no newline: dropped") {
		t.Errorf("exit %d, stderr %q; want the dropped line's warning", code, errs)
	}
}

func TestParseSpeed(t *testing.T) {
	for s, want := range map[string]float64{"2e9": 2e9, "1.5Gf": 1.5e9, "100Mf": 1e8, "7k": 7e3, "3f": 3} {
		if got, err := parseSpeed(s); err != nil || got != want {
			t.Errorf("parseSpeed(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "G", "0", "-1Gf", "NaN", "1e400"} {
		if _, err := parseSpeed(s); err == nil {
			t.Errorf("parseSpeed(%q) accepted", s)
		}
	}
}

// TestConvertCLIShared converts SimGrid's own TI trace to ktr and back:
// every event survives both ways.
func TestConvertCLIShared(t *testing.T) {
	in := testenv.Shared(t, "traces/ti/smpi-ring4/ring4.ti")
	dir := t.TempDir()
	ktr, ti := filepath.Join(dir, "ring4.ktr"), filepath.Join(dir, "ring4.ti")
	for _, args := range [][]string{{"convert", in, ktr}, {"convert", ktr, ti}} {
		if code, _, errs := csRun(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	want := csEvents(t, in)
	if len(want) != 103 {
		t.Errorf("%d events, want 103", len(want))
	}
	for _, p := range []string{ktr, ti} {
		if got := csEvents(t, p); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s differs from %s", p, in)
		}
	}
}

// TestConvertGOAL: a TI trace becomes a LogGOPSim schedule, its
// computations timed at --speed.
func TestConvertGOAL(t *testing.T) {
	dir := t.TempDir()
	in := testenv.WriteFile(t, "ring.ti",
		"0 init\n1 init\n0 compute 3e6\n0 send 1 0 100\n1 recv 0 0 100\n0 allreduce 8 100\n1 allreduce 8 100\n")
	out := filepath.Join(dir, "ring.goal")
	if code, stdout, errs := csRun("convert", "--speed", "2Gf", in, out); code != 0 || stdout != "" || errs != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Rank 0: 3e6 flops at 2 Gf = 1.5 ms; the allreduce's dissemination
	// (one round), then its 100 flops (50 ns).
	want := `num_ranks 2

rank 0 {
l1: calc 1500000
l2: send 100b to 1 tag 0
l2 requires l1
l3: send 8b to 1 tag 2147483648
l3 requires l2
l4: recv 8b from 1 tag 2147483648
l4 requires l2
l5: calc 0
l5 requires l3
l5 requires l4
l6: calc 50
l6 requires l5
}

rank 1 {
l1: recv 100b from 0 tag 0
l2: send 8b to 0 tag 2147483648
l2 requires l1
l3: recv 8b from 0 tag 2147483648
l3 requires l1
l4: calc 0
l4 requires l2
l4 requires l3
l5: calc 50
l5 requires l4
}
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// What GOAL cannot address is an error naming the input line, and
	// leaves no output.
	bad := testenv.WriteFile(t, "bad.ti", "0 init\n0 send 5 0 10\n1 init\n")
	badOut := filepath.Join(dir, "bad.goal")
	code, _, errs := csRun("convert", bad, badOut)
	if want := "rank 0, event 2 (send at " + bad + ":2): partner 5 out of range [0,2)"; code == 0 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, %q; want %q", code, errs, want)
	}
	if _, err := os.Stat(badOut); !os.IsNotExist(err) {
		t.Errorf("a failed conversion left %s: %v", badOut, err)
	}
	// GOAL is written, not read.
	code, _, errs = csRun("convert", out, filepath.Join(dir, "back.ti"))
	if code == 0 || !strings.Contains(errs, "not a trace in any format Kairos reads: a LogGOPSim GOAL schedule, which Kairos writes but does not read") {
		t.Errorf("reading a GOAL schedule: exit %d, %s", code, errs)
	}
}
