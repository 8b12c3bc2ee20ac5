package dumpi

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kairos/internal/testenv"
	"kairos/trace"
)

// samples are the DUMPI traces of ../shared/traces/dumpi.
var samples = []string{"sst-macro-testbgp", "sst-macro-testtrace", "sst-macro-unit-test", "tauferlab-naive-alltoall-4"}

// oracleCall is one call as dumpi2ascii -a prints it.
type oracleCall struct {
	name        string
	enter, exit string // wall times as printed
	args        map[string][]int64
	line        int
}

// oracle is one rank's dumpi2ascii -a output.
type oracle struct {
	calls  []oracleCall
	counts map[string]int64 // "called N times"
	sizes  []int64          // datatype sizes
}

// readOracle parses a gzipped dumpi2ascii -a output.
func readOracle(t *testing.T, path string) *oracle {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	o := &oracle{counts: map[string]int64{}}
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	var cur *oracleCall
	for line := 1; sc.Scan(); line++ {
		s := sc.Text()
		switch {
		case strings.Contains(s, " entering at walltime "):
			o.calls = append(o.calls, oracleCall{name: strings.Fields(s)[0], enter: wallOf(s), args: map[string][]int64{}, line: line})
			cur = &o.calls[len(o.calls)-1]
		case strings.Contains(s, " returning at walltime "):
			if cur == nil || strings.Fields(s)[0] != cur.name {
				t.Fatalf("%s:%d: return without entry", path, line)
			}
			cur.exit, cur = wallOf(s), nil
		case cur != nil:
			if k, v, ok := oracleArg(s); ok {
				cur.args[k] = v
			}
		case strings.Contains(s, " called ") && strings.HasSuffix(s, " times"):
			w := strings.Fields(s)
			n, _ := strconv.ParseInt(w[2], 10, 64)
			o.counts[w[0]] = n
		case strings.HasPrefix(s, "Datatype ") && strings.Contains(s, " has size "):
			w := strings.Fields(s)
			n, _ := strconv.ParseInt(w[len(w)-1], 10, 64)
			o.sizes = append(o.sizes, n)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return o
}

// wallOf returns the walltime field of an entering/returning line.
func wallOf(s string) string {
	_, after, _ := strings.Cut(s, " at walltime ")
	w, _, _ := strings.Cut(after, ",")
	return w
}

// oracleArg parses "type name=value" or "type name[n]=[v, ...]" into
// integers; other values (strings, statuses) are skipped.
func oracleArg(s string) (string, []int64, bool) {
	lhs, rhs, ok := strings.Cut(s, "=")
	if !ok {
		return "", nil, false
	}
	w := strings.Fields(lhs)
	if len(w) < 2 {
		return "", nil, false
	}
	name, _, _ := strings.Cut(w[len(w)-1], "[")
	rhs = strings.TrimSpace(rhs)
	if strings.HasPrefix(rhs, "[") {
		rhs = strings.TrimSuffix(strings.TrimPrefix(rhs, "["), "]")
		var vs []int64
		for _, x := range strings.Split(rhs, ",") {
			if x = strings.TrimSpace(x); x == "" {
				continue
			}
			v, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return "", nil, false
			}
			vs = append(vs, v)
		}
		return name, vs, true
	}
	v, err := strconv.ParseInt(strings.Fields(rhs)[0], 10, 64)
	if err != nil {
		return "", nil, false
	}
	return name, []int64{v}, true
}

// printedWall formats a stamp as dumpi2ascii does.
func printedWall(s stamp) string { return fmt.Sprintf("%d.%09d", s.sec, s.nsec) }

// parseWall is the inverse of printedWall.
func parseWall(t *testing.T, s string) stamp {
	sec, ns, _ := strings.Cut(s, ".")
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseUint(ns, 10, 32)
	if err1 != nil || err2 != nil || len(ns) != 9 {
		t.Fatalf("bad walltime %q", s)
	}
	return stamp{a, uint32(b)}
}

// p2pChecked are the calls whose every argument and wall time must equal
// dumpi2ascii's.
var p2pChecked = map[string][]string{
	"MPI_Send":  {"count", "datatype", "dest", "tag", "comm"},
	"MPI_Isend": {"count", "datatype", "dest", "tag", "comm", "request"},
	"MPI_Recv":  {"count", "datatype", "source", "tag", "comm"},
	"MPI_Irecv": {"count", "datatype", "source", "tag", "comm", "request"},
}

// TestOracleDumpi2ascii compares every call record of every sample with
// dumpi2ascii -a: the same calls in the same order, the same wall times,
// the same integer arguments (all of them for Send, Isend, Recv and
// Irecv), per-function counts equal to the footer's and dumpi2ascii's, and
// the same datatype sizes. It also checks that the events carry those wall
// times, relative to the trace's origin.
func TestOracleDumpi2ascii(t *testing.T) {
	for _, name := range samples {
		t.Run(name, func(t *testing.T) {
			dir := testenv.Shared(t, "traces/dumpi/"+name)
			odir := testenv.Shared(t, "traces/oracles/dumpi/"+name)
			tr, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tr.files {
				r, p := f.rank, f.path
				base := strings.TrimSuffix(filepath.Base(p), ".bin")
				o := readOracle(t, filepath.Join(odir, base+".dumpi2ascii-a.txt.gz"))
				compareRank(t, tr, r, o)
			}
		})
	}
}

func compareRank(t *testing.T, tr *Trace, r int, o *oracle) {
	i, _ := tr.file(r)
	f, info, err := openBin(openOS, tr.files[i].path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := tr.OpenRank(r)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	d := newDecoder(f, info)
	var counts [numCounted]int64
	i, p2pSeen := 0, 0
	for ; d.next(); i++ {
		c := &d.c
		counts[c.label]++
		if i >= len(o.calls) {
			t.Fatalf("rank %d: record %d (%s) beyond dumpi2ascii's %d calls", r, i, programs()[c.label].name, len(o.calls))
		}
		oc := o.calls[i]
		where := fmt.Sprintf("rank %d record %d at byte %d (oracle line %d)", r, i, c.off, oc.line)
		if programs()[c.label].name != oc.name {
			t.Fatalf("%s: %s, dumpi2ascii says %s", where, programs()[c.label].name, oc.name)
		}
		if printedWall(c.wall[0]) != oc.enter || printedWall(c.wall[1]) != oc.exit {
			t.Errorf("%s: wall %s..%s, dumpi2ascii %s..%s", where, printedWall(c.wall[0]), printedWall(c.wall[1]), oc.enter, oc.exit)
		}
		compareArgs(t, where, c, oc)
		if must, ok := p2pChecked[oc.name]; ok {
			p2pSeen++
			for _, a := range must {
				if _, ok := oc.args[a]; !ok {
					t.Errorf("%s: dumpi2ascii prints no %s", where, a)
				}
			}
		}
		if !rd.Next() {
			t.Fatalf("%s: the reader ends early: %v", where, rd.Err())
		}
		e := rd.Event()
		if !e.HasTime || e.Enter != parseWall(t, oc.enter).since(tr.t0) || e.Exit != parseWall(t, oc.exit).since(tr.t0) {
			t.Errorf("%s: event time %v..%v, want %s..%s from origin %s", where, e.Enter, e.Exit, oc.enter, oc.exit, printedWall(tr.t0))
		}
		checkP2PEvent(t, where, c, e)
	}
	if d.err != nil {
		t.Fatalf("rank %d: %v", r, d.err)
	}
	if rd.Next() || rd.Err() != nil {
		t.Errorf("rank %d: reader has more events or fails: %v", r, rd.Err())
	}
	if i != len(o.calls) {
		t.Errorf("rank %d: %d records, dumpi2ascii %d", r, i, len(o.calls))
	}
	if !info.hasFooter {
		t.Fatalf("rank %d: no footer", r)
	}
	var total int64
	for l := 0; l < labelAllFunctions; l++ {
		total += counts[l]
		n := programs()[l].name
		if counts[l] != int64(info.calls[l]) || counts[l] != o.counts[n] {
			t.Errorf("rank %d: %s: %d records, footer %d, dumpi2ascii %d", r, n, counts[l], info.calls[l], o.counts[n])
		}
	}
	if total != int64(info.calls[labelAllFunctions]) {
		t.Errorf("rank %d: %d records, footer total %d", r, total, info.calls[labelAllFunctions])
	}
	if len(o.sizes) != len(info.sizes) {
		t.Errorf("rank %d: %d datatype sizes, dumpi2ascii %d", r, len(info.sizes), len(o.sizes))
	}
	for k := range min(len(o.sizes), len(info.sizes)) {
		if int64(info.sizes[k]) != o.sizes[k] {
			t.Errorf("rank %d: datatype %d has size %d, dumpi2ascii %d", r, k, info.sizes[k], o.sizes[k])
		}
	}
	t.Logf("rank %d: %d calls, %d point-to-point checked", r, i, p2pSeen)
}

// compareArgs checks every integer argument dumpi2ascii prints under a
// field name of the layout.
func compareArgs(t *testing.T, where string, c *call, oc oracleCall) {
	p := &programs()[c.label]
	for name, want := range oc.args {
		i, ok := p.fields[name]
		if !ok {
			continue
		}
		switch p.ops[i].code {
		case opI32, opU16, opU8, opI64, opArgc:
			if len(want) != 1 || want[0] != c.v[i] {
				t.Errorf("%s: %s = %d, dumpi2ascii %v", where, name, c.v[i], want)
			}
		case opI32s, opU16s, opU8s:
			got := c.arr[i]
			if len(got) != len(want) {
				t.Errorf("%s: %s has %d elements, dumpi2ascii %d", where, name, len(got), len(want))
				continue
			}
			for k := range got {
				if int64(got[k]) != want[k] {
					t.Errorf("%s: %s[%d] = %d, dumpi2ascii %d", where, name, k, got[k], want[k])
				}
			}
		}
	}
}

// checkP2PEvent checks that a point-to-point record became its event
// with the traced peer, tag, request and bytes.
func checkP2PEvent(t *testing.T, where string, c *call, e *trace.Event) {
	f := p2pOf(c.label)
	if f == nil {
		return
	}
	if e.Kind != f.kind || int64(e.Tag) != c.v[f.tag] {
		t.Errorf("%s: event %v", where, e)
	}
	if f.rq >= 0 && e.Request == 0 {
		t.Errorf("%s: no request id for the record's request %d", where, c.v[f.rq])
	}
	bytes := e.SendBytes
	if !f.kind.IsSend() {
		bytes = e.RecvBytes
	}
	if bytes <= 0 {
		t.Errorf("%s: %d bytes", where, bytes)
	}
}
