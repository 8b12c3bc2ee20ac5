package alawneh

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kairos/check"
	"kairos/format"
	"kairos/internal/testenv"
	"kairos/platform"
	"kairos/sim"
	"kairos/trace"
)

// events reads every rank of src as "kind peer enter-exit" strings.
func events(t *testing.T, src trace.Source) [][]string {
	t.Helper()
	out := make([][]string, src.NumRanks())
	err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		s := e.Kind.String()
		if e.HasTime {
			s = e.String() + " " + strconv.FormatInt(int64(e.Enter), 10) + "-" + strconv.FormatInt(int64(e.Exit), 10)
		}
		out[r] = append(out[r], strings.Join(strings.Fields(s), " "))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRead(t *testing.T) {
	for _, path := range []string{"testdata/ring", "testdata/ring/Process1.txt"} {
		src, f, err := format.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name != "alawneh" || src.NumRanks() != 2 {
			t.Fatalf("%s: format %s, %d ranks", path, f.Name, src.NumRanks())
		}
		got := events(t, src)
		want := [][]string{
			{"waitall 100000-100000", "send peer=1 tag=0 send=8 100000-100000", "irecv peer=1 tag=0 recv=8 req=1 150000-150000",
				"waitall 400000-400000", "allreduce send=16 recv=16 500000-700000"},
			{"waitall 90000-90000", "irecv peer=0 tag=0 recv=8 req=1 90000-90000", "isend peer=0 tag=0 send=8 req=2 310000-310000",
				"waitall 310000-320000", "allreduce send=16 recv=16 650000-700000"},
		}
		for r := range want {
			if strings.Join(got[r], "|") != strings.Join(want[r], "|") {
				t.Errorf("%s rank %d:\n got %q\nwant %q", path, r, got[r], want[r])
			}
		}
	}
}

// TestErrors: every malformed line is an error naming the file and line,
// what was expected (with its bound) and what was found.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ line, msg string }{
		{"Send x t1 1 t2 2 t 0 l 1 m 0", `expected a rank (-1, or 0 to 16777215), got "x"`},
		{"Send 99999999999 t1 1 t2 2 t 0 l 1 m 0", `expected a rank (-1, or 0 to 16777215), got "99999999999"`},
		{"Send 16777216 t1 1 t2 2 t 0 l 1 m 0", `expected a rank (-1, or 0 to 16777215), got "16777216"`},
		{"Send 1 t1 5 t2 2 t 0 l 1 m 0", "expected times 0 <= t1 <= t2 <= 4611686018427387 ns, got t1 5 t2 2"},
		{"Send 1 t1 5 t2 4611686018427388 t 0 l 1 m 0", "expected times 0 <= t1 <= t2 <= 4611686018427387 ns, got t1 5 t2 4611686018427388"},
		{"Send 1 t9 5 t2 6 t 0 l 1 m 0", "expected the keys t1 and t2 (the call's start and end, in ns)"},
		{"Recv 1 t1 5 t2 6 t 0 l -3 m 0", `expected l an integer from 0 to 9223372036854775807, got "-3"`},
		{"Recv 1 t1 5 t2 6 t 0 l 99999999999999999999 m 0", `expected l an integer from 0 to 9223372036854775807, got "99999999999999999999"`},
		{"Sendrecv 1 t1 5 t2 6 t 0 l 3 m 0", `unknown operation "Sendrecv" (want Send, Recv, a collective or DEL<n>)`},
		{"Send 1 t1 5", "expected an operation, a rank and key-value pairs, got 4 fields"},
		{"Send -1 t1 1 t2 2 t 0 l 1 m 0", "Send needs a peer rank, got -1"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "Process0.txt"), []byte("DEL1\n"+c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		src, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = trace.ForEach(src, func(int, int, *trace.Event) error { return nil })
		if err == nil || !strings.HasSuffix(err.Error(), "Process0.txt:2: "+c.msg) {
			t.Errorf("%q:\n got %v\nwant Process0.txt:2: %s", c.line, err, c.msg)
		}
	}
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no Process0.txt") {
		t.Errorf("empty directory: %v", err)
	}
}

// TestRankFiles: a rank's file missing among the others, numbered beyond
// any rank, or not a regular file is an error naming it, not a trace of
// fewer ranks.
func TestRankFiles(t *testing.T) {
	for _, c := range []struct {
		name   string
		files  []string
		dirs   []string
		suffix string
	}{
		{"gap", []string{"Process0.txt", "Process1.txt", "Process3.txt"}, nil,
			"Process3.txt: there is no Process2.txt: expected the ranks' files numbered from Process0.txt without a gap (up to Process16777215.txt)"},
		{"huge number", []string{"Process0.txt", "Process99999999999999999999.txt"}, nil,
			"Process99999999999999999999.txt: there is no Process1.txt: expected the ranks' files numbered from Process0.txt without a gap (up to Process16777215.txt)"},
		{"directory", []string{"Process0.txt"}, []string{"Process1.txt"}, "Process1.txt: not a regular file"},
	} {
		dir := t.TempDir()
		for _, f := range c.files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("DEL1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range c.dirs {
			if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Open(dir); err == nil || err.Error() != filepath.Join(dir, c.suffix) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, filepath.Join(dir, c.suffix))
		}
	}
}

// TestSMG2000 reads the authors' 4-process SMG2000 trace: rank 0 has
// 64,168 lines (24,262 DEL, 19,941 Recv, 19,950 Send, all non-blocking,
// 13 ALLREDUCE, one ALLGATHER and one ALLGATHERV).
func TestSMG2000(t *testing.T) {
	src, err := Open(testenv.Shared(t, "traces/alawneh/smg2000-4p"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[trace.Kind]int{}
	err = trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		if r == 0 {
			count[e.Kind]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if src.NumRanks() != 4 || count[trace.Waitall] != 24262 || count[trace.Irecv] != 19941 || count[trace.Isend] != 19950 ||
		count[trace.Allreduce] != 13 || count[trace.Allgather] != 1 || count[trace.Allgatherv] != 1 {
		t.Errorf("%d ranks, rank 0: %v", src.NumRanks(), count)
	}
}

// FuzzRead reads up to four ranks' files (the input's NUL-separated
// parts): no panic, no event ending before it starts, every error placed.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"DEL1\nRecv 0 t1 5200672943200 t2 5200673118700 t 0 l 3200 m 7\n",
		"Send 2 t1 5 t2 9 t 3 l 640 m 5\nALLGATHERV 2 t1 5 t2 9 s 112 r 112 m 2\n",
		"ALLREDUCE -1 t1 1 t2 2 s 32 r 32\n\n\nDEL9",
		"Send x t1\n",
		"Recv 0 t1 9 t2 3 t 0 l 1 m 1\n",
		// Issue 43: a size or a time that means nothing.
		"Send 0 t1 1 t2 2 t 0 l -1020 m 0\n",
		"Recv 0 t1 1 t2 99999999999999999999 t 0 l 8 m 0\n",
		"Send 1000000 t1 1 t2 2 t 0 l 8 m 0\n",
		// Ranks (NUL-separated files): collectives that match, that do
		// not, rooted ones whose root the bytes tell or do not.
		"BCAST 1 t1 1 t2 2 s 32 r 16\n\x00BCAST -1 t1 1 t2 3 s 0 r 16\n",
		"GATHERV 1 t1 1 t2 2 s 8 r 8\n\x00GATHERV -1 t1 1 t2 3 s 8 r 8\n",
		"ALLTOALLV 1 t1 1 t2 2 s 24 r 8\n\x00ALLTOALLV -1 t1 1 t2 3 s 8 r 24\n",
		"ALLREDUCE 1 t1 1 t2 2 s 16 r 16\n\x00ALLGATHER -1 t1 1 t2 2 s 16 r 16\n",
		"DEL1\n\x00ALLREDUCE -1 t1 1 t2 2 s 16 r 16\n",
		"Send 1 t1 1 t2 5 t 0 l 8 m 0\n\x00Recv 0 t1 2 t2 4 t 0 l 8 m 0\nDEL3\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		dir := t.TempDir()
		for r, text := range strings.SplitN(s, "\x00", 4) {
			if err := os.WriteFile(filepath.Join(dir, "Process"+strconv.Itoa(r)+".txt"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		src, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = trace.ForEach(src, func(_, _ int, e *trace.Event) error {
			if e.HasTime && e.Exit < e.Enter {
				t.Fatalf("event ends before it starts: %v", e)
			}
			return nil
		})
		if err != nil && !strings.Contains(err.Error(), ".txt:") {
			t.Fatalf("error without position: %v", err)
		}
	})
}

// TestSMG2000Replays: the authors' SMG2000 trace, its sends and receives
// non-blocking and its collectives' volumes Score-P's, checks out (every
// message matched, every collective of matching volumes), and replayed
// on a 1 GB/s cluster at 1 Gf/s, its computations the gaps between the
// calls, it takes the recorded 2.566 s to within 2% (SMG2000 computes
// 99% of the time).
func TestSMG2000Replays(t *testing.T) {
	src, err := Open(testenv.Shared(t, "traces/alawneh/smg2000-4p"))
	if err != nil {
		t.Fatal(err)
	}
	if why := src.Meta().Attrs[trace.AttrNoReplay]; why != "" {
		t.Fatalf("not replayable: %s", why)
	}
	rep, err := check.Check(src, check.Options{Protocol: check.SimGrid})
	if err != nil || !rep.OK() {
		t.Fatalf("check: %v %v", err, rep.Problems)
	}
	p, err := platform.ParseCluster("4x1Gf,1GBps,1us")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Simulate(trace.UntimedAbove(src, 1e9, trace.FromSeconds(1e-6)), p, nil, sim.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var first, last trace.Time = math.MaxInt64, 0
	if err := trace.ForEach(src, func(_, _ int, e *trace.Event) error {
		first, last = min(first, e.Enter), max(last, e.Exit)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	recorded := (last - first).Seconds()
	if math.Abs(res.Time-recorded) > 0.02*recorded || res.Messages < 75000 {
		t.Errorf("replayed in %.6f s with %d messages, recorded %.6f s", res.Time, res.Messages, recorded)
	}
}

// TestCollectivesMismatch: ranks whose collectives differ in kind or in
// number are read but not replayed, the first line at fault named.
func TestCollectivesMismatch(t *testing.T) {
	for _, c := range []struct{ rank0, rank1, want string }{
		{"ALLREDUCE 1 t1 1 t2 2 s 16 r 16\n", "ALLGATHER -1 t1 1 t2 2 s 16 r 16\n", "Process1.txt:1: collective #1 is allgather, rank 0's allreduce"},
		{"DEL1\n", "ALLREDUCE -1 t1 1 t2 2 s 16 r 16\n", "Process1.txt:1: collective #1, when"},
		{"ALLREDUCE 1 t1 1 t2 2 s 16 r 16\n", "DEL1\n", "Process1.txt has 0 collectives"},
	} {
		dir := t.TempDir()
		for r, text := range []string{c.rank0, c.rank1} {
			if err := os.WriteFile(filepath.Join(dir, "Process"+strconv.Itoa(r)+".txt"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		src, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if why := src.Meta().Attrs[trace.AttrNoReplay]; !strings.Contains(why, c.want) {
			t.Errorf("%q / %q: %q, want %q", c.rank0, c.rank1, why, c.want)
		}
	}
}

// TestIsRankFile: Process<r>.txt, r in decimal digits, and nothing else.
func TestIsRankFile(t *testing.T) {
	for name, want := range map[string]bool{
		"Process0.txt": true, "Process127.txt": true,
		"Process.txt": false, "Process1.txt.gz": false, "process1.txt": false,
		"Process1a.txt": false, "Process-1.txt": false, "xProcess1.txt": false,
	} {
		if got := isRankFile(name); got != want {
			t.Errorf("isRankFile(%q) = %v, want %v", name, got, want)
		}
	}
}
