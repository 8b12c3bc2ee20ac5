package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"kairos/format/ktr"
	"kairos/trace"
)

// hostileFiles writes the inputs of issue 43 into dir and returns their
// paths by name.
func hostileFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	const cluster = `<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="c" prefix="node-" suffix="" radical="0-3" speed="1Gf" bw="125MBps" lat="50us"/>
</platform>
`
	ok := "0 init\n0 send 1 0 8\n0 finalize\n1 init\n1 recv 0 0 8\n1 finalize\n"
	files := map[string]string{
		"cluster4.xml": cluster,
		"nan.xml":      strings.Replace(cluster, `speed="1Gf"`, `speed="NaNf"`, 1),
		"inf.xml":      strings.Replace(cluster, `speed="1Gf"`, `speed="1e308Gf"`, 1),
		"bw0.xml":      strings.Replace(cluster, `bw="125MBps"`, `bw="0MBps"`, 1),
		"bwneg.xml":    strings.Replace(cluster, `bw="125MBps"`, `bw="-125MBps"`, 1),
		"latneg.xml":   strings.Replace(cluster, `lat="50us"`, `lat="-50us"`, 1),
		"ok.ti":        ok,
		"compute.ti":   "0 init\n0 compute -1e6\n0 finalize\n",
		"sleep.ti":     "0 init\n0 sleep -1\n0 finalize\n",
		"work.ti":      "0 init\n0 compute 1e6\n0 finalize\n",
		"huge.ti":      "0 init\n0 compute 1e300\n0 finalize\n",
		"claimed.ti":   "1000000 init",
		"cut.ti":       "0 init\n0 send 1 0 8\n1 init\n1 recv 0 0 8",
		"empty.ti":     "",
		"empty.ti.gz":  "",
		"empty.ti.zst": "",
		"unknown.ti":   "0 init\n0 send 1 0 8\n0 finalize\n",
		"hosts0":       "node-0:0\n",
		"old.html":     "old report\n",
		"rootout.ti":   "0 init\n0 gatherv 8 8 8 5\n0 finalize\n1 init\n1 gatherv 8 8 8 5\n1 finalize\n",
	}
	var gz, zs bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(ok))
	zw.Close()
	enc, err := zstd.NewWriter(&zs)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write([]byte(ok))
	enc.Close()
	files["cut.ti.gz"] = gz.String()[:gz.Len()-6]
	files["cut.ti.zst"] = zs.String()[:zs.Len()-3]
	paths := map[string]string{}
	for name, text := range files {
		paths[name] = filepath.Join(dir, name)
		if err := os.WriteFile(paths[name], []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A .ktr whose ranks hold no MPI call: computations only.
	quiet := trace.New(2, trace.NewMeta())
	for r := range quiet.Ranks {
		c := trace.NewEvent(trace.Compute)
		c.Compute = 1e6
		quiet.Ranks[r].Append(&c)
	}
	paths["quiet.ktr"] = filepath.Join(dir, "quiet.ktr")
	if err := ktr.Write(paths["quiet.ktr"], quiet); err != nil {
		t.Fatal(err)
	}
	// A .ktr of local MPI calls: an MPI_Iprobe and an empty MPI_Waitall.
	local := trace.New(1, trace.NewMeta())
	for _, c := range []struct {
		kind trace.Kind
		name string
	}{{trace.Local, "MPI_Iprobe"}, {trace.Deferred, "MPI_Waitall"}} {
		e := trace.NewEvent(c.kind)
		e.Region = local.Meta().AddRegion(c.name, 0)
		local.Ranks[0].Append(&e)
	}
	paths["local.ktr"] = filepath.Join(dir, "local.ktr")
	if err := ktr.Write(paths["local.ktr"], local); err != nil {
		t.Fatal(err)
	}
	paths["alawneh"] = filepath.Join("..", "..", "format", "alawneh", "testdata", "ring")
	return paths
}

// TestHostileInputs runs the issue 43 inputs from the command line: every
// absurd value refused with its file and line, usage errors with exit
// status 2, outputs that failed never replacing a file, and messages that
// say what is wrong.
func TestHostileInputs(t *testing.T) {
	p := hostileFiles(t, t.TempDir())
	out := filepath.Join(t.TempDir(), "out.ti")
	cases := []struct {
		name    string
		args    []string
		code    int
		stderr  string // a substring of standard error
		stdout  string // a substring of standard output
		notWant string // in neither
	}{
		// 3. -np bounded before anything is sized by it.
		{"np huge", []string{"simulate", p["ok.ti"], "--platform", p["cluster4.xml"], "-np", "100000000"}, exitUsage, "-np 100000000", "", ""},
		{"platform np huge", []string{"platform", p["cluster4.xml"], "--np", "100000000"}, exitUsage, "--np 100000000", "", ""},
		{"platform np listed", []string{"platform", p["cluster4.xml"], "--np", "100000"}, exitOK, "", "node-3: ranks 3,7,11,15,19,23,27,31,35,39,43,47,51,55,59,63,... (25000 ranks in all)\n", ""},
		// 4. Numbers that parse but mean nothing, with file and line.
		{"speed NaN", []string{"platform", p["nan.xml"]}, exitFailed, `nan.xml:4: <cluster> attribute speed: speed "NaNf": expected a finite number`, "", ""},
		{"speed inf", []string{"simulate", p["ok.ti"], "--platform", p["inf.xml"]}, exitFailed, `inf.xml:4: <cluster> attribute speed: speed "1e308Gf": expected a finite number`, "", ""},
		{"bandwidth 0", []string{"platform", p["bw0.xml"]}, exitFailed, `bw0.xml:4: <cluster> attribute bw: bandwidth "0MBps": expected a positive bandwidth`, "", ""},
		{"bandwidth negative", []string{"platform", p["bwneg.xml"]}, exitFailed, `bwneg.xml:4:`, "", ""},
		{"latency negative", []string{"platform", p["latneg.xml"]}, exitFailed, `latneg.xml:4: <cluster> attribute lat: time "-50us": expected 0 or more`, "", ""},
		{"compute negative", []string{"simulate", p["compute.ti"], "--cluster", "1x1Gf,1GBps,1us"}, exitFailed, `compute.ti:2:11: expected a number of flops from 0 to 1e+24, got "-1e6"`, "", ""},
		{"sleep negative", []string{"simulate", p["sleep.ti"], "--cluster", "1x1Gf,1GBps,1us"}, exitFailed, `sleep.ti:2:9: expected a duration in seconds`, "", ""},
		{"v-collective root outside", []string{"check", p["rootout.ti"]}, exitFailed, "", "rootout.ti:2: rank 0 event 1: gatherv: root 5 is not a member of communicator 0", ""},
		{"v-collective root outside, classify", []string{"classify", "--speed", "1Gf", p["rootout.ti"]}, exitFailed, "rootout.ti:2: gatherv: root 5 is not a member of communicator 0", "", ""},
		{"v-collective root outside, simulate", []string{"simulate", p["rootout.ti"], "--cluster", "2x1Gf,1GBps,1us"}, exitFailed, "rootout.ti:2: rank 0: gatherv: root 5 out of range [0,2)", "", ""},
		{"compute huge", []string{"check", p["huge.ti"]}, exitFailed, `huge.ti:2:11: expected a number of flops`, "", ""},
		// 5. Outputs and cut-off traces.
		{"report failed keeps old", []string{"report", p["huge.ti"], "-o", p["old.html"]}, exitFailed, "not written", "", ""},
		{"convert quiet", []string{"convert", p["quiet.ktr"], out}, exitOK, "", "", ""},
		{"quiet back", []string{"check", out}, exitOK, "", "", "not a trace"},
		{"cut-off check", []string{"check", p["cut.ti"]}, exitFailed, "cut.ti:4: last line has no newline: dropped", "is never received", ""},
		{"cut-off stats", []string{"stats", p["cut.ti"]}, exitOK, "cut.ti:4: last line has no newline: dropped", "events            3", ""},
		{"claimed rank on a cut line", []string{"check", p["claimed.ti"]}, exitFailed, "claimed.ti: not a trace: no rank has any event", "", ""},
		// 6. Messages.
		{"empty", []string{"check", p["empty.ti"]}, exitFailed, "empty.ti: not a trace in any format Kairos reads: the file is empty", "", ""},
		{"empty gz", []string{"stats", p["empty.ti.gz"]}, exitFailed, "empty.ti.gz: not a trace in any format Kairos reads: the file is empty", "", ""},
		{"empty zst", []string{"stats", p["empty.ti.zst"]}, exitFailed, "empty.ti.zst: not a trace in any format Kairos reads: the file is empty", "", ""},
		{"truncated gz", []string{"check", p["cut.ti.gz"]}, exitFailed, "cut.ti.gz: truncated gzip file: its data ends after", "", ""},
		{"truncated zst", []string{"check", p["cut.ti.zst"]}, exitFailed, "cut.ti.zst: truncated zstd file: its data ends after", "", ""},
		{"hostfile host:0", []string{"simulate", p["ok.ti"], "--platform", p["cluster4.xml"], "--hostfile", p["hosts0"]}, exitFailed, "hosts0:1: the hostfile gives no slot to any host (host:0", "", "empty"},
		{"classify without speed", []string{"classify", p["work.ti"]}, exitUsage, "use --speed", "", ""},
		{"unknown cfg", []string{"simulate", p["ok.ti"], "--platform", p["cluster4.xml"], "--cfg", "smpi/bogus:1"}, exitUsage, "--cfg smpi/bogus: unknown setting", "", ""},
		{"simulate json error", []string{"simulate", "--json", p["unknown.ti"], "--cluster", "1x1Gf,1GBps,1us"}, exitFailed, "partner rank 1 out of range", `"error": "`, ""},
		{"stats names MPI calls", []string{"stats", p["local.ktr"]}, exitOK, "", "MPI_Iprobe", "deferred"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := csRun(c.args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) || !strings.Contains(stdout, c.stdout) ||
				(c.notWant != "" && strings.Contains(stdout+stderr, c.notWant)) {
				t.Errorf("kairos %s: exit %d, want %d\nstdout: %s\nstderr: %s\nwant stderr containing %q, stdout %q, neither %q",
					strings.Join(c.args, " "), code, c.code, stdout, stderr, c.stderr, c.stdout, c.notWant)
			}
			if len(stderr) > 600 {
				t.Errorf("kairos %s: %d characters of errors", strings.Join(c.args, " "), len(stderr))
			}
		})
	}
	if b, _ := os.ReadFile(p["old.html"]); string(b) != "old report\n" {
		t.Errorf("report -o of a failed report replaced the old page: %.80q", b)
	}
}

// TestNoReplayDiagnosis: a trace no replay can follow gets one diagnosis,
// the same from every verb that replays (issue 43: three verbs gave the
// alawneh format three), naming the first line at fault.
func TestNoReplayDiagnosis(t *testing.T) {
	// An alawneh trace whose ranks' collectives do not match.
	dir := t.TempDir()
	for r, line := range []string{"ALLREDUCE 1 t1 1 t2 2 s 16 r 16\n", "ALLGATHER -1 t1 1 t2 2 s 16 r 16\n"} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("Process%d.txt", r)), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var first string
	for _, args := range [][]string{
		{"simulate", dir, "--cluster", "2x1Gf,1GBps,1us"},
		{"classify", "--speed", "1Gf", dir},
		{"check", dir},
	} {
		code, _, stderr := csRun(args...)
		msg, _, _ := strings.Cut(stderr, "; --protocol none")
		msg = strings.TrimSpace(msg)
		if code != exitFailed || !strings.Contains(msg, "this alawneh trace cannot be replayed") {
			t.Fatalf("kairos %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		if first == "" {
			first = msg
		} else if msg != first {
			t.Errorf("kairos %s: %q, want the same as simulate's %q", strings.Join(args, " "), msg, first)
		}
	}
}

// TestNpSizedByWhatExists: a -np far above the trace's ranks and the
// machine's hosts, yet under trace.MaxRanks, is refused (simulate) or
// described (platform) with allocations sized by the hosts and the trace,
// not by -np (issue 43: 14 GB, and 767 MB for platform --np 16000000).
func TestNpSizedByWhatExists(t *testing.T) {
	dir := t.TempDir()
	p := hostileFiles(t, dir)
	// A description of two per-rank files.
	p["desc"] = filepath.Join(dir, "desc")
	for r, line := range []string{"0 init\n0 send 1 1 8\n0 finalize\n", "1 init\n1 recv 0 1 8\n1 finalize\n"} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%d.ti", r)), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p["desc"], []byte("r0.ti\nr1.ti\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const np = "16000000"
	cases := []struct {
		name   string
		args   []string
		code   int
		output string // a substring of standard output or error
	}{
		{"simulate ti", []string{"simulate", p["ok.ti"], "--platform", p["cluster4.xml"], "-np", np}, exitUsage, "-np 16000000: the trace has 2 ranks and the machine 4 host slots"},
		{"simulate smpirun", []string{"simulate", "-np", np, "-platform", p["cluster4.xml"], "-replay", p["ok.ti"]}, exitUsage, "the trace has 2 ranks"},
		{"simulate ktr", []string{"simulate", p["quiet.ktr"], "--cluster", "4x1Gf,1GBps,1us", "-np", np}, exitUsage, "-np 16000000 but the trace"},
		{"simulate description", []string{"simulate", p["desc"], "--cluster", "4x1Gf,1GBps,1us", "-np", np}, exitUsage, "16000000 ranks requested but the description lists 2 files"},
		{"platform", []string{"platform", p["cluster4.xml"], "--np", np, "--map", "block"}, exitOK, "node-3: ranks 12000000-15999999\n"},
		{"platform json", []string{"platform", p["cluster4.xml"], "--np", "1000000", "--json"}, exitOK, "\"node-3\"\n  ]\n}\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			code, stdout, stderr := csRun(c.args...)
			runtime.ReadMemStats(&after)
			if code != c.code || !strings.Contains(stdout+stderr, c.output) {
				t.Errorf("kairos %s: exit %d, want %d and %q\nstdout: %.300s\nstderr: %s", strings.Join(c.args, " "), code, c.code, c.output, stdout, stderr)
			}
			// The output itself (14 MB of JSON) is in the test's
			// buffer, which grows by doubling.
			alloc := after.TotalAlloc - before.TotalAlloc - 3*uint64(len(stdout))
			if alloc > 64<<20 {
				t.Errorf("kairos %s: %d MB allocated beyond the output, for 2 ranks and 4 hosts", strings.Join(c.args, " "), alloc>>20)
			}
		})
	}
}
