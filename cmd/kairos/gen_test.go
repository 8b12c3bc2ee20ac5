package main

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"kairos/check"
	"kairos/format"
	"kairos/trace"
	"kairos/workload"
)

// genRun runs the CLI and returns its exit code, stdout and stderr.
func genRun(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestGenList(t *testing.T) {
	code, out, errb := genRun("gen", "--list")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, k := range workload.Kinds() {
		if !strings.Contains(out, k+" ") || !strings.Contains(out, workload.Describe(k)) {
			t.Errorf("--list lacks %s: %s", k, out)
		}
	}
	if !strings.Contains(out, "defaults: ranks=64 grid=8x8 iterations=1000") {
		t.Errorf("--list does not show stencil2d's defaults:\n%s", out)
	}
}

func TestGenHelp(t *testing.T) {
	code, out, _ := genRun("gen", "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Examples:", "kairos gen stencil2d", "--allreduce-every", "masterworker", "--periodic=false", "--delay 5:7,23,41:6"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestGenStdout: with no -o the trace goes to standard output as TI text.
func TestGenStdout(t *testing.T) {
	code, out, errb := genRun("gen", "ring", "-n", "3", "-i", "1", "-b", "1K")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	want := `0 init
0 compute 1000000
0 send 1 1 1024
0 recv 2 1 1024
0 finalize
1 init
1 compute 1000000
1 recv 0 1 1024
1 send 2 1 1024
1 finalize
2 init
2 compute 1000000
2 recv 1 1 1024
2 send 0 1 1024
2 finalize
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// genTestArgs are the flags that make a small instance of each kind.
var genTestArgs = map[string][]string{
	"bt":           {"-n", "9", "-i", "2"},
	"cg":           {"-n", "8", "-i", "1", "--inner", "3"},
	"ft":           {"-n", "8", "-i", "2", "-b", "4K"},
	"is":           {"-n", "6", "-i", "2", "-b", "64K"},
	"lu":           {"--grid", "3x2", "-i", "2", "--planes", "6", "--allreduce-every", "1"},
	"masterworker": {"-n", "5", "--tasks", "30"},
	"mg":           {"--grid", "2x2x2", "-i", "1", "--levels", "3"},
	"pingpong":     {"-n", "4", "-i", "2", "-b", "100"},
	"ring":         {"-n", "5", "-i", "3", "--allreduce-every", "2"},
	"stencil2d":    {"--grid", "4x3", "-i", "4", "--periodic=false"},
	"stencil3d":    {"--grid", "3x2x2", "-i", "2"},
	"sweep":        {"--grid", "3x3", "-i", "1", "--blocks", "2"},
}

// TestGenEveryKind writes every kind through the CLI in both formats, reads
// the file back, compares it with the generator's events and checks it
// under rendezvous sends.
func TestGenEveryKind(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range workload.Kinds() {
		args, ok := genTestArgs[kind]
		if !ok {
			t.Errorf("no test arguments for %s", kind)
			continue
		}
		if workload.Applies(kind, workload.ParamNoise) {
			args = append(args, "--imbalance", "0.3", "--noise", "0.1", "--seed", "42")
		}
		if workload.Applies(kind, workload.ParamDelay) {
			args = append(args, "--delay", "1:0:3")
		}
		for _, ext := range []string{".ktr", ".ti", ".ti.gz"} {
			path := filepath.Join(dir, kind+ext)
			code, _, errb := genRun(append([]string{"gen", kind, "-o", path}, args...)...)
			if code != exitOK {
				t.Fatalf("%s: exit %d: %s", path, code, errb)
			}
			got, _, err := format.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			want := genDirect(t, kind, args)
			if err := genSameEvents(got, want, ext != ".ktr"); err != nil {
				t.Errorf("%s: %v", path, err)
			}
			rep, err := check.Check(got, check.Options{Protocol: check.Rendezvous})
			if err != nil || !rep.OK() || rep.Warnings > 0 {
				t.Errorf("%s: check: %v %v", path, err, rep.Problems)
			}
		}
	}
}

// genDirect returns the source the flags describe, built directly.
func genDirect(t *testing.T, kind string, args []string) trace.Source {
	t.Helper()
	var f genFlags
	cmd := genCommand(&f)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	p, err := genParams(cmd.Flags(), kind, &f)
	if err != nil {
		t.Fatal(err)
	}
	src, err := workload.New(kind, p)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// genSameEvents compares two traces event by event; lossy allows the
// 6-significant-digit compute volumes and the lack of call sites of TI.
func genSameEvents(got, want trace.Source, lossy bool) error {
	if got.NumRanks() != want.NumRanks() {
		return fmt.Errorf("%d ranks, want %d", got.NumRanks(), want.NumRanks())
	}
	a, err := trace.Load(got)
	if err != nil {
		return err
	}
	b, err := trace.Load(want)
	if err != nil {
		return err
	}
	for r := range a.Ranks {
		ra, rb := a.Ranks[r].Reader(), b.Ranks[r].Reader()
		for i := 0; ; i++ {
			na, nb := ra.Next(), rb.Next()
			if na != nb {
				return fmt.Errorf("rank %d: lengths differ at event %d", r, i)
			}
			if !na {
				break
			}
			x, y := *ra.Event(), *rb.Event()
			if lossy {
				if math.Abs(x.Compute-y.Compute) > 1e-5*y.Compute {
					return fmt.Errorf("rank %d event %d: compute %g, want %g", r, i, x.Compute, y.Compute)
				}
				x.Compute, y.Compute = 0, 0
			} else if x.CallSite != y.CallSite || got.Meta().CallPath(x.Region)[0] != "main" {
				return fmt.Errorf("rank %d event %d: call site or region lost", r, i)
			}
			if x.String() != y.String() {
				return fmt.Errorf("rank %d event %d: %v, want %v", r, i, x.String(), y.String())
			}
		}
	}
	return nil
}

// TestGenStencilDefault: the default stencil2d written by the CLI has the
// 646,528 events of the benchmark.
func TestGenStencilDefault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.ktr")
	if code, _, errb := genRun("gen", "stencil2d", "-o", path); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	src, _, err := format.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := trace.ForEach(src, func(_, _ int, _ *trace.Event) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 646528 || src.NumRanks() != 64 {
		t.Errorf("%d events in %d ranks, want 646,528 in 64", n, src.NumRanks())
	}
}

func TestGenErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gen"}, exitUsage, "gen takes one workload KIND"},
		{[]string{"gen", "ring", "stencil2d"}, exitUsage, "got 2 arguments"},
		{[]string{"gen", "nosuch"}, exitUsage, `unknown workload "nosuch"`},
		{[]string{"gen", "ring", "--periodic"}, exitUsage, "--periodic does not apply to ring"},
		{[]string{"gen", "ring", "--grid", "2x2", "--tasks", "3"}, exitUsage, "--grid does not apply to ring; --tasks does not apply to ring"},
		{[]string{"gen", "stencil2d", "--grid", "8x"}, exitUsage, `extent "" is not a positive integer`},
		{[]string{"gen", "stencil2d", "--grid", "4x4", "-n", "8"}, exitUsage, "grid 4x4 has 16 ranks, not 8"},
		{[]string{"gen", "stencil3d", "--grid", "4x4"}, exitUsage, "needs a 3-D process grid"},
		{[]string{"gen", "ring", "-b", "0"}, exitUsage, "bytes must be in [1, "},
		{[]string{"gen", "ring", "-b", "lots"}, exitUsage, `"lots" is not a byte count`},
		{[]string{"gen", "ring", "--noise", "1.5"}, exitUsage, "noise must be in [0, 1)"},
		{[]string{"gen", "cg", "-n", "6"}, exitUsage, "power-of-two"},
		{[]string{"gen", "ring", "--to", "nosuch"}, exitUsage, `cannot write format "nosuch"`},
		{[]string{"gen", "ring", "-o", filepath.Join(dir, "out.xyz")}, exitUsage, "cannot tell the output format"},
		{[]string{"gen", "ring", "-o", filepath.Join(dir, "missing", "out.ktr")}, exitFailed, "missing"},
		{[]string{"gen", "ring", "--delay", "5:7"}, exitUsage, `--delay: delay "5:7": want RANK:IT[,IT...]:FACTOR`},
		{[]string{"gen", "ring", "--delay", "5:7:0.5"}, exitUsage, `factor "0.5" is not a number in [1, 1e+06]`},
		{[]string{"gen", "ring", "-n", "4", "--delay", "5:7:2"}, exitUsage, "delay 5:7:2: rank 5 is not in [0, 4)"},
		{[]string{"gen", "ring", "-i", "7", "--delay", "1:7:2"}, exitUsage, "iteration 7 is not in [0, 7) (iterations are 0-based)"},
		{[]string{"gen", "masterworker", "--delay", "1:0:2"}, exitUsage, "--delay does not apply to masterworker"},
	}
	for _, c := range cases {
		code, _, errb := genRun(c.args...)
		if code != c.code || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, errb, c.code, c.want)
		}
	}
}

// TestGenDelay: --delay multiplies exactly the delayed rank's computations
// of the listed iterations, as the TI text shows, and names the delay in
// the trace's parameters.
func TestGenDelay(t *testing.T) {
	code, out, errb := genRun("gen", "ring", "-n", "3", "-i", "3", "--delay", "2:2,0:4.5")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "compute") {
			got = append(got, line)
		}
	}
	want := []string{
		"0 compute 1000000", "0 compute 1000000", "0 compute 1000000",
		"1 compute 1000000", "1 compute 1000000", "1 compute 1000000",
		"2 compute 4500000", "2 compute 1000000", "2 compute 4500000",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("computations:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	path := filepath.Join(t.TempDir(), "slow.ktr")
	if code, _, errb := genRun("gen", "stencil2d", "--grid", "4x4", "-i", "60", "--delay", "5:7,23,41:6", "-o", path); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb)
	}
	src, _, err := format.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if p := src.Meta().Attrs["parameters"]; !strings.Contains(p, "delay=5:7,23,41:6") {
		t.Errorf("parameters %q do not name the delay", p)
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4096", 4096, true}, {"64K", 65536, true}, {"1m", 1 << 20, true}, {"2G", 2 << 30, true},
		{" 8 ", 8, true}, {"", 0, false}, {"K", 0, false}, {"1.5K", 0, false}, {"12x", 0, false},
		{"9999999999999G", 0, false},
	} {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v", c.in, got, err)
		}
	}
}
