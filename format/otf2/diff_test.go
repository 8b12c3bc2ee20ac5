package otf2

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"kairos/check"
	"kairos/internal/testenv"
	"kairos/trace"
)

// programs are the test programs built with libotf2, by source file: their
// path, or the error building them.
var (
	programsMu sync.Mutex
	programs   = map[string]*cProgram{}
	writerDir  string
)

type cProgram struct {
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if writerDir != "" {
		os.RemoveAll(writerDir)
	}
	os.Exit(code)
}

// otf2Writer builds testdata/otf2writer.c against Debian's libotf2 once
// per test binary and returns the program's path.
func otf2Writer(t testing.TB) string { return buildWithOTF2(t, "otf2writer.c") }

// buildWithOTF2 builds testdata/src against Debian's libotf2 once per
// test binary and returns the program's path.
func buildWithOTF2(t testing.TB, src string) string {
	t.Helper()
	cc := testenv.Tool(t, "cc", "gcc")
	testenv.Tool(t, "otf2-config", "libotf2-trace-dev")
	programsMu.Lock()
	defer programsMu.Unlock()
	p := programs[src]
	if p == nil {
		p = &cProgram{}
		programs[src] = p
		if writerDir == "" {
			writerDir, p.err = os.MkdirTemp("", "kairos-otf2")
		}
		if p.err == nil {
			p.path = filepath.Join(writerDir, strings.TrimSuffix(src, ".c"))
			out, err := exec.Command(cc, "-O2", "-Wno-deprecated-declarations", "-o", p.path, filepath.Join("testdata", src), "-lotf2").CombinedOutput()
			if err != nil {
				p.err = fmt.Errorf("%v\n%s", err, out)
			}
		}
	}
	if p.err != nil {
		t.Fatalf("building testdata/%s with libotf2 (Debian libotf2-trace-dev): %v", src, p.err)
	}
	return p.path
}

// writeArchive runs the writer with args into a new directory.
func writeArchive(t testing.TB, args ...string) string {
	t.Helper()
	w := otf2Writer(t)
	dir := filepath.Join(t.TempDir(), "archive")
	if out, err := exec.Command(w, append([]string{dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("otf2writer %v: %v\n%s", args, err, out)
	}
	return dir
}

// otf2PrintEvents runs otf2-print -A and returns its event lines.
func otf2PrintEvents(t *testing.T, anchor string) []string {
	t.Helper()
	p := testenv.Tool(t, "otf2-print", "otf2-tools")
	out, err := exec.Command(p, "-A", anchor).Output()
	if err != nil {
		t.Fatalf("otf2-print -A %s: %v", anchor, err)
	}
	lines, err := ReadPrintOutput(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestDifferential writes an archive with libotf2 (records over 255
// bytes, several chunks per location, attribute lists, undefined fields,
// drifting clock offsets, dense and sparse mapping tables, equal
// timestamps on different locations) and compares every event line with
// otf2-print's; then reads it into the model and checks it.
func TestDifferential(t *testing.T) {
	dir := writeArchive(t, "features")
	want := otf2PrintEvents(t, filepath.Join(dir, "traces.otf2"))
	got, counts := ourEvents(t, dir)
	if len(want) < 300000 {
		t.Fatalf("otf2-print printed only %d event lines", len(want))
	}
	for i := 0; i < max(len(got), len(want)); i++ {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			g, w := "", ""
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			t.Fatalf("line %d:\n got %q\nwant %q", i, g, w)
		}
	}
	for _, c := range []string{"PROGRAM_BEGIN", "METRIC", "MEASUREMENT_ON_OFF", "PARAMETER_INT64", "MPI_COLLECTIVE_END",
		"OMP_FORK", "OMP_JOIN", "OMP_ACQUIRE_LOCK", "OMP_TASK_SWITCH", "THREAD_FORK", "THREAD_JOIN", "THREAD_TEAM_BEGIN",
		"THREAD_ACQUIRE_LOCK", "THREAD_TASK_CREATE", "THREAD_TASK_COMPLETE", "THREAD_CREATE", "THREAD_END",
		"NON_BLOCKING_COLLECTIVE_REQUEST", "NON_BLOCKING_COLLECTIVE_COMPLETE", "RMA_WIN_CREATE", "RMA_COLLECTIVE_END",
		"RMA_GROUP_SYNC", "RMA_TRY_LOCK", "RMA_RELEASE_LOCK", "RMA_SYNC", "RMA_PUT", "RMA_ATOMIC", "RMA_OP_COMPLETE_REMOTE",
		"IO_CREATE_HANDLE", "IO_DUPLICATE_HANDLE", "IO_SEEK", "IO_CHANGE_FLAGS", "IO_DELETE_FILE", "IO_OPERATION_BEGIN",
		"IO_OPERATION_COMPLETE", "IO_OPERATION_CANCELLED", "IO_TRY_LOCK", "IO_DESTROY_HANDLE",
		"CALLING_CONTEXT_ENTER", "CALLING_CONTEXT_SAMPLE", "CALLING_CONTEXT_LEAVE"} {
		if counts[c] == 0 {
			t.Errorf("no %s events", c)
		}
	}
	for loc := uint64(0); loc < 3; loc++ {
		st, err := os.Stat(filepath.Join(dir, "traces", strconv.FormatUint(loc, 10)+".evt"))
		if err != nil || st.Size() < 3*256<<10 {
			t.Errorf("location %d: event file too small to span chunks (%v)", loc, err)
		}
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Each rank switches the measurement off for a microsecond: a note
	// says so (the calls meanwhile are missing).
	if got, want := s.Meta().Attrs[AttrSwitchedOff], "the measurement was switched off and on again 3 times on 3 ranks"; !strings.HasPrefix(got, want) {
		t.Errorf("note %q, want it to begin %q", got, want)
	}
	kinds := map[trace.Kind]int{}
	if err := trace.ForEach(s, func(_, _ int, e *trace.Event) error { kinds[e.Kind]++; return nil }); err != nil {
		t.Fatal(err)
	}
	// Per rank: 12000 Isend, Irecv and Waitall, 120 allreduce and 12
	// iallreduce (an allreduce at its wait, the MPI_Iallreduce call a
	// deferred event), 12 sendrecv; ranks 0 and 2 also 120 bcast on their
	// sub-communicator.
	wantKinds := map[trace.Kind]int{trace.Isend: 36000, trace.Irecv: 36000, trace.Waitall: 36000,
		trace.Allreduce: 396, trace.Deferred: 36, trace.SendRecv: 36, trace.Bcast: 240}
	for k, n := range wantKinds {
		if kinds[k] != n {
			t.Errorf("%d %s events, want %d (all: %v)", kinds[k], k, n, kinds)
		}
	}
	rep, err := check.Check(s, check.Options{Protocol: check.SimGrid, EagerLimit: check.DefaultEagerLimit})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Warnings > 0 {
		t.Errorf("check: %d errors, %d warnings: %v", rep.Errors, rep.Warnings, rep.Problems)
	}
}
