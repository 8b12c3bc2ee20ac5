package ti

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"kairos/trace"
)

// FuzzReader opens arbitrary text as a shared TI trace. It must never
// panic; a failure must be a ParseError or name the file; a trace that
// reads without error must survive write-then-read unchanged.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		allActions,
		"0 init\n0 compute 1e6\n0 send 1 0 1e6\n1 init\n1 recv 0 0 1e6\n",
		"0 init\n0 finalize",
		"# only a comment\n\n",
		"0 isend 1 0 8\n0 test 0 1 0\n0 wait 0 1 0\n0 wait 0 1 0\n0 waitall\n",
		"0 irecv -333 -444 5\n0 wait -333 0 -444\n",
		"0 allgatherv 1 1 1 0\n1 allgatherv 1 1 1 1 1 0 0\n",
		"0 alltoallv 1 1 1 1 1 1\n1 alltoallv 1 1 1 1 1 1 1 1\n",
		"0 reducescatter 1 2 3 4 5\n",
		"0 location a.c 3\n1 location b.c 4\n0 location b.c 5\n",
		"0 compute 0x1p-3\n0 sleep .5\n0 compute -0\n",
		"0 send 1 0 1e400\n",
		"7 init 1\n",
		"0\tinit \r\n 0  bcast 10 0 6 \r\n",
		"0 sendRecv 1 1 1 1 0 0\n1 sendRecv 1 0 1 0 0 0\n",
		// Issue 43: ranks claimed and not held, absurd amounts, a cut-off
		// last line, an empty file.
		"1000000 init\n", "0 init\n1999999 init\n", "16777216 init\n", "99999999 init\n",
		"0 init\n0 compute -1e6\n", "0 init\n0 sleep -1\n", "0 compute 1e300\n", "0 sleep 1e300\n",
		"0 compute NaN\n", "0 compute inf\n", "0 allreduce 8 8 -1e6\n", "0 recv 1 0 -1020\n",
		"0 init\n0 send 1 0 8\n1 init\n1 recv 0 0 8", "",
		// A v-collective's root outside the ranks the trace has.
		"0 init\n0 gatherv 8 8 8 5\n0 finalize\n1 init\n1 gatherv 8 8 8 5\n1 finalize\n",
		"0 scatterv 8 8 8 8 5\n1 scatterv 8 8 8 8 5\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 || bytes.Contains(data, []byte{0}) {
			return
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "f.ti")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tr, err := Open(path)
		if err != nil {
			checkErr(t, err, path)
			return
		}
		if tr.NumRanks() > 64 {
			return
		}
		want, err := loadErr(tr)
		if err != nil {
			checkErr(t, err, path)
			return
		}
		// The same data as the one per-rank file of a description,
		// opened with and without regions: the same events but for
		// their regions, the same warnings.
		desc := filepath.Join(dir, "d.txt")
		if err := os.WriteFile(desc, []byte("f.ti\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sameWithoutRegions(t, desc)
		// And as rank 0's file of a description of two ranks.
		if err := os.WriteFile(filepath.Join(dir, "g.ti"), []byte("1 init\n1 finalize\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(desc, []byte("f.ti\ng.ti\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		sameWithoutRegions(t, desc)
		out := filepath.Join(dir, "out.ti")
		if _, err := WriteFile(out, tr, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		back, err := Open(out)
		if err != nil {
			t.Fatalf("written trace does not open: %v", err)
		}
		got, err := loadErr(back)
		if err != nil {
			t.Fatalf("written trace does not read: %v", err)
		}
		// The writer gives every rank the init SimGrid needs before its
		// first MPI action, and those it gives one a finalize.
		for r, evs := range want {
			want[r] = withInit(evs)
		}
		if !reflect.DeepEqual(got, want) || back.Meta().DefaultType != tr.Meta().DefaultType ||
			!reflect.DeepEqual(back.Meta().Regions, tr.Meta().Regions) {
			text, _ := os.ReadFile(out)
			t.Fatalf("round trip changed the trace:\n got %v\nwant %v\nwritten:\n%s", got, want, text)
		}
	})
}

// withInit returns evs with an init before the first MPI action if no
// init comes before it, as the writer gives it.
func withInit(evs []trace.Event) []trace.Event {
	for i, e := range evs {
		switch e.Kind {
		case trace.Init:
			return evs
		case trace.Compute, trace.Sleep, trace.Location:
			continue
		}
		evs = slices.Insert(evs, i, trace.NewEvent(trace.Init))
		if !slices.ContainsFunc(evs, func(e trace.Event) bool { return e.Kind == trace.Finalize }) {
			evs = append(evs, trace.NewEvent(trace.Finalize))
		}
		return evs
	}
	return evs
}

// sameWithoutRegions checks that path opened without regions reads as it
// does with them, every event in region 0.
func sameWithoutRegions(t *testing.T, path string) {
	t.Helper()
	full, err1 := Open(path)
	bare, err2 := OpenWith(path, ReaderOptions{NoRegions: true})
	if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
		t.Fatalf("open: %v; without regions: %v", err1, err2)
	}
	if err1 != nil || full.NumRanks() > 64 {
		return
	}
	want, err1 := loadErr(full)
	got, err2 := loadErr(bare)
	if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
		t.Fatalf("read: %v; without regions: %v", err1, err2)
	}
	for r := range want {
		for i := range want[r] {
			want[r][i].Region = 0
		}
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(full.Warnings(), bare.Warnings()) {
		t.Fatalf("without regions:\n got %v %q\nwant %v %q", got, bare.Warnings(), want, full.Warnings())
	}
}

// checkErr checks that err says where it happened.
func checkErr(t *testing.T, err error, path string) {
	t.Helper()
	var pe *ParseError
	if errors.As(err, &pe) {
		if pe.File != path || pe.Line < 1 || pe.Col < 1 {
			t.Fatalf("bad position in %v", err)
		}
		return
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error does not name the file: %v", err)
	}
}

func loadErr(src trace.Source) ([][]trace.Event, error) {
	out := make([][]trace.Event, src.NumRanks())
	err := trace.ForEach(src, func(r, _ int, e *trace.Event) error {
		out[r] = append(out[r], e.Clone())
		return nil
	})
	return out, err
}

// FuzzFastPath checks that the parser's fast path (parser.fastAction)
// reads every line it accepts into the event the general path (split,
// then action) makes of it, request ids and stores included, line after
// line of one rank.
func FuzzFastPath(f *testing.F) {
	for _, s := range []string{"0 init\n", " \t0  send\t1 2 3 \r\n#x\n\n\v0 a\f\n0 b", "a\rb c\n", "\r\n\r", "#\n #a\n",
		"1000000 init", "0 init\n1999999 init\n", "",
		"0 init 1\n0 compute 1.5e6\n0 compute -1\n0 compute 1e400\n0 compute 0x10\n0 compute 12345678901234567890\n",
		"0 isend 1 2 3\n0 irecv 1 2 3 4\n0 isend 1 2 3 60\n0 send 1 2 -3\n0 recv 1 2 3 -1\n0 recv  1 2 3\n0 recv 1 2 3 \n",
		"0 isend 1 0 8\n0 test 0 1 0\n0 wait 0 1 0\n0 wait 0 1 0\n0 waitall\n0 waitall 1\n0 wait 1 0 0 0\n",
		"0 irecv -333 -444 5\n0 wait -333 0 -444\n0 finalize\n0 finalize x\n00 init\n0 init\t1\n"} {
		f.Add([]byte(s))
	}
	rankTok := []byte("0")
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := newParser("f.ti", 0, 4, trace.TypeDouble)
		gen := newParser("f.ti", 0, 4, trace.TypeDouble)
		for ln := 1; len(data) > 0; ln++ {
			n := fast.fastAction(data, rankTok)
			line, next := data, len(data)
			if e := bytes.IndexByte(data, '\n'); e >= 0 {
				line, next = data[:e], e+1
			}
			data = data[next:]
			var err error
			mine := gen.split(line) && bytes.Equal(gen.toks[0], rankTok)
			if mine {
				err = gen.action(ln)
			}
			switch {
			case n == 0:
				if fast.split(line) && bytes.Equal(fast.toks[0], rankTok) {
					fast.action(ln)
				}
				continue
			case n != next || next != len(line)+1:
				t.Fatalf("line %d %q: fast path read %d bytes", ln, line, n)
			case !mine:
				t.Fatalf("line %d %q: fast path read a line the general path skips", ln, line)
			case err != nil:
				t.Fatalf("line %d %q: fast path read a line the general path refuses: %v", ln, line, err)
			case !reflect.DeepEqual(fast.ev, gen.ev):
				t.Fatalf("line %d %q: fast path %+v, general path %+v", ln, line, fast.ev, gen.ev)
			}
		}
		if fast.nextReq != gen.nextReq || fast.store.len() != gen.store.len() || fast.warnEmpty != gen.warnEmpty {
			t.Fatalf("the parsers' states differ at the end: %d %d %v, %d %d %v", fast.nextReq, fast.store.len(), fast.warnEmpty,
				gen.nextReq, gen.store.len(), gen.warnEmpty)
		}
	})
}
