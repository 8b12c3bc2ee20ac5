package capture_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kairos/internal/testenv"
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
	dir, out := recordMPICH(t, "nulltype.c", 2)
	if !strings.Contains(out, "done") {
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

// TestTracerIsendrecv traces capture/testdata/isendrecv.c on three ranks
// of MPICH (Open MPI 4.1 has no MPI_Isendrecv): MPI_Isendrecv and
// MPI_Isendrecv_replace, met by plain sends and receives, completed by
// MPI_Wait, MPI_Waitall and MPI_Test, and with MPI_PROC_NULL on one side.
// Each is its isend and its irecv, completed where its request completes,
// in both traces: both pass the check and replay, with the program's 10
// messages and 2,160 bytes, and the tracer leaves nothing out. They were
// left out and counted, and rank 1's receive and send met nothing: the
// check found them unmatched and the replay deadlocked.
func TestTracerIsendrecv(t *testing.T) {
	dir, out := recordMPICH(t, "isendrecv.c", 3)
	if strings.Contains(out, "leaves out") {
		t.Errorf("the tracer leaves calls out:\n%s", out)
	}
	ti, err := os.ReadFile(filepath.Join(dir, "trace", "rank-0.ti"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0 isend 1 1 800\n0 irecv 1 2 800\n"; !strings.Contains(string(ti), want) {
		t.Errorf("rank 0's TI trace lacks %q:\n%s", want, ti)
	}
	index, archive := filepath.Join(dir, "trace", "index.txt"), filepath.Join(dir, "trace", "traces.otf2")
	checks(t, index, archive)
	for _, path := range []string{index, archive} {
		if msgs, bytes := messages(t, path); msgs != 10 || bytes != 2160 {
			t.Errorf("%s: %d messages of %d bytes, want 10 of 2160", path, msgs, bytes)
		}
		simulate(t, path, path == archive)
	}
}

// messages counts the messages of a trace (its sends, isends and
// sendrecvs' sends) and their bytes.
func messages(t *testing.T, path string) (msgs int, bytes int64) {
	t.Helper()
	for _, rank := range calls(t, path) {
		for _, c := range rank {
			var kind string
			var partner, source, tag int
			var sent int64
			if _, err := fmt.Sscanf(c, "%s %d %d %d %d", &kind, &partner, &source, &tag, &sent); err == nil && (kind == "send" || kind == "isend" || kind == "sendRecv") {
				msgs++
				bytes += sent
			}
		}
	}
	return msgs, bytes
}

// TestTracerPersistent traces capture/testdata/persist.c on three ranks of
// MPICH (Open MPI 4.1 has no MPI-4 persistent collectives nor partitioned
// calls): persistent collectives started by MPI_Start and MPI_Startall are
// the non-blocking collectives they are, written where their requests
// complete, in the order of their init calls, which MPI matches them in,
// on a rank that starts them in another (MPICH's coll/p_order) too
// (3 allreduces, 2 bcasts and 2 gathervs a rank, and a barrier
// on a duplicate of MPI_COMM_WORLD, in both traces; the allreduce on a
// sub-communicator in the archive alone, its init counted in the
// summary), and a partitioned send and receive (4 partitions of 8 ints,
// started twice) the isends and irecvs of their whole buffers, with tag 5
// + 2^30 (MPI matches partitioned calls apart), completed by the MPI_Wait
// and MPI_Test that complete them: 2 messages of 128 bytes. Both traces
// pass the check and replay. They were counted and left out ("MPI_Start
// of persistent requests not recorded").
func TestTracerPersistent(t *testing.T) {
	dir, out := recordMPICH(t, "persist.c", 3)
	if !strings.Contains(out, "persist 5 0") {
		t.Fatalf("the program did not end as it does untraced:\n%s", out)
	}
	if strings.Contains(out, "MPI_Start of persistent requests not recorded") || !regexp.MustCompile(` 2 +[0-9.]+ +[0-9.]+%  MPI_Allreduce_init on sub-communicators`).MatchString(out) {
		t.Errorf("the tracer's summary, want the 2 MPI_Allreduce_init on a sub-communicator alone left out:\n%s", out)
	}
	index, archive := filepath.Join(dir, "trace", "index.txt"), filepath.Join(dir, "trace", "traces.otf2")
	ti, err := os.ReadFile(filepath.Join(dir, "trace", "rank-0.ti"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0 isend 2 1073741829 128\n"; !strings.Contains(string(ti), want) {
		t.Errorf("rank 0's TI trace lacks %q:\n%s", want, ti)
	}
	checks(t, index, archive)
	for _, path := range []string{index, archive} {
		for r, cs := range calls(t, path) {
			kinds := map[string]int{}
			for _, c := range cs {
				kinds[strings.Fields(c)[0]]++
			}
			want := map[string]int{"allreduce": 3, "bcast": 2, "gatherv": 2, "barrier": 1}
			if path == archive && r < 2 {
				want["allreduce"] = 4
			}
			for k, n := range want {
				if kinds[k] != n {
					t.Errorf("%s: rank %d has %d %ss, want %d", path, r, kinds[k], k, n)
				}
			}
		}
		if msgs, bytes := messages(t, path); msgs != 2 || bytes != 256 {
			t.Errorf("%s: %d messages of %d bytes, want 2 of 256", path, msgs, bytes)
		}
		simulate(t, path, path == archive)
	}
}

// recordMPICH compiles capture/testdata's program prog with MPICH and
// records np ranks of it in both formats into dir/trace, returning dir
// and the run's output.
func recordMPICH(t *testing.T, prog string, np int) (dir, out string) {
	t.Helper()
	m := tracertest.MPICH
	m.Need(t)
	tracertest.NeedOTF2(t)
	dir = t.TempDir()
	lib := m.Tracer(t, dir, true)
	bin := m.Compile(t, dir, tracertest.Testdata(prog))
	r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "trace"), Format: "ti,otf2", NP: np, Dir: dir}
	return dir, m.Launch(t, r, bin)
}

// TestTracerFortranStatusError traces capture/testdata/statuserr.f90 on
// two ranks of MPICH: its MPI_Mprobe, MPI_Mrecv, MPI_Recv and MPI_Wait
// leave the MPI_ERROR field of their Fortran statuses as the program set
// it, as they do untraced ("marks kept"). The tracer's Fortran wrappers
// gave the C call a status of their own and copied all of it back, its
// MPI_ERROR undefined (MPICH's f77/pt2pt/mprobef failed 24 checks).
func TestTracerFortranStatusError(t *testing.T) {
	m := tracertest.MPICH
	m.Need(t)
	mpif90 := testenv.Tool(t, m.FC, m.Package)
	dir := t.TempDir()
	lib := m.Tracer(t, dir, false)
	run(t, dir, nil, mpif90, "-O1", "-o", "statuserr", tracertest.Testdata("statuserr.f90"))
	r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, "trace"), NP: 2, Dir: dir}
	if out := m.Launch(t, r, "./statuserr"); !strings.Contains(out, "marks kept") {
		t.Errorf("the statuses' MPI_ERROR changed under the tracer:\n%s", out)
	}
	checks(t, filepath.Join(dir, "trace", "index.txt"))
}
