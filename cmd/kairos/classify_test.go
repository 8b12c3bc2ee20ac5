package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/trace"
	"kairos/workload"
)

// clGenTrace writes a generated workload to KIND.ktr in a temporary
// directory it makes the working directory, and returns the file's name.
func clGenTrace(t *testing.T, args ...string) string {
	t.Helper()
	table, err := filepath.Abs("testdata/classify/pingpong.csv")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	if err := os.Symlink(table, "pingpong.csv"); err != nil {
		t.Fatal(err)
	}
	path := args[0] + ".ktr"
	if code, _, errs := csRun(append(append([]string{"gen"}, args...), "-o", path)...); code != 0 {
		t.Fatalf("gen %v: exit %d: %s", args, code, errs)
	}
	return path
}

// golden compares with testdata from the working directory clGenTrace set.
func clGolden(t *testing.T, name, got string) {
	t.Helper()
	wd, _ := os.Getwd()
	t.Chdir(clOrigDir)
	golden(t, name, got)
	t.Chdir(wd)
}

var clOrigDir, _ = os.Getwd()

func TestClassifyCLI(t *testing.T) {
	path := clGenTrace(t, "pingpong", "--bytes", "8", "--iterations", "50")
	code, out, errs := csRun("classify", "--speed", "1Gf", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	clGolden(t, "classify/pingpong.txt", out)

	code, out, errs = csRun("classify", "--speed", "1Gf", "--json", "--network", "1gbe", "--custom", "hdr=200,0.6", path)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var got struct {
		Trace    string
		Verdicts []struct {
			Class        string
			Interconnect struct{ Name string }
			Predictions  []json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(got.Verdicts) != 2 || got.Verdicts[0].Class != "Latency" || got.Verdicts[1].Interconnect.Name != "hdr" || len(got.Verdicts[1].Predictions) != 21 {
		t.Errorf("--json verdicts: %+v", got.Verdicts)
	}
	code, out, errs = csRun("classify", "--speed", "1Gf", "--network", "qdr", "--config", "200,0.6", "--bw", "1", "--lat", "50", path)
	if code != 0 || !strings.Contains(out, "Other configurations:") || !strings.Contains(out, "\n        200   0.6  ") || !strings.Contains(out, "\n          1    50  0.020212") {
		t.Errorf("--config: exit %d, stderr %s\n%s", code, errs, out)
	}
	if code, _, errs = csRun("classify", "--speed", "1Gf", "--csv", "-o", "curves.csv", "--network", "1gbe", "--custom", "hdr=200,0.6", path); code != 0 {
		t.Fatalf("--csv: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile("curves.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1+2*21 || !strings.HasPrefix(lines[1], "1gbe,Latency,8X,1,6.25,") {
		t.Errorf("--csv: %d lines, first %q", len(lines), lines[min(1, len(lines)-1)])
	}
}

func TestClassifyTable(t *testing.T) {
	path := clGenTrace(t, "ft", "--ranks", "4", "--bytes", "1M", "--flops", "1e7", "--iterations", "2")
	code, out, errs := csRun("classify", "--speed", "1Gf", "--table", "pingpong.csv", "--curves", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	clGolden(t, "classify/ft-table.txt", out)
}

func TestPredictCLI(t *testing.T) {
	path := clGenTrace(t, "stencil2d", "--grid", "2x2", "--iterations", "5", "--imbalance", "0.5")
	code, out, errs := csRun("predict", "--speed", "1Gf", "--bw", "1,10", "--lat", "50,5", "--config", "32,1.3", "--ranks-per-node", "2", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	clGolden(t, "classify/predict.txt", out)

	cfgs := filepath.Join(t.TempDir(), "machines.txt")
	if err := os.WriteFile(cfgs, []byte("# machines\n1,50\n(32, 1.3)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = csRun("predict", "--speed", "1Gf", "--configs", cfgs, "--csv", "--protocol", "rendezvous", "-j", "2", path)
	if code != 0 {
		t.Fatalf("--csv: exit %d: %s", code, errs)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], ",,,32,1.3,") {
		t.Errorf("--csv output:\n%s", out)
	}
}

// TestPredictUnits: figures that look given in bit/s and seconds are
// warned of, once each, and kept.
func TestPredictUnits(t *testing.T) {
	path := clGenTrace(t, "ring", "--ranks", "2", "--iterations", "2")
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--bw", "1e9,1e10", "--lat", "1e-6"}, []string{"bandwidth 1e+09 Gbit/s is more than any network's", "(1e+10 bit/s is 10)", "latency 1e-06 us is less than any network's"}},
		{[]string{"--config", "1e11,5"}, []string{"bandwidth 1e+11 Gbit/s"}},
		{[]string{"--bw", "100", "--lat", "0.5,0"}, nil},
	} {
		args := append(append([]string{"predict", "--speed", "1Gf"}, tc.args...), path)
		code, _, errs := csRun(args...)
		if code != 0 || strings.Count(errs, "warning:") != len(tc.want) {
			t.Errorf("kairos %s: exit %d, stderr %q; want exit 0 and %d warnings", strings.Join(args, " "), code, errs, len(tc.want))
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("kairos %s: stderr %q; want %q", strings.Join(args, " "), errs, w)
			}
		}
	}
}

func TestClassifyErrors(t *testing.T) {
	path := clGenTrace(t, "ring", "--ranks", "2", "--iterations", "2")
	deadlock := csWrite(t, "ktr", "deadlock.ktr",
		[]trace.Event{csRecv(1, 8)},
		[]trace.Event{csRecv(0, 8)})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"classify", path}, exitUsage, "use --speed"},
		{[]string{"classify", "--speed", "1Gf", "--protocol", "fast", path}, exitUsage, "--protocol must be eager or rendezvous"},
		{[]string{"classify", "--speed", "1Gf", "--network", "ib", path}, exitUsage, `"ib" is not one of 1gbe, 10gbe, qdr`},
		{[]string{"classify", "--speed", "1Gf", "--custom", "1,-5", path}, exitUsage, "--custom"},
		{[]string{"classify", "--speed", "1Gf", "--wait-share", "25", path}, exitUsage, "fractions between 0 and 1"},
		{[]string{"classify", "--speed", "1Gf", "--table", "missing.csv", path}, exitFailed, "missing.csv"},
		{[]string{"classify", "--speed", "1Gf", deadlock}, exitFailed, "rank 0 event 0 (recv peer=1 tag=0 recv=8): waits for a message from rank 1 with tag 0; rank 1 is blocked at its event 0"},
		{[]string{"classify", "--speed", "1Gf", "--json", "--csv", path}, exitUsage, "--json and --csv cannot be combined"},
		{[]string{"classify", "--speed", "1Gf"}, exitUsage, "requires at least 1 arg"},
		{[]string{"predict", "--speed", "1Gf", path}, exitUsage, "no configuration"},
		{[]string{"predict", "--speed", "1Gf", "--bw", "1", path}, exitUsage, "--bw and --lat go together"},
		{[]string{"predict", "--speed", "1Gf", "--config", "fast", path}, exitUsage, `want "BW,L"`},
	} {
		code, _, errs := csRun(tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("kairos %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, errs, tc.code, tc.want)
		}
	}
}

func TestClassifyHelp(t *testing.T) {
	for _, verb := range []string{"classify", "predict"} {
		code, out, _ := csRun(verb, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help: exit %d\n%s", verb, code, out)
		}
	}
}

// TestClassifySeveral: several traces make one Table IV.
func TestClassifySeveral(t *testing.T) {
	ping := clGenTrace(t, "pingpong", "--bytes", "8", "--iterations", "20")
	if code, _, errs := csRun("gen", "stencil2d", "--grid", "2x2", "--iterations", "5", "--flops", "1e8", "-o", "stencil.ktr"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := csRun("classify", "--speed", "1Gf", ping, "stencil.ktr")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if i := strings.LastIndex(out, "trace "); i < 0 || !strings.Contains(out[i:], "pingpong.ktr  Latency  Latency   Latency\nstencil.ktr   Comp.    Comp.     Comp.\n") {
		t.Errorf("no Table IV of both traces:\n%s", out)
	}
	code, out, _ = csRun("classify", "--speed", "1Gf", "--json", ping, "stencil.ktr")
	var all []struct{ Trace string }
	if err := json.Unmarshal([]byte(out), &all); code != 0 || err != nil || len(all) != 2 || all[1].Trace != "stencil.ktr" {
		t.Errorf("--json of 2 traces: exit %d, %v, %+v", code, err, all)
	}
	if code, _, errs := csRun("classify", "--speed", "1Gf", "--csv", ping, "stencil.ktr"); code != exitUsage || !strings.Contains(errs, "--csv prints the curves of one trace") {
		t.Errorf("--csv with 2 traces: exit %d, %s", code, errs)
	}
}

// TestClassifyDemo: the demo's classification of a generated trace.
func TestClassifyDemo(t *testing.T) {
	p, err := workload.Defaults("ring")
	if err != nil {
		t.Fatal(err)
	}
	src, err := workload.New("ring", p)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := classifyDemo(&b, src, "ring", 1e9); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "trace  ENET-1G") || !strings.Contains(out, "C1 computation-bound") {
		t.Errorf("demo classification:\n%s", out)
	}
	if err := classifyDemo(&b, src, "ring", 0); err == nil || !strings.Contains(err.Error(), "use --speed") {
		t.Errorf("demo without speed: %v", err)
	}
}

// TestClassifySVG draws the predicted time of two traces on two
// interconnects, split into the classification's four counters: a row
// each, under its trace's name, its label left of the bar (Table IV's
// several traces, whose labels once overlapped).
func TestClassifySVG(t *testing.T) {
	a, err := filepath.Abs(clGenTrace(t, "pingpong", "--bytes", "8", "--iterations", "50"))
	if err != nil {
		t.Fatal(err)
	}
	b := clGenTrace(t, "ft", "--ranks", "4", "--bytes", "1M", "--flops", "1e7", "--iterations", "2")
	svg := filepath.Join(t.TempDir(), "c.svg")
	if code, _, errs := csRun("classify", "--speed", "1Gf", "--network", "1gbe,qdr", "--svg", svg, a, b); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSVG(t, svg)
	if !strings.Contains(s, "2 traces: what bounds them on each interconnect") || strings.Count(s, `font-weight="bold">`) != 2 ||
		!strings.Contains(s, `font-weight="bold">pingpong.ktr</text>`) || strings.Count(s, `text-anchor="end" dominant-baseline="middle">ENET-1G</text>`) != 2 ||
		!strings.Contains(s, "<title>ENET-1G latency: ") || !strings.Contains(s, ">Latency · ") {
		t.Errorf("SVG:\n%.1500s", s)
	}
}

// TestClassifyUnmatched: a message no rank receives (a real program's
// last one) does not stop classify nor predict: the result is printed,
// and a warning names the message.
func TestClassifyUnmatched(t *testing.T) {
	init, fin := trace.NewEvent(trace.Init), trace.NewEvent(trace.Finalize)
	path := csWrite(t, "ktr", "unreceived.ktr",
		[]trace.Event{init, csSend(1, 28), csSend(0, 28), fin},
		[]trace.Event{init, csRecv(0, 28), fin})
	for _, args := range [][]string{{"classify", path}, {"predict", "--config", "10,5", path}} {
		code, out, errs := csRun(args...)
		if code != 0 || out == "" || !strings.Contains(errs, "warning: "+path+": 1 unmatched message(s)") ||
			!strings.Contains(errs, "rank 0 event 2 sends 28 bytes to rank 0 with tag 0, which never receives it") {
			t.Errorf("%v: exit %d\n%s%s", args[0], code, out, errs)
		}
	}
}
