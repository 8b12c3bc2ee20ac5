package capture_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/internal/tracertest"
)

// TestTracerBigCounts traces capture/testdata/bigcount.c on one rank: a
// broadcast of one element of 2 GiB and 8 bytes, and receives of 6 bytes
// into MPI_INTs (not a whole number of them). The trace has the
// broadcast's 2147483656 bytes and the receives' 6, in both formats, and
// passes the check. MPI_Type_size and MPI_Get_count give MPI_UNDEFINED
// there, and the tracer wrote -32766 and -131064 bytes (MPICH's
// io/bigtype: an MPI_File_write_at_all of -32766 bytes, which every verb
// refused to read).
func TestTracerBigCounts(t *testing.T) {
	dir := t.TempDir()
	lib := tracertest.OpenMPI.Tracer(t, dir, true)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("bigcount.c"))
	r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "trace"), Format: "ti,otf2", NP: 1, Dir: dir}
	tracertest.OpenMPI.Launch(t, r, prog)
	ti, err := os.ReadFile(filepath.Join(dir, "trace", "rank-0.ti"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0 bcast 2147483656 0\n", "0 irecv 0 1 6\n", "0 recv 0 3 6\n"} {
		if !strings.Contains(string(ti), want) {
			t.Errorf("the TI trace lacks %q:\n%s", want, ti)
		}
	}
	index, archive := filepath.Join(dir, "trace", "index.txt"), filepath.Join(dir, "trace", "traces.otf2")
	checks(t, index, archive)
	want := map[string]bool{"bcast 0 -1 0 2147483656 2147483656 [] []": false, "sendRecv 0 0 1 6 6 [] []": false, "recv 0 -1 3 0 6 [] []": false}
	for _, c := range calls(t, archive)[0] {
		if _, ok := want[c]; ok {
			want[c] = true
		}
	}
	for c, seen := range want {
		if !seen {
			t.Errorf("the archive lacks %q:\n%s", c, strings.Join(calls(t, archive)[0], "\n"))
		}
	}
}

// TestTracerNullType traces capture/testdata/nulltype.c on two ranks of
// MPICH, which takes messages of 0 elements of MPI_DATATYPE_NULL: the
// program ends as it does untraced, and its receives are messages of 0
// bytes in both traces, which pass the check. The tracer asked
// MPI_Get_count for the received count of MPI_DATATYPE_NULL, an error
// that aborted the program (MPICH's part/nonblocking_pready).
func TestTracerNullType(t *testing.T) {
	m := tracertest.MPICH
	m.Need(t)
	tracertest.NeedOTF2(t)
	dir := t.TempDir()
	lib := m.Tracer(t, dir, true)
	prog := m.Compile(t, dir, tracertest.Testdata("nulltype.c"))
	r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "trace"), Format: "ti,otf2", NP: 2, Dir: dir}
	if out := m.Launch(t, r, prog); !strings.Contains(out, "done") {
		t.Fatalf("the program did not end:\n%s", out)
	}
	ti, err := os.ReadFile(filepath.Join(dir, "trace", "rank-1.ti"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 recv 0 5 0\n", "1 irecv 0 6 0\n", "1 isend 0 7 0\n1 irecv 0 7 0\n"} {
		if !strings.Contains(string(ti), want) {
			t.Errorf("rank 1's TI trace lacks %q:\n%s", want, ti)
		}
	}
	checks(t, filepath.Join(dir, "trace", "index.txt"), filepath.Join(dir, "trace", "traces.otf2"))
}
