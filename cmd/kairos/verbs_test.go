package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format/ti"
	"kairos/internal/testenv"
	"kairos/trace"
)

// TestVerbAlone: a run that names its verb builds that verb alone
// (newRoot), so each verb's registered name must be its command's, and
// the verb must read the same flags and print the same help alone as in
// the whole tree.
func TestVerbAlone(t *testing.T) {
	whole := newRoot()
	if got := len(whole.Commands()); got != len(verbs) {
		t.Fatalf("the whole tree has %d verbs, %d registered", got, len(verbs))
	}
	for _, v := range verbs {
		alone := newRoot(v.name, "--help")
		if n := len(alone.Commands()); n != 1 || alone.Commands()[0].Name() != v.name {
			t.Errorf("newRoot(%q): %d verbs, want %q alone (registered under a name that is not its command's?)", v.name, n, v.name)
			continue
		}
		in, _, err := whole.Find([]string{v.name})
		if err != nil {
			t.Fatal(err)
		}
		if a, w := alone.Commands()[0].UsageString(), in.UsageString(); a != w {
			t.Errorf("%s alone: usage\n%s\nwant, as in the whole tree:\n%s", v.name, a, w)
		}
	}
	for _, args := range [][]string{{}, {"help", "simulate"}, {"--version"}, {"simulat"}} {
		if n := len(newRoot(args...).Commands()); n != len(verbs) {
			t.Errorf("newRoot(%q): %d verbs, want every one", args, n)
		}
	}
	// An unknown verb still gets cobra's suggestion, which needs them all.
	code, _, errb := csRun("simulat")
	if code != exitUsage || !strings.Contains(errb, "simulate") {
		t.Errorf("kairos simulat: exit %d, %q; want a usage error suggesting simulate", code, errb)
	}
}

// TestNotesOnce: a reader's note is said once in a run, however many
// times the verb opens the trace (slow --summary opens it twice).
func TestNotesOnce(t *testing.T) {
	var b strings.Builder
	notesTo, said = &b, map[string]bool{}
	defer func() { notesTo = io.Discard }()
	tr := trace.New(1, trace.NewMeta())
	tr.Meta().Attrs["partial"] = "ranks 1 to 3 have no file"
	sayNotes("t.ktr", tr)
	sayNotes("t.ktr", tr)
	sayNotes("u.ktr", tr)
	if want := "note: t.ktr: ranks 1 to 3 have no file\nnote: u.ktr: ranks 1 to 3 have no file\n"; b.String() != want {
		t.Errorf("notes:\n%s\nwant\n%s", b.String(), want)
	}
}

// TestNotesInJSON: stats --json and simulate --json carry the reader's
// notes, which a script reading them does not see on standard error
// (TraceR's archive switches the measurement off once a rank).
func TestNotesInJSON(t *testing.T) {
	tr := testenv.Shared(t, "traces/otf2/tracer-stencil4d-32/traces.otf2")
	for _, args := range [][]string{{"stats", "--json", tr}, {"simulate", "--json", "--cluster", "32x1Gf,125MBps,50us", tr}} {
		code, out, errs := csRun(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var got struct {
			Notes []string `json:"reader_notes"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if len(got.Notes) != 1 || !strings.HasPrefix(got.Notes[0], "the measurement was switched off and on again 32 times on 32 ranks") {
			t.Errorf("%v: notes %q", args, got.Notes)
		}
	}
}

// TestThreadsNotedTI: a TI trace of Kairos' tracer whose rank 0 file ends
// with the tracer's comment line on calls of other threads it did not
// record (MPI_THREAD_MULTIPLE) gets the note from every verb, as the OTF2
// archive does (the TI trace's unmatched messages came without a word of
// why); SimGrid's replay skips the line as any '#' line.
func TestThreadsNotedTI(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"index.txt": "rank-0.ti\nrank-1.ti\n",
		"rank-0.ti": "0 init\n0 send 1 0 8\n0 compute 1000\n0 finalize\n" + ti.OtherThreadsComment + "7\n",
		"rank-1.ti": "1 init\n1 recv 0 0 8\n1 finalize\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	index := filepath.Join(dir, "index.txt")
	want := "the tracer did not record 7 MPI calls of threads other than the one that initialized MPI (MPI_THREAD_MULTIPLE)"
	for _, args := range [][]string{{"stats", index}, {"check", index}, {"simulate", "--cluster", "2x1Gf,1GBps,1us", index},
		{"reduce", index}, {"report", "-o", filepath.Join(dir, "r.html"), index}, {"convert", index, filepath.Join(dir, "c.ktr")}} {
		code, _, errs := csRun(args...)
		if code != 0 || !strings.Contains(errs, "note: "+index+": "+want) {
			t.Errorf("kairos %s: exit %d, standard error lacks the note %q:\n%s", args[0], code, want, errs)
		}
	}
}
