package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kairos/format/otf2"
	"kairos/internal/testenv"
	"kairos/trace"
)

// otf2PrintLines returns the event lines of a gzipped otf2-print -A output.
func otf2PrintLines(t *testing.T, path string) string {
	t.Helper()
	lines, err := otf2.ReadPrintOutputFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestPrintOTF2 prints OTF2 samples (an anchor file and a directory) and
// compares the output, whole lines, with otf2-print -A's event lines.
func TestPrintOTF2(t *testing.T) {
	for _, c := range []struct{ name, arg string }{
		{"tiny_mpi", "traces.otf2"},
		{"pipit-ping-pong-otf2-papi", ""},
	} {
		dir := testenv.Shared(t, filepath.Join("traces/otf2", c.name))
		want := otf2PrintLines(t, testenv.Shared(t, filepath.Join("traces/oracles/otf2", c.name+".otf2-print-A.txt.gz")))
		var out, errb bytes.Buffer
		if code := run([]string{"print", filepath.Join(dir, c.arg)}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errb.String())
		}
		if out.String() != want {
			t.Errorf("%s: output differs from otf2-print's event lines:\n%s", c.name, firstDiff(out.String(), want))
		}
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		if i >= len(g) || i >= len(w) || g[i] != w[i] {
			gl, wl := "", ""
			if i < len(g) {
				gl = g[i]
			}
			if i < len(w) {
				wl = w[i]
			}
			return "line " + strconv.Itoa(i+1) + ":\n got " + gl + "\nwant " + wl
		}
	}
	return ""
}

// TestPrintModel prints the tiny_mpi sample's MPI calls (golden file) and
// the same as JSON lines.
func TestPrintModel(t *testing.T) {
	dir := testenv.Shared(t, "traces/otf2/tiny_mpi")
	var out, errb bytes.Buffer
	if code := run([]string{"print", "--model", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	golden(t, "print/tiny_mpi-model.txt", out.String())
	out.Reset()
	if code := run([]string{"print", "--model", "--json", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d JSON lines, want 8", len(lines))
	}
	var first modelJSON
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Kind != "send" || first.Partner == nil || *first.Partner != 1 || first.SendBytes != 1024 || first.Region != "main" {
		t.Errorf("first event %+v", first)
	}
}

// TestPrintUntimed prints a time-independent trace rank by rank.
func TestPrintUntimed(t *testing.T) {
	path := csWrite(t, "ktr", "u.ktr",
		[]trace.Event{csEvent(trace.Send, func(e *trace.Event) { e.Partner, e.SendBytes = 1, 8 }), csEvent(trace.Barrier, nil)},
		[]trace.Event{csRecv(0, 8), csEvent(trace.Barrier, nil)})
	var out, errb bytes.Buffer
	if code := run([]string{"print", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	want := "0 0 - - send peer=1 tag=0 send=8\n0 1 - - barrier\n1 0 - - recv peer=0 tag=0 recv=8\n1 1 - - barrier\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestPrintUsage checks the exit status of bad calls.
func TestPrintUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"print"}, &out, &errb); code != exitUsage {
		t.Errorf("no argument: exit %d", code)
	}
	if code := run([]string{"print", filepath.Join(t.TempDir(), "missing.otf2")}, &out, &errb); code != exitFailed {
		t.Errorf("missing file: exit %d", code)
	}
}
