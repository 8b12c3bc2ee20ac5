package format_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
	_ "kairos/format/ktr"
	_ "kairos/format/otf2"
	_ "kairos/format/ti"
	"kairos/trace"
)

func TestDetectAndOutput(t *testing.T) {
	dir := t.TempDir()
	tr := trace.New(2, trace.NewMeta())
	for r := range tr.Ranks {
		for _, k := range []trace.Kind{trace.Init, trace.Barrier, trace.Finalize} {
			e := trace.NewEvent(k)
			tr.Ranks[r].Append(&e)
		}
	}
	for _, tc := range []struct{ out, want string }{
		{"a.ti", "ti"}, {"a.ti.gz", "ti"}, {"a.ti.zst", "ti"}, {"a.ktr", "ktr"},
		{"run/index.txt", "ti"}, // the per-rank layout, as the tracer writes it
	} {
		path := filepath.Join(dir, tc.out)
		f, err := format.ForOutput(path, "")
		if err != nil || f.Name != tc.want {
			t.Fatalf("ForOutput(%s) = %q, %v; want %s", tc.out, f.Name, err, tc.want)
		}
		if err := f.Write(path, tr); err != nil {
			t.Fatal(err)
		}
		src, got, err := format.Open(path)
		if err != nil || got.Name != tc.want {
			t.Fatalf("Open(%s) detected %q, %v; want %s", tc.out, got.Name, err, tc.want)
		}
		if back, err := trace.Load(src); err != nil || back.NumEvents() != 6 {
			t.Errorf("%s: read back %v events, %v", tc.out, back, err)
		}
	}
}

func TestUnknownInputs(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "notes.txt")
	os.WriteFile(junk, []byte("hello\n"), 0o644)
	if _, _, err := format.Open(junk); !errors.Is(err, format.ErrUnknownFormat) || !strings.Contains(err.Error(), junk) {
		t.Errorf("junk: got %v", err)
	}
	if _, err := format.ForOutput(filepath.Join(dir, "x.unknown"), ""); err == nil {
		t.Error("ForOutput of an unknown extension succeeded")
	}
	if _, err := format.ForOutput("x", "nosuch"); err == nil {
		t.Error("ForOutput of an unknown format name succeeded")
	}
	if _, _, err := format.Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("Open of a missing file succeeded")
	}
	// A directory that holds a trace, without being one, names it.
	tr := trace.New(1, trace.NewMeta())
	e := trace.NewEvent(trace.Init)
	tr.Ranks[0].Append(&e)
	inside := filepath.Join(dir, "app.ktr")
	if f, _ := format.ByName("ktr"); f.Write(inside, tr) != nil {
		t.Fatal("cannot write the trace")
	}
	_, _, err := format.Open(dir)
	if !errors.Is(err, format.ErrUnknownFormat) || !strings.Contains(err.Error(), inside+" (ktr)") || strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("directory holding a trace: got %v", err)
	}
}

// TestTraceDirectory opens the directory kairos tracer writes (index.txt
// and the ranks' files) as its trace, and refuses one that holds traces
// of two formats, naming one file of each.
func TestTraceDirectory(t *testing.T) {
	run := filepath.Join(t.TempDir(), "kairos-trace")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	tr := trace.New(2, trace.NewMeta())
	for r := range tr.Ranks {
		for _, k := range []trace.Kind{trace.Init, trace.Barrier, trace.Finalize} {
			e := trace.NewEvent(k)
			tr.Ranks[r].Append(&e)
		}
	}
	ti, _ := format.ByName("ti")
	if err := ti.Write(filepath.Join(run, "index.txt"), tr); err != nil {
		t.Fatal(err)
	}
	src, f, err := format.Open(run)
	if err != nil || f.Name != "ti" {
		t.Fatalf("Open(%s) = %q, %v; want ti", run, f.Name, err)
	}
	if back, err := trace.Load(src); err != nil || len(back.Ranks) != 2 || back.NumEvents() != 6 {
		t.Fatalf("read back %v, %v; want 2 ranks, 6 events", back, err)
	}
	os.WriteFile(filepath.Join(run, "traces.otf2"), []byte("not read"), 0o644)
	_, _, err = format.Open(run)
	if err == nil || !strings.Contains(err.Error(), "(otf2, ti)") && !strings.Contains(err.Error(), "(ti, otf2)") ||
		!strings.Contains(err.Error(), filepath.Join(run, "index.txt")+" (ti)") || strings.Contains(err.Error(), "rank-0") {
		t.Errorf("a directory with TI and OTF2: got %v", err)
	}
}
