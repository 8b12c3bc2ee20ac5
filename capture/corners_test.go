package capture_test

import (
	"path/filepath"
	"strings"
	"testing"

	"kairos/internal/tracertest"
)

// TestTracerCorners traces the cases of capture/testdata/corners.c, corners
// of MPI that MPICH's test suite reaches, each on its own run writing both
// formats: both traces must pass the check, and each rank's calls must
// contain the lines the case lists (the calls helper's text, kind, partner,
// source, tag, bytes sent and received), in both the TI trace and the
// OTF2 archive; where the case counts its messages, both traces have
// that many, of those bytes, and replay.
func TestTracerCorners(t *testing.T) {
	dir := t.TempDir()
	lib := tracertest.OpenMPI.Tracer(t, dir, true)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("corners.c"))
	for _, c := range []struct {
		name string
		np   int
		want map[int][]string // rank: lines its calls must contain, in order
		msgs int              // messages (sends and isends) of both traces, if not 0
		size int64            // their bytes
	}{
		// A message that ends inside an element of the receive's type
		// (4 bytes into a double) was a receive of MPI_UNDEFINED (-32766)
		// times 8 bytes, and the archive failed to read.
		{"partial", 2, map[int][]string{1: {
			"recv 0 -1 5 0 4 [] []", "recv 0 -1 5 0 4 [] []", "irecv 0 -1 5 0 4 [] []",
		}}, 0, 0},
		// Receives pending on communicators freed before they complete
		// (one from MPI_ANY_SOURCE on a communicator of reversed ranks):
		// the tracer asked MPI about the freed handles at the wait, and
		// Open MPI crashed.
		{"freecomm", 2, map[int][]string{1: {
			"irecv 0 -1 3 0 4 [] []", "irecv 0 -1 4 0 4 [] []", "barrier -1 -1 0 0 0 [] []",
		}}, 0, 0},
		// A head-to-head exchange of buffered sends above SimGrid's
		// detached-send threshold: written as sends, each waited for
		// its receive in a replay, and the check found a deadlock. Now
		// isends, waited for at MPI_Buffer_detach or MPI_Finalize (a
		// wait in TI, the archive's completion read as a waitall).
		{"bsend", 2, map[int][]string{0: {
			"isend 1 -1 7 100000 0 [] []", "recv 1 -1 7 0 100000 [] []",
			"isend 1 -1 8 100000 0 [] []", "recv 1 -1 8 0 100000 [] []",
		}}, 0, 0},
		// Collectives on an intercommunicator (left out of both traces):
		// their vectors, of the remote group's size, and their root,
		// MPI_ROOT or a remote rank, were read as an intracommunicator's,
		// and the tracer crashed.
		{"intercoll", 3, map[int][]string{1: {"barrier -1 -1 0 0 0 [] []"}}, 0, 0},
		// A receive freed before it completes: the archive had its
		// request alone, read as never started, and the check found its
		// message never received. Now both traces complete it in
		// MPI_Finalize.
		{"freerecv", 2, map[int][]string{1: {"irecv 0 -1 11 0 4 [] []", "barrier -1 -1 0 0 0 [] []"}}, 0, 0},
		// A receive posted between a matched probe (MPI_Mprobe,
		// MPI_Improbe) and its MPI_Mrecv or MPI_Imrecv gets the next
		// message: the probe took its own out of MPI's matching. Written
		// at the MPI_Mrecv, the probed receive came after the other, which
		// took the probed message in the replay: a truncation in both
		// traces (MPICH's pt2pt/mprobe). Now the probe is written as the
		// irecv of its message, completed where the message is received.
		// A probe of MPI_PROC_NULL writes nothing.
		{"mprobe", 2, map[int][]string{1: {
			"irecv 0 -1 12 0 8 [] []", "recv 0 -1 12 0 16 [] []", "irecv 0 -1 12 0 24 [] []", "irecv 0 -1 12 0 32 [] []",
		}}, 4, 80},
		// An intercommunicator and its duplicate carry messages of one
		// pair and tag at once: the archive wrote both on MPI_COMM_WORLD,
		// one communicator there, and its check found a deadlock (MPICH's
		// comm/dupic; the TI trace, which knows no communicator, passes).
		// Now each intercommunicator is a communicator of its own.
		{"dupic", 4, map[int][]string{0: {"irecv 1 -1 3 0 4 [] []", "irecv 1 -1 3 0 4 [] []"}}, 8, 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, c.name), Format: "ti,otf2", NP: c.np, Dir: dir}
			tracertest.OpenMPI.Launch(t, r, prog, c.name)
			ti, archive := filepath.Join(r.Trace, "index.txt"), filepath.Join(r.Trace, "traces.otf2")
			checks(t, ti, archive)
			for _, path := range []string{ti, archive} {
				if c.msgs > 0 {
					if n, b := messages(t, path); n != c.msgs || b != c.size {
						t.Errorf("%s: %d messages of %d bytes, want %d of %d", path, n, b, c.msgs, c.size)
					}
					simulate(t, path, path == archive)
				}
				got := calls(t, path)
				for rank, want := range c.want {
					if !contains(got[rank], want) {
						t.Errorf("%s: rank %d's calls\n%s\ndo not contain, in order,\n%s", path, rank,
							strings.Join(got[rank], "\n"), strings.Join(want, "\n"))
					}
				}
			}
		})
	}
}

// contains reports whether want is a subsequence of got.
func contains(got, want []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}
