package main

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

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
