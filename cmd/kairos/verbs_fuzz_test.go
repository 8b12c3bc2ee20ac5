package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzVerbs runs every verb that reads a trace on arbitrary TI text, as a
// user would from the command line, and again on the timed trace of its
// simulated run: the parsers have fuzz targets of their own, this one
// reaches the analyses, the replays, the reduction and the writers behind
// them with the odd traces that parse. No verb may panic or hang; a
// failure says what failed; a file a verb fails to write is not left
// behind; a reduction or a conversion written must pass check where the
// trace does, and read back as the trace it came from (print lists the
// same events; a reduction's computations within its time error).
func FuzzVerbs(f *testing.F) {
	for _, s := range []string{
		"0 init\n0 compute 1e6\n0 send 1 0 8\n0 allreduce 8 1e3\n0 finalize\n1 init\n1 recv 0 0 8\n1 compute 2e6\n1 allreduce 8 1e3\n1 finalize\n",
		"0 isend 1 0 8\n0 irecv 1 0 8\n0 waitall\n1 isend 0 0 8\n1 irecv 0 0 8\n1 waitall\n",
		"0 irecv 1 0 8\n0 test 1 0 0\n0 wait 1 0 0\n1 compute 1e9\n1 send 0 0 8\n",
		"0 bcast 10 0\n0 reduce 10 5 1\n0 barrier\n1 bcast 10 0\n1 reduce 10 5 1\n1 barrier\n2 bcast 10 0\n2 reduce 10 5 1\n2 barrier\n",
		"0 alltoallv 2 1 1 2 1 1\n1 alltoallv 2 1 1 2 1 1\n",
		"0 gatherv 8 8 8 0\n1 gatherv 8 8 8 0\n",
		"0 init\n0 sendRecv 8 1 8 1 0 0\n0 finalize\n1 init\n1 sendRecv 8 0 8 0 0 0\n1 finalize\n",
		"0 compute 0\n0 sleep 0\n0 compute 1e24\n",
		"0 send 1 0 0\n1 recv 0 0 0\n0 send 1 0 0\n1 recv 0 0 0\n",
		"0 send 1 0 8\n1 send 0 0 8\n0 recv 1 0 8\n1 recv 0 0 8\n", // deadlock
		"0 send 1 0 8\n", // never received
		"0 init\n0 compute 1\n3 init\n3 compute 1\n",                             // ranks without events
		"0 comm_split 0 0\n0 allreduce 8 1\n1 comm_split 0 0\n1 allreduce 8 1\n", // a communicator made, without init
		// A loop whose computations vary within reduce's time error.
		"0 compute 1.1275865e7\n0 send 1 0 8\n0 compute 1.1294492e7\n0 send 1 0 8\n0 compute 1.1281e7\n0 send 1 0 8\n" +
			"1 recv 0 0 8\n1 compute 1.13e7\n1 recv 0 0 8\n1 compute 1.1297e7\n1 recv 0 0 8\n1 compute 1.1288e7\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 || strings.ContainsRune(text, 0) {
			return
		}
		verbBattery(t, text)
	})
}

// FuzzVerbsPrograms runs the verbs of FuzzVerbs on TI traces built from
// the fuzzer's bytes (tiProgram), which are traces far more often than
// arbitrary text: matched messages, collectives on every rank, now and
// then a call without its partner.
func FuzzVerbsPrograms(f *testing.F) {
	for _, s := range []string{
		"\x03\x00\x05\x10\x01\x01\x12\x06\x00\x07\x02\x21\x30\x03\x00\x00",
		"\x01\x01\x00\x01\x02\x00\x01\x05\x20\x03\x0b\x01\x02",
		"\x05\x08\x00\x00\x09\x00\x00\x0a\x01\x02\x0b\x00\x11\x0c\x02\x13\x04\x00\x00",
		"\x02\x02\x00\x01\x02\x01\x00\x03\x00\x00\x03\x01\x00\x0d\x01\x00",
		// A loop of 7 iterations on 4 ranks: an exchange, its waits and a
		// computation that varies.
		"\x03\x02\x11\x02\x03\x11\x00\x03\x02\x00\x00\x01\x20\x18\x03\x05",
		// Every collective kind from 16 on, on 4 ranks.
		"\x03\x10\x01\x02\x11\x03\x01\x12\x05\x02\x13\x01\x01\x14\x02\x03\x15\x01\x01\x16\x02\x02\x17\x00\x00\x02\x01\x02\x04\x01\x00\x0d\x02\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 300 {
			return
		}
		verbBattery(t, tiProgram(data))
	})
}

// verbBattery writes text as a TI trace and runs the verbs on it, then on
// its simulated run as an OTF2 archive (a timed trace: wait states, root
// causes, late senders).
func verbBattery(t *testing.T, text string) {
	dir := t.TempDir()
	in := filepath.Join(dir, "f.ti")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := csRun("stats", "--json", in)
	var st struct{ Ranks int }
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || st.Ranks > 16 {
		return // not a trace (the reader's fuzz target covers that), or one too large to replay dozens of times
	}
	cluster := "--cluster=16x1Gf,1GBps,1us"
	verbRuns(t, "simulate", in, cluster, "--analytic")
	verbRuns(t, "classify", "--speed", "1Gf", in)
	verbRuns(t, "predict", "--speed", "1Gf", "--bw", "1GBps", "--lat", "1us", in)
	runVerbs(t, in, filepath.Join(dir, "ti-"), append([]written{
		{"c.ktr", []string{"convert"}, "events"},
		{"c.ti", []string{"convert"}, "check"},
		{"c.goal", []string{"convert"}, ""}, // Kairos writes GOAL, does not read it
	}, reductions...))
	timed := filepath.Join(dir, "t.otf2")
	code, _ = verbRuns(t, "simulate", in, cluster, "--timed-trace", timed)
	if _, err := os.Stat(timed); (err == nil) != (code == exitOK) {
		t.Fatalf("simulate --timed-trace: exit %d, archive written: %v", code, err == nil)
	}
	if code == exitOK {
		runVerbs(t, timed, filepath.Join(dir, "otf2-"), []written{
			{"c.ktr", []string{"convert"}, "events"},
			{"c.ti", []string{"convert"}, "check"},
			{"r.rsd", []string{"reduce"}, "check"}, // times within the time error
		})
	}
}

// written is a verb's run that writes a file, and what the file must
// keep of the trace it came from.
type written struct {
	name string   // the file's name
	args []string // the verb and its options, before the trace and -o
	// keep: "events" (print lists the same), "calls" (print lists the
	// same calls, computations within reduce's time error), "check"
	// (check passes where the trace's does) or "" (nothing read back).
	keep string
}

// reductions are the reduce runs of runVerbs: each method, K below the
// ranks' behaviours (merged clusters, each member's calls kept), the
// papers' 64-bit signatures, timings kept as histograms.
var reductions = []written{
	{"r.rsd", []string{"reduce"}, "calls"},
	{"ra.rsd", []string{"reduce", "--method", "acurdion", "--k", "2"}, "calls"},
	{"rb.rsd", []string{"reduce", "--method", "acurdion2", "--k", "2"}, "calls"},
	{"rt.rsd", []string{"reduce", "--method", "reference", "--table1"}, "calls"},
	{"rh.rsd", []string{"reduce", "--time-histograms", "--aggregate-counts", "0.5"}, "check"},
}

// runVerbs runs the analyses, report, reduce and convert on the trace in,
// the files they write named with prefix: each of outs as well as the
// report.
func runVerbs(t *testing.T, in, prefix string, outs []written) {
	checked, _ := verbRuns(t, "check", in)
	for _, args := range [][]string{
		{"stats", in},
		{"print", in},
		{"patterns", in},
		{"phases", in},
		{"slow", in},
		{"slow", "--summary", in},
		{"compare", in, in},
		{"reduce", "--accuracy", "--analytic", in},
	} {
		verbRuns(t, args...)
	}
	if filepath.Ext(in) == ".ti" && checked == exitOK {
		for _, method := range []string{"callpath", "acurdion"} {
			replaysAlike(t, in, method)
		}
	}
	_, events, _ := csRun("print", "--model", in)
	for _, w := range append([]written{{"r.html", []string{"report"}, ""}}, outs...) {
		path := prefix + w.name
		args := append(append([]string{}, w.args...), in, "-o", path)
		if w.args[0] == "convert" {
			args = []string{"convert", in, path}
		}
		code, errb := verbRuns(t, args...)
		_, err := os.Stat(path)
		// A report whose analyses failed is written, saying why.
		partial := w.args[0] == "report" && code == exitFailed && strings.Contains(errb, "the page says why")
		switch {
		case code != exitOK && err == nil && !partial:
			t.Errorf("kairos %s failed and left %s", strings.Join(args, " "), w.name)
			continue
		case (code == exitOK || partial) && err != nil:
			t.Errorf("kairos %s ended without writing %s: %v", strings.Join(args, " "), w.name, err)
			continue
		case code != exitOK || w.keep == "":
			continue
		}
		if c, _, errb := csRun("check", path); checked == exitOK && c != exitOK {
			t.Errorf("kairos %s: %s fails check, the trace passes it: %s", strings.Join(args, " "), w.name, errb)
		}
		_, got, _ := csRun("print", path)
		// Computations are statistics of a reduction, not calls
		// (docs/rsd-format.md): those between two calls read back as
		// their sum, within the time error.
		if w.keep == "events" && got != events || w.keep == "calls" && !sameCalls(got, events, 0.01) {
			t.Errorf("kairos %s: print of %s differs:\n%s\nwant\n%s", strings.Join(args, " "), w.name, got, events)
		}
	}
}

// replaysAlike checks that the reduction of an untimed trace by method
// (with K = 2 where it takes one) replays as the trace does: ACC of at
// least 0.95, seed 000's and issue 40's bound.
func replaysAlike(t *testing.T, in, method string) {
	code, out, errb := csRun("reduce", "--accuracy", "--json", "--method", method, "--k", "2", in)
	if code != exitOK {
		return // the reduction refused: verbRuns' runs say whether with a reason
	}
	var r struct{ Accuracy struct{ ACC float64 } }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("reduce --accuracy --json: %v\n%s", err, out)
	}
	if r.Accuracy.ACC < 0.95 {
		t.Errorf("reduce --method %s --accuracy: ACC %.4f, want at least 0.95\n%s", method, r.Accuracy.ACC, errb)
	}
}

// verbRuns runs a verb and checks that it ended as a command should: an
// exit status of 0, 1 or 2, and a failure that says why; it returns the
// status and standard error.
func verbRuns(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errb := csRun(args...)
	if code != exitOK && code != exitFailed && code != exitUsage {
		t.Errorf("kairos %s: exit %d", strings.Join(args, " "), code)
	}
	if code != exitOK && strings.TrimSpace(errb) == "" && strings.TrimSpace(out) == "" { // check lists the problems it finds on standard output
		t.Errorf("kairos %s: exit %d and no message", strings.Join(args, " "), code)
	}
	return code, errb
}

// sameCalls reports whether two outputs of print of untimed traces list
// the same calls, each rank's computations between two calls summed; the
// computations and the calls' amounts (sleeps, collectives' flops)
// equal within a relative error of tol.
func sameCalls(got, want string, tol float64) bool {
	g, w := untimedCalls(got), untimedCalls(want)
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if g[i].rank != w[i].rank || g[i].call != w[i].call ||
			math.Abs(g[i].flops-w[i].flops) > tol*w[i].flops || math.Abs(g[i].amount-w[i].amount) > tol*w[i].amount {
			return false
		}
	}
	return true
}

// untimedCall is a call of print's output ("RANK INDEX - - KIND
// FIELDS"), with the flops computed before it since the last call.
type untimedCall struct {
	rank   string
	call   string  // its kind and fields but compute=
	amount float64 // its compute= field
	flops  float64
}

// untimedCalls lists the calls of print's output, and a last entry of
// each rank's computations after its last call.
func untimedCalls(out string) []untimedCall {
	var calls []untimedCall
	cur := untimedCall{rank: "-"}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if f[0] != cur.rank {
			if cur.flops != 0 {
				calls = append(calls, untimedCall{rank: cur.rank, call: "end", flops: cur.flops})
			}
			cur = untimedCall{rank: f[0]}
		}
		if f[4] == "compute" {
			for _, kv := range f[5:] {
				if v, ok := strings.CutPrefix(kv, "compute="); ok {
					x, _ := strconv.ParseFloat(v, 64)
					cur.flops += x
				}
			}
			continue
		}
		c := untimedCall{rank: f[0], call: f[4], flops: cur.flops}
		for _, kv := range f[5:] {
			if v, ok := strings.CutPrefix(kv, "compute="); ok { // a sleep's seconds, a collective's flops
				c.amount, _ = strconv.ParseFloat(v, 64)
			} else {
				c.call += " " + kv
			}
		}
		calls = append(calls, c)
		cur.flops = 0
	}
	if cur.flops != 0 {
		calls = append(calls, untimedCall{rank: cur.rank, call: "end", flops: cur.flops})
	}
	return calls
}

// everyRank are the calls of tiProgram that every rank makes, by kind,
// with its operands: 1 a size, 2 flops, 3 a root, 4 the number of ranks,
// 5 each rank's count of a v-collective.
var everyRank = map[byte]string{
	5:  "barrier%.0[5]s", // no operand (the format names one, so that the others are not extra)
	6:  "bcast %[1]d %[3]d",
	7:  "allreduce %[1]d %[2]d",
	8:  "reduce %[1]d %[2]d %[3]d",
	9:  "alltoall %[1]d %[1]d",
	10: "allgather %[1]d %[1]d",
	11: "gather %[1]d %[1]d %[3]d",
	16: "scatter %[1]d %[1]d %[3]d",
	19: "reducescatter %[5]s %[2]d",
	21: "scan %[1]d %[2]d",
	22: "exscan %[1]d %[2]d",
	23: "comm_size %[4]d",
}

// tiProgram builds a TI trace from data: 1 to 8 ranks (the first byte),
// then a call of every rank or a pair of ranks for each group of three
// bytes (what, and two arguments), in one global order, so that its
// point-to-point calls match without deadlock; one kind in 25 is a call
// without its partner, one a loop over the groups before it. The
// v-collectives' counts agree between ranks.
func tiProgram(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	n := 1 + int(data[0])%8
	lines := make([][]string, n)
	add := func(r int, format string, args ...any) { lines[r] = append(lines[r], fmt.Sprintf(format, args...)) }
	all := func(format string, args ...any) {
		for r := range n {
			add(r, format, args...)
		}
	}
	sizes := []int{0, 8, 1024, 65536, 1 << 20}
	pending := make([][]string, n) // each rank's requests not waited for: "src dst tag"
	all("init")
	step := func(op byte, a, b, iter int) {
		src, dst, size, tag := a%n, b%n, sizes[(a>>4)%len(sizes)], (b>>4)%3
		// Counts by rank for the v-collectives: rank r sends counts[r].
		counts := make([]string, n)
		for r := range counts {
			counts[r] = strconv.Itoa((a + 7*r*b) % 64)
		}
		list := strings.Join(counts, " ")
		if format, ok := everyRank[op]; ok {
			all(format, size, b, dst, n, list)
			return
		}
		switch op {
		case 0: // noisy from one iteration of a loop to the next
			add(src, "compute %g", float64(b*100000)*(1+0.004*float64(iter)))
		case 1:
			add(src, "send %d %d %d", dst, tag, size)
			add(dst, "recv %d %d %d", src, tag, size)
		case 2:
			add(src, "isend %d %d %d", dst, tag, size)
			add(dst, "irecv %d %d %d", src, tag, size)
			req := fmt.Sprintf("%d %d %d", src, dst, tag)
			pending[src], pending[dst] = append(pending[src], req), append(pending[dst], req)
		case 3:
			add(src, "waitall")
			pending[src] = nil
		case 4:
			if len(pending[src]) > 0 {
				add(src, "wait %s", pending[src][0])
				pending[src] = pending[src][1:]
			}
		case 12:
			add(src, "sleep %g", float64(b)/1000)
		case 13:
			if len(pending[src]) > 0 {
				add(src, "test %s", pending[src][len(pending[src])-1])
			}
		case 14:
			add(src, "sendRecv %d %d %d %d 0 0", size, dst, size, dst) // send count, to, receive count, from, datatypes
			add(dst, "sendRecv %d %d %d %d 0 0", size, src, size, src)
		case 15:
			add(src, "send %d %d %d", dst, tag, size) // never received
		case 17:
			for r := range n {
				add(r, "gatherv %s %s %d", counts[r], list, dst)
			}
		case 18:
			for r := range n {
				add(r, "allgatherv %s %s", counts[r], list)
			}
		case 20:
			for r := range n { // rank r sends rank j (a+r+2j) mod 5 items, which j receives
				send, recv := make([]string, n), make([]string, n)
				for j := range n {
					send[j], recv[j] = strconv.Itoa((a+r+2*j)%5), strconv.Itoa((a+j+2*r)%5)
				}
				add(r, "alltoallv %d %s %d %s", 5*n, strings.Join(send, " "), 5*n, strings.Join(recv, " "))
			}
		}
	}
	// A group of kind 24 makes the last 1 to 4 other groups a loop of 2 to
	// 7 iterations, which reductions fold.
	var done [][3]int
	for data = data[1:]; len(data) >= 3; data = data[3:] {
		op, a, b := data[0]%25, int(data[1]), int(data[2])
		if op != 24 {
			step(op, a, b, 0)
			done = append(done, [3]int{int(op), a, b})
			continue
		}
		body := done[max(0, len(done)-1-a%4):]
		for iter := 1; iter < 2+b%6; iter++ {
			for _, g := range body {
				step(byte(g[0]), g[1], g[2], iter)
			}
		}
	}
	all("finalize")
	var b strings.Builder
	for r, l := range lines {
		for _, line := range l {
			fmt.Fprintf(&b, "%d %s\n", r, line)
		}
	}
	return b.String()
}
