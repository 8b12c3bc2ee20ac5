package ti

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kairos/format"
	"kairos/internal/fileio"
	"kairos/internal/testenv"
	"kairos/trace"
)

// readRank parses the lines of rank r of text (a shared trace of n ranks).
func readRank(t *testing.T, text string, r, n int, def trace.Datatype) ([]trace.Event, error) {
	t.Helper()
	rd := NewReader(strings.NewReader(text), "t.ti", r, n, def, ReaderOptions{})
	var evs []trace.Event
	for rd.Next() {
		evs = append(evs, rd.Event().Clone())
	}
	return evs, rd.Err()
}

// ev builds an expected event.
func ev(k trace.Kind, set func(e *trace.Event)) trace.Event {
	e := trace.NewEvent(k)
	if set != nil {
		set(&e)
	}
	return e
}

// loadAll reads every rank of src into cloned events.
func loadAll(t *testing.T, src trace.Source) [][]trace.Event {
	t.Helper()
	out := make([][]trace.Event, src.NumRanks())
	err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		out[r] = append(out[r], e.Clone())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFigure1 reads the ring of seed 003's Figure 1 (four ranks compute
// 1e6 flops and pass 1e6 bytes around a ring), in SimGrid 3.32's syntax,
// which adds a tag to send and recv.
func TestFigure1(t *testing.T) {
	tr, err := Open(testenv.WriteFile(t, "fig1.ti", testenv.Figure1Ring))
	if err != nil {
		t.Fatal(err)
	}
	if tr.NumRanks() != 4 || tr.Layout() != Shared {
		t.Fatalf("got %d ranks, layout %v; want 4, shared", tr.NumRanks(), tr.Layout())
	}
	got := loadAll(t, tr)
	compute := ev(trace.Compute, func(e *trace.Event) { e.Compute = 1e6 })
	send := func(to int32) trace.Event {
		return ev(trace.Send, func(e *trace.Event) { e.Partner, e.SendBytes = to, 1e6 })
	}
	recv := func(from int32) trace.Event {
		return ev(trace.Recv, func(e *trace.Event) { e.Partner, e.RecvBytes = from, 1e6 })
	}
	want := [][]trace.Event{
		{compute, send(1), recv(3)},
		{recv(0), compute, send(2)},
		{recv(1), compute, send(3)},
		{recv(2), compute, send(0)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestTableI checks that every action of seed 003's Table I, written as
// SimGrid 3.32 spells it, reads as its kind.
func TestTableI(t *testing.T) {
	lines := map[string]trace.Kind{
		"compute 956140":                  trace.Compute,
		"send 1 0 1240":                   trace.Send,
		"isend 1 0 1240":                  trace.Isend,
		"recv 1 0 1240":                   trace.Recv,
		"irecv 1 0 1240":                  trace.Irecv,
		"bcast 1240":                      trace.Bcast,
		"reduce 1240 100":                 trace.Reduce,
		"reducescatter 1 2 3 4 100":       trace.ReduceScatter,
		"allreduce 1240 100":              trace.Allreduce,
		"alltoall 10 10":                  trace.Alltoall,
		"alltoallv 10 1 2 3 4 10 4 3 2 1": trace.Alltoallv,
		"gather 10 10":                    trace.Gather,
		"allgatherv 1 1 2 3 4":            trace.Allgatherv,
		"barrier":                         trace.Barrier,
		"wait 0 1 0":                      trace.Wait,
		"waitall":                         trace.Waitall,
	}
	for line, k := range lines {
		evs, err := readRank(t, "0 "+line+"\n", 0, 4, trace.TypeByte)
		if err != nil || len(evs) != 1 || evs[0].Kind != k {
			t.Errorf("%q: got %v, %v; want one %v", line, evs, err, k)
		}
	}
}

const doubleDefault = 1

// TestActions checks every action's fields against SimGrid 3.32's parser
// (4 ranks, default datatype MPI_BYTE unless the case says otherwise).
func TestActions(t *testing.T) {
	cases := []struct {
		line string
		def  trace.Datatype // the default datatype; 0 (MPI_DOUBLE) is written as doubleDefault
		want trace.Event
	}{
		{"init", 0, ev(trace.Init, nil)},
		{"init 1", 0, ev(trace.Init, nil)},
		{"finalize", 0, ev(trace.Finalize, nil)},
		{"compute 6.0475e+06", 0, ev(trace.Compute, func(e *trace.Event) { e.Compute = 6.0475e6 })},
		{"compute 0x10", 0, ev(trace.Compute, func(e *trace.Event) { e.Compute = 16 })},
		{"sleep 0.25", 0, ev(trace.Sleep, func(e *trace.Event) { e.Compute = 0.25 })},
		{"send 1 3 200000 0", 0, ev(trace.Send, func(e *trace.Event) {
			e.Partner, e.Tag, e.SendBytes, e.SendType = 1, 3, 1600000, trace.TypeDouble
		})},
		{"send 1 3 1e3 6 extra tokens", 0, ev(trace.Send, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes, e.SendType = 1, 3, 1000, 6 })},
		{"send 1 3 2.9", 0, ev(trace.Send, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes = 1, 3, 2 })},
		{"send 1 3 10", doubleDefault, ev(trace.Send, func(e *trace.Event) { e.Partner, e.Tag, e.SendBytes = 1, 3, 80 })},
		{"recv 2 7 -1", 0, ev(trace.Recv, func(e *trace.Event) { e.Partner, e.Tag, e.RecvBytes = 2, 7, -1 })},
		{"recv -333 8 10 1", 0, ev(trace.Recv, func(e *trace.Event) {
			e.Partner, e.Tag, e.RecvBytes, e.RecvType = trace.AnySource, 8, 40, trace.TypeInt
		})},
		{"recv -555 -444 10", 0, ev(trace.Recv, func(e *trace.Event) {
			e.Partner, e.Tag, e.RecvBytes = trace.AnySource, trace.AnyTag, 10
		})},
		{"isend 1 0 5", 0, ev(trace.Isend, func(e *trace.Event) { e.Partner, e.SendBytes, e.Request = 1, 5, 1 })},
		{"irecv 1 0 5", 0, ev(trace.Irecv, func(e *trace.Event) { e.Partner, e.RecvBytes, e.Request = 1, 5, 1 })},
		{"wait 0 1 0", 0, ev(trace.Wait, func(e *trace.Event) { e.Source, e.Partner = 0, 1 })},
		{"test 0 1 0", 0, ev(trace.Test, func(e *trace.Event) { e.Source, e.Partner = 0, 1 })},
		{"waitall 2", 0, ev(trace.Waitall, nil)},
		{"sendRecv 10 1 20 3 1 0", 0, ev(trace.SendRecv, func(e *trace.Event) {
			e.SendBytes, e.Partner, e.RecvBytes, e.Source, e.SendType, e.RecvType = 40, 1, 160, 3, trace.TypeInt, trace.TypeDouble
		})},
		{"barrier", 0, ev(trace.Barrier, nil)},
		{"bcast 5e4", 0, ev(trace.Bcast, func(e *trace.Event) { e.Partner, e.SendBytes = 0, 50000 })},
		{"bcast 5e4 2 3", 0, ev(trace.Bcast, func(e *trace.Event) { e.Partner, e.SendBytes, e.SendType = 2, 100000, 3 })},
		{"reduce 10 0 1 5", 0, ev(trace.Reduce, func(e *trace.Event) { e.Partner, e.SendBytes, e.SendType = 1, 40, 5 })},
		{"reduce 5e4 5e8", 0, ev(trace.Reduce, func(e *trace.Event) { e.Partner, e.SendBytes, e.Compute = 0, 50000, 5e8 })},
		{"allreduce 10 2.5 1", 0, ev(trace.Allreduce, func(e *trace.Event) { e.SendBytes, e.Compute, e.SendType = 40, 2.5, 1 })},
		{"scan 3 7", 0, ev(trace.Scan, func(e *trace.Event) { e.SendBytes, e.Compute = 3, 7 })},
		{"exscan 3 7 0", 0, ev(trace.Exscan, func(e *trace.Event) { e.SendBytes, e.Compute, e.SendType = 24, 7, 0 })},
		{"alltoall 500 400", 0, ev(trace.Alltoall, func(e *trace.Event) { e.SendBytes, e.RecvBytes = 500, 400 })},
		{"alltoall 500 400 1", 0, ev(trace.Alltoall, func(e *trace.Event) { e.SendBytes, e.RecvBytes, e.SendType = 2000, 400, 1 })},
		{"allgather 2 3 1 0", 0, ev(trace.Allgather, func(e *trace.Event) {
			e.SendBytes, e.RecvBytes, e.SendType, e.RecvType = 8, 24, 1, 0
		})},
		{"gather 68 68 0 0 0", 0, ev(trace.Gather, func(e *trace.Event) {
			e.Partner, e.SendBytes, e.RecvBytes, e.SendType, e.RecvType = 0, 544, 544, 0, 0
		})},
		{"scatter 1 2 3", 0, ev(trace.Scatter, func(e *trace.Event) { e.Partner, e.SendBytes, e.RecvBytes = 3, 1, 2 })},
		{"alltoallv 100 1 40 30 0 1000 1 80 100 0", 0, ev(trace.Alltoallv, func(e *trace.Event) {
			e.SendBytes, e.RecvBytes = 100, 1000
			e.SendCounts, e.RecvCounts = []int64{1, 40, 30, 0}, []int64{1, 80, 100, 0}
		})},
		{"alltoallv 6 0 1 2 3 6 0 1 2 3 1 1", 0, ev(trace.Alltoallv, func(e *trace.Event) {
			e.SendBytes, e.RecvBytes, e.SendType, e.RecvType = 24, 24, 1, 1
			e.SendCounts, e.RecvCounts = []int64{0, 4, 8, 12}, []int64{0, 4, 8, 12}
		})},
		{"gatherv 0 0 1 2 3 0 1 1", 0, ev(trace.Gatherv, func(e *trace.Event) {
			e.Partner, e.SendBytes, e.RecvBytes, e.SendType, e.RecvType = 0, 0, 24, 1, 1
			e.RecvCounts = []int64{0, 4, 8, 12}
		})},
		{"scatterv 0 1 2 3 0 2 1 1", 0, ev(trace.Scatterv, func(e *trace.Event) {
			e.Partner, e.SendBytes, e.RecvBytes, e.SendType, e.RecvType = 2, 24, 0, 1, 1
			e.SendCounts = []int64{0, 4, 8, 12}
		})},
		// allgatherv's three layouts (N = 4: 9 tokens = datatypes; more
		// than 9 = displacements; more than 11 = datatypes, displacements).
		{"allgatherv 275427 275427 275427 275427 204020 0 0", 0, ev(trace.Allgatherv, func(e *trace.Event) {
			e.SendBytes, e.RecvBytes, e.SendType, e.RecvType = 2203416, 8242408, 0, 0
			e.RecvCounts = []int64{2203416, 2203416, 2203416, 1632160}
		})},
		{"allgatherv 1 1 2 3 4 0 1 3 6", 0, ev(trace.Allgatherv, func(e *trace.Event) {
			e.SendBytes, e.RecvBytes, e.RecvCounts = 1, 10, []int64{1, 2, 3, 4}
		})},
		{"allgatherv 1 1 2 3 4 1 1 0 1 3 6", 0, ev(trace.Allgatherv, func(e *trace.Event) {
			e.SendBytes, e.RecvBytes, e.SendType, e.RecvType, e.RecvCounts = 4, 40, 1, 1, []int64{4, 8, 12, 16}
		})},
		{"reducescatter 275427 275427 275427 204020 11349173 0", 0, ev(trace.ReduceScatter, func(e *trace.Event) {
			e.Compute, e.RecvType, e.RecvBytes = 11349173, 0, 8242408
			e.RecvCounts = []int64{2203416, 2203416, 2203416, 1632160}
		})},
		{"comm_size 32", 0, ev(trace.CommSize, nil)},
		{"comm_split", 0, ev(trace.CommSplit, nil)},
		{"comm_dup", 0, ev(trace.CommDup, nil)},
		{"  0\tcompute   5  ", 0, ev(trace.Compute, func(e *trace.Event) { e.Compute = 5 })},
	}
	for _, c := range cases {
		def := trace.TypeByte
		if c.def == doubleDefault {
			def = trace.TypeDouble
		}
		line := c.line
		if !strings.HasPrefix(strings.TrimSpace(line), "0") {
			line = "0 " + line
		}
		evs, err := readRank(t, line+"\n", 0, 4, def)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		if len(evs) != 1 || !reflect.DeepEqual(evs[0], c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.line, evs, c.want)
		}
	}
}

// TestRequests checks SimGrid's request store: per-key FIFO, test puts
// the request back at the end of its queue, waitall forgets all, a wait
// on an unknown key completes nothing (Request 0), a receive from
// MPI_ANY_SOURCE is filed under -556 (a wait naming -333 or -555 does not
// find it, as in SimGrid 3.32).
func TestRequests(t *testing.T) {
	const text = `0 isend 1 5 8
0 isend 1 5 8
0 irecv 1 5 8
0 test 0 1 5
0 wait 0 1 5
0 wait 1 0 5
0 wait 0 1 5
0 wait 3 0 9
0 irecv -333 2 1
0 wait -333 0 2
0 wait -556 0 2
0 isend 2 0 1
0 waitall
0 wait 0 2 0
`
	evs, err := readRank(t, text, 0, 4, trace.TypeByte)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, e := range evs {
		got = append(got, e.Request)
	}
	// test pops request 1 and puts it back behind 2: the next wait on
	// (0,1,5) gets 2, the one after gets 1.
	want := []uint64{1, 2, 3, 1, 2, 3, 1, 0, 4, 0, 4, 5, 0, 0}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	if evs[12].Requests != nil {
		t.Errorf("waitall lists %v, want nil (all outstanding)", evs[12].Requests)
	}
}

// TestLastLineDropped reproduces SimGrid's quirk: a last line with no
// newline is dropped, unless KeepLastLine.
func TestLastLineDropped(t *testing.T) {
	p := testenv.WriteFile(t, "a.ti", "0 init\n0 compute 5\n\n0 finalize")
	for _, keep := range []bool{false, true} {
		tr, err := OpenWith(p, ReaderOptions{KeepLastLine: keep})
		if err != nil {
			t.Fatal(err)
		}
		evs := loadAll(t, tr)
		want := 2
		if keep {
			want = 3
		}
		if len(evs[0]) != want {
			t.Errorf("keep=%v: %d events, want %d", keep, len(evs[0]), want)
		}
		if w := tr.Warnings(); keep != (len(w) == 0) {
			t.Errorf("keep=%v: warnings %q", keep, w)
		}
	}
	// A per-rank file behaves the same.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r0"), []byte("0 init\n0 finalize"), 0o644)
	os.WriteFile(filepath.Join(dir, "r1"), []byte("1 init\n1 finalize\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "desc"), []byte("r0\nr1\n"), 0o644)
	tr, err := Open(filepath.Join(dir, "desc"))
	if err != nil {
		t.Fatal(err)
	}
	evs := loadAll(t, tr)
	if len(evs[0]) != 1 || len(evs[1]) != 2 || len(tr.Warnings()) != 1 {
		t.Errorf("got %d and %d events, warnings %q; want 1, 2 and one warning", len(evs[0]), len(evs[1]), tr.Warnings())
	}
}

// TestAllgathervDisplacementWarning: displacements are not kept, so a
// non-zero one (which would change allgatherv GB's time) is warned of,
// once per rank; zeros are not.
func TestAllgathervDisplacementWarning(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"0 init\n0 allgatherv 1 1 2 0 0 0 0\n1 allgatherv 1 1 2 0 0 0 0\n", 0},
		{"0 init\n0 allgatherv 1 1 2 0 0 0 1\n0 allgatherv 1 1 2 0 0 0 1\n1 allgatherv 1 1 2 0 0 0 0\n", 1},
		{"0 init\n0 allgatherv 1 1 2 0 0 0 1\n1 allgatherv 1 1 2 0 0 0 1\n", 2},
	} {
		p := filepath.Join(t.TempDir(), "t.ti")
		os.WriteFile(p, []byte(c.text), 0o644)
		tr, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		loadAll(t, tr)
		if w := tr.Warnings(); len(w) != c.want || c.want > 0 && !strings.Contains(w[0], "displacements are not kept") {
			t.Errorf("%q: warnings %q, want %d", c.text, w, c.want)
		}
	}
}

// TestNoInitWarning: a trace in which no rank starts with init is read
// (with MPI_BYTE as default datatype) and warned of, as SimGrid 3.32
// crashes on it; one init anywhere is enough.
func TestNoInitWarning(t *testing.T) {
	for _, c := range []struct {
		text string
		warn bool
	}{
		{"0 send 1 0 10\n1 recv 0 0 10\n", true},
		{"0 init\n0 send 1 0 10\n1 recv 0 0 10\n", false},
		{"0 init 1\n1 init 1\n", false},
	} {
		tr, err := Open(testenv.WriteFile(t, "t.ti", c.text))
		if err != nil {
			t.Fatal(err)
		}
		loadAll(t, tr)
		w := tr.Warnings()
		if got := len(w) > 0 && strings.Contains(w[0], "no rank starts with init"); got != c.warn || !c.warn && len(w) > 0 {
			t.Errorf("%q: warnings %q, want the init warning: %v", c.text, w, c.warn)
		}
	}
}

// TestDescription checks the per-rank layout: paths relative to the
// description's directory first, then to the working directory; the
// default datatype from init's argument; comments and blank lines.
func TestDescription(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "r0.txt"), []byte("# comment\n\n0 init 1\n0 send 1 0 2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "r1.txt"), []byte("1 init 1\n  1 recv 0 0 2  \n"), 0o644)
	os.WriteFile(filepath.Join(sub, "desc"), []byte("r0.txt\n\n../r1.txt\n"), 0o644)
	tr, err := Open(filepath.Join(sub, "desc"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Layout() != PerRank || tr.NumRanks() != 2 || tr.Meta().DefaultType != trace.TypeDouble {
		t.Fatalf("layout %v, %d ranks, default %d", tr.Layout(), tr.NumRanks(), tr.Meta().DefaultType)
	}
	evs := loadAll(t, tr)
	if evs[0][1].SendBytes != 16 || evs[1][1].RecvBytes != 16 {
		t.Errorf("sizes %d, %d; want 16 (2 doubles)", evs[0][1].SendBytes, evs[1][1].RecvBytes)
	}
	rd, _ := tr.OpenRank(1)
	rd.Next()
	rd.Next()
	if pos := rd.(trace.Positioner).Position(); pos != filepath.Join(dir, "r1.txt")+":2" {
		t.Errorf("position %q", pos)
	}
	rd.Close()

	// Relative to the working directory (SimGrid's rule).
	os.WriteFile(filepath.Join(dir, "desc2"), []byte("sub/r0.txt\nr1.txt\n"), 0o644)
	t.Chdir(dir)
	if _, err := Open(filepath.Join(sub, "..", "desc2")); err != nil {
		t.Error(err)
	}
	os.WriteFile(filepath.Join(sub, "desc3"), []byte("nothere.txt\nr1.txt\n"), 0o644)
	if _, err := Open(filepath.Join(sub, "desc3")); err == nil || !strings.Contains(err.Error(), "desc3:1: cannot find trace file \"nothere.txt\"") {
		t.Errorf("missing file: %v", err)
	}
}

// TestLocation checks that location lines become regions.
func TestLocation(t *testing.T) {
	p := testenv.WriteFile(t, "loc.ti", "0 init\n0 location main.c 42\n1 location util.c 7\n0 location util.c 9\n")
	tr, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	evs := loadAll(t, tr)
	m := tr.Meta()
	if e := evs[0][1]; e.Kind != trace.Location || m.RegionName(e.Region) != "main.c" || e.Tag != 42 {
		t.Errorf("got %+v", e)
	}
	if a, b := evs[0][2], evs[1][0]; a.Region != b.Region || m.RegionName(a.Region) != "util.c" || a.Tag != 9 {
		t.Errorf("got %+v and %+v", a, b)
	}
}

// TestErrors checks that every malformed line gets file:line:col,
// what was expected and what was found.
func TestErrors(t *testing.T) {
	cases := []struct{ text, want string }{
		{"0 frobnicate 1\n", `t.ti:1:3: expected a SimGrid 3.32 action name, got "frobnicate"`},
		{"0\n", "t.ti:1:2: expected an action name after the rank, got end of line"},
		{"0 init\n0 send 1 0\n", "t.ti:2:11: expected a partner rank, a tag and a count, got end of line"},
		{"0 send x 0 1\n", `t.ti:1:8: expected a partner rank (an integer from -2147483648 to 2147483647), got "x"`},
		{"0 send 1 1e3 1\n", `t.ti:1:10: expected a tag (an integer from -2147483648 to 2147483647), got "1e3"`},
		{"0 send 1 0 abc\n", `t.ti:1:12: expected a count (a number of elements, at most 9223372036854775807), got "abc"`},
		{"0 send 1 0 -5\n", `t.ti:1:12: expected a non-negative count, got "-5"`},
		{"0 send 1 0 5 77\n", `t.ti:1:14: expected a datatype id (-1 to 59), got "77"`},
		{"0 send 1 0 5 06\n", `t.ti:1:14: expected a datatype id (-1 to 59), got "06"`},
		{"0 compute\n", "t.ti:1:10: expected a number of flops, got end of line"},
		{"0 compute 1e400\n", `t.ti:1:11: expected a number of flops, got "1e400"`},
		{"0 compute nan\n", `t.ti:1:11: expected a number of flops, got "nan"`},
		{"0 compute 1_000\n", `t.ti:1:11: expected a number of flops, got "1_000"`},
		{"0 sleep x\n", `t.ti:1:9: expected a duration in seconds, got "x"`},
		{"0 wait 0 1\n", "t.ti:1:11: expected <src> <dst> <tag>, got end of line"},
		{"0 sendRecv 1 1 1 1 0\n", "t.ti:1:21: expected <sendcount> <dst> <recvcount> <src> <sendtype> <recvtype>, got end of line"},
		{"0 bcast 1 r\n", `t.ti:1:11: expected a root rank (an integer from -2147483648 to 2147483647), got "r"`},
		{"0 reduce 5\n", "t.ti:1:11: expected a count and a number of flops, got end of line"},
		{"0 allreduce 4294967296 0\n", `t.ti:1:13: expected a count (a number of elements, at most 4294967295), got "4294967296"`},
		{"0 alltoall 2147483648 1\n", `t.ti:1:12: expected a count (a number of elements, at most 2147483647), got "2147483648"`},
		{"0 alltoallv 10 1 2 3 4 10 1 2 3\n", "t.ti:1:32: expected a send buffer size, 4 send counts, a receive buffer size and 4 receive counts, got end of line"},
		{"0 alltoallv 10 1 2 3e0 4 10 1 2 3 4\n", `t.ti:1:20: expected a per-rank count (an integer from -2147483648 to 2147483647), got "3e0"`},
		{"0 gatherv 1 1 2 3\n", "t.ti:1:18: expected a send count and 4 receive counts, got end of line"},
		{"0 allgatherv 1 1 2 3 4 0 1 2\n", "t.ti:1:29: expected 4 displacements, got end of line"},
		{"0 allgatherv 1 1 2 3 4 1 1 0 1 x 6\n", `t.ti:1:32: expected a displacement (an integer from -2147483648 to 2147483647), got "x"`},
		{"0 reducescatter 1 2 3 4\n", "t.ti:1:24: expected 4 receive counts and a number of flops, got end of line"},
		{"0 location main.c\n", "t.ti:1:18: expected a file name and a line number, got end of line"},
		{"0 send 99999999999 0 1\n", `t.ti:1:8: expected a partner rank (an integer from -2147483648 to 2147483647), got "99999999999"`},
		{"0 send 1 0 99999999999999999999\n", `t.ti:1:12: expected a count (a number of elements, at most 9223372036854775807), got "99999999999999999999"`},
		{"0 bcast 1e300\n", `t.ti:1:9: expected a count (a number of elements, at most 9223372036854775807), got "1e300"`},
		{"0 alltoallv 10 1 2 -3 4 10 1 2 3 4\n", `t.ti:1:20: expected a non-negative per-rank count, got "-3"`},
		{"0 send 1 0 1152921504606846976 0\n", `t.ti:1:12: expected a count whose size in bytes fits in 63 bits, got "1152921504606846976"`},
	}
	for _, c := range cases {
		_, err := readRank(t, c.text, 0, 4, trace.TypeByte)
		var pe *ParseError
		if !errors.As(err, &pe) || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.text, err, c.want)
		}
	}
}

// TestFileErrors checks the errors found when opening or reading files.
func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad-rank.ti"), []byte("0 init\nx1 init\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "r0"), []byte("0 init\n1 init\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "r1"), []byte("1 init\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "desc"), []byte("r0\nr1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty"), []byte("\n\n"), 0o644)
	if _, err := Open(filepath.Join(dir, "bad-rank.ti")); err == nil ||
		err.Error() != filepath.Join(dir, "bad-rank.ti")+`:2:1: expected a rank (0 to 16777215, no sign, no leading zero), got "x1"` {
		t.Errorf("bad rank: %v", err)
	}
	tr, err := Open(filepath.Join(dir, "desc"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = trace.Load(tr)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "r0")+`:2:1: expected rank 0 (the rank of this file), got "1"`) {
		t.Errorf("rank mismatch: %v", err)
	}
	if tr, err := Open(filepath.Join(dir, "empty")); err != nil || tr.NumRanks() != 0 {
		t.Errorf("empty file: %v, want a trace of no ranks", err)
	}
}

// head returns the first 4096 bytes of a file, as format.Detect passes them.
func head(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b[:min(len(b), 4096)]
}

// TestNumRanks checks ReaderOptions.NumRanks, smpirun's -np: lines of
// higher ranks are ignored, missing ranks are empty.
func TestNumRanks(t *testing.T) {
	p := testenv.WriteFile(t, "a.ti", "0 init\n1 init\n2 init\n")
	for _, c := range []struct{ np, ranks, warnings int }{{0, 3, 0}, {2, 2, 1}, {5, 5, 0}} {
		tr, err := OpenWith(p, ReaderOptions{NumRanks: c.np})
		if err != nil {
			t.Fatal(err)
		}
		evs := loadAll(t, tr)
		if len(evs) != c.ranks || len(tr.Warnings()) != c.warnings {
			t.Errorf("np %d: %d ranks, warnings %q", c.np, len(evs), tr.Warnings())
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r0"), []byte("0 init\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "r1"), []byte("1 init\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "desc"), []byte("r0\nr1\n"), 0o644)
	if _, err := OpenWith(filepath.Join(dir, "desc"), ReaderOptions{NumRanks: 3}); err == nil {
		t.Error("3 ranks from a description of 2 files: no error")
	}
}

// TestNoRegions: without regions, a description's location lines are
// markers of region 0, the metadata has no regions, every other field is
// as a full open reads it, and an unterminated last line is still found
// (from the end of its file only).
func TestNoRegions(t *testing.T) {
	dir := testenv.WriteFiles(t, map[string]string{
		"desc.txt": "r0.ti\nr1.ti\n",
		"r0.ti":    "0 init\n0 location main.c 42\n0 send 1 3 10\n0 location util.c 9\n",
		"r1.ti":    "1 init\n1 location util.c 7\n1 recv 0 3 10\n1 compute 5", // no final newline
	})
	full, err := Open(filepath.Join(dir, "desc.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bare, err := OpenWith(filepath.Join(dir, "desc.txt"), ReaderOptions{NoRegions: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(full.Meta().Regions); n != 3 {
		t.Errorf("full open: %d regions, want 3", n)
	}
	if n := len(bare.Meta().Regions); n != 1 {
		t.Errorf("without regions: %d regions, want only the unknown one", n)
	}
	want, got := loadAll(t, full), loadAll(t, bare)
	for r := range want {
		if len(got[r]) != len(want[r]) {
			t.Fatalf("rank %d: %d events, want %d", r, len(got[r]), len(want[r]))
		}
		for i := range want[r] {
			w := want[r][i]
			w.Region = 0
			if !reflect.DeepEqual(got[r][i], w) {
				t.Errorf("rank %d event %d: %+v, want %+v", r, i, got[r][i], w)
			}
		}
	}
	if w, g := full.Warnings(), bare.Warnings(); len(w) != 1 || !reflect.DeepEqual(g, w) {
		t.Errorf("warnings %q, want those of a full open, %q (one)", g, w)
	}
}

// TestNoRegionsHeads: the readers that take over what the scan read of
// their files (the first 4 to 32 KiB, the file left open) read what
// a full open reads, with the same warnings, whether the buffer holds the
// whole file or not, the first significant line or not (a long comment
// first), for compressed files (which the scan does not keep), and when
// a rank is opened again.
func TestNoRegionsHeads(t *testing.T) {
	var long strings.Builder
	long.WriteString("1 init 1\n")
	for i := range 2000 {
		fmt.Fprintf(&long, "1 compute %d\n1 isend 0 %d 8\n1 wait 1 0 %d\n", 1000+i, i%7, i%7)
	}
	comment := "# " + strings.Repeat("c", 40<<10) + "\n\n2 init\n2 recv 1 0 8\n"
	dir := testenv.WriteFiles(t, map[string]string{
		"desc.txt": "r0.ti\nr1.ti\nr2.ti\nr3.ti\nr4.ti.gz\nr5.ti\n",
		"r0.ti":    "0 init\n0 send 1 3 10\n0 compute 5", // no final newline
		"r1.ti":    long.String(),
		"r2.ti":    comment,
		"r3.ti":    "",
		"r5.ti":    long.String()[:40<<10+10], // an unterminated line past the buffer
	})
	if err := fileio.WriteFile(filepath.Join(dir, "r4.ti.gz"), func(w io.Writer) error {
		_, err := io.WriteString(w, "4 init\n4 barrier\n")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "r5.ti"), []byte(strings.ReplaceAll(long.String()[:40<<10+10], "1 ", "5 ")), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "desc.txt")
	sameWithoutRegions(t, path)
	bare, err := OpenWith(path, ReaderOptions{NoRegions: true})
	if err != nil {
		t.Fatal(err)
	}
	first, again := loadAll(t, bare), loadAll(t, bare)
	if !reflect.DeepEqual(first, again) || len(first[1]) != 6001 {
		t.Errorf("read again: %d events of rank 1, then %d; want 6001 both times", len(first[1]), len(again[1]))
	}
}

// TestScanTail: the end of a file read from its last block is what a
// whole read gives, for lines shorter and longer than the block and for
// compressed files.
func TestScanTail(t *testing.T) {
	long := strings.Repeat("x", 40)
	for _, content := range []string{"", "\n", "0 init\n", "0 init", "0 init\n0 comp", "0 init\n" + long, long, long + "\n", "a\n" + long + "\n" + long} {
		for _, name := range []string{"t.ti", "t.ti.gz"} {
			path := filepath.Join(t.TempDir(), name)
			if err := fileio.WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, content); return err }); err != nil {
				t.Fatal(err)
			}
			_, want, err := scanBulk(path, []byte("location"), make([]byte, 64))
			if err != nil {
				t.Fatal(err)
			}
			var f *fileio.Handle // nil for the compressed file: read it all
			if !strings.HasSuffix(name, ".gz") {
				if f, err = fileio.OpenHandle(path); err != nil {
					t.Fatal(err)
				}
				defer f.Close()
			}
			got, err := scanTail(path, f, make([]byte, 16))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s %q: tail %q, want %q", name, content, got, want)
			}
		}
	}
}

// TestHintMissingFiles: a description whose files are missing is not
// recognised, and the error says which file was looked for where; other
// text gets the plain error.
func TestHintMissingFiles(t *testing.T) {
	dir := t.TempDir()
	desc := filepath.Join(dir, "desc.txt")
	os.WriteFile(desc, []byte("traces/rank-0.ti\ntraces/rank-1.ti\n"), 0o644)
	_, err := format.Detect(desc)
	if !errors.Is(err, format.ErrUnknownFormat) || !strings.Contains(err.Error(), `cannot find trace file "traces/rank-0.ti" (looked in `+dir) {
		t.Errorf("description with missing files: %v", err)
	}
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("hello world\n"), 0o644)
	if _, err := format.Detect(other); err == nil || strings.Contains(err.Error(), "read as a SimGrid trace description") {
		t.Errorf("plain text: %v", err)
	}
}

// TestDescriptionNamesDirectory: a description line naming a directory
// says so, rather than that the file cannot be found.
func TestDescriptionNamesDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "r0"), []byte("0 init\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "r1"), 0o755)
	desc := filepath.Join(dir, "desc")
	os.WriteFile(desc, []byte("r0\nr1\n"), 0o644)
	want := desc + `:2: trace file "r1" (` + filepath.Join(dir, "r1") + `) is a directory`
	if _, err := Open(desc); err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestWaitAnyTag reads the wait of a receive from any tag as SimGrid
// keys it, with the receive's MPI_ANY_TAG, and writes it back as -444.
func TestWaitAnyTag(t *testing.T) {
	text := "0 irecv 1 -444 5\n0 test 1 0 -444\n0 wait 1 0 -444\n"
	evs, err := readRank(t, text, 0, 2, 0)
	if err != nil || len(evs) != 3 {
		t.Fatalf("read %d events, %v", len(evs), err)
	}
	for _, e := range evs[1:] {
		if e.Tag != trace.AnyTag || e.Source != 1 || e.Partner != 0 || e.Request != evs[0].Request || e.Request == 0 {
			t.Errorf("%s: source %d partner %d tag %d request %d; want 1 0 %d request %d", e.Kind, e.Source, e.Partner, e.Tag, e.Request, trace.AnyTag, evs[0].Request)
		}
	}
	tr := trace.New(2, trace.NewMeta())
	for i := range evs {
		tr.Ranks[0].Append(&evs[i])
	}
	var out strings.Builder
	if err := WriteShared(&out, tr, &WriteStats{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 wait 1 0 -444\n") || !strings.Contains(out.String(), "0 test 1 0 -444\n") {
		t.Errorf("written back as:\n%s", out.String())
	}
}
