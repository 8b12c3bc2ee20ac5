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
// OTF2 archive.
func TestTracerCorners(t *testing.T) {
	dir := t.TempDir()
	lib := tracertest.OpenMPI.Tracer(t, dir, true)
	prog := tracertest.OpenMPI.Compile(t, dir, tracertest.Testdata("corners.c"))
	for _, c := range []struct {
		name string
		np   int
		want map[int][]string // rank: lines its calls must contain, in order
	}{
		// A message that ends inside an element of the receive's type
		// (4 bytes into a double) was a receive of MPI_UNDEFINED (-32766)
		// times 8 bytes, and the archive failed to read.
		{"partial", 2, map[int][]string{1: {
			"recv 0 -1 5 0 4 [] []", "recv 0 -1 5 0 4 [] []", "recv 0 -1 5 0 4 [] []",
		}}},
		// Receives pending on communicators freed before they complete
		// (one from MPI_ANY_SOURCE on a communicator of reversed ranks):
		// the tracer asked MPI about the freed handles at the wait, and
		// Open MPI crashed.
		{"freecomm", 2, map[int][]string{1: {
			"irecv 0 -1 3 0 4 [] []", "irecv 0 -1 4 0 4 [] []", "barrier -1 -1 0 0 0 [] []",
		}}},
		// A head-to-head exchange of buffered sends above SimGrid's
		// detached-send threshold: written as sends, each waited for
		// its receive in a replay, and the check found a deadlock. Now
		// isends, waited for at MPI_Buffer_detach or MPI_Finalize (a
		// wait in TI, the archive's completion read as a waitall).
		{"bsend", 2, map[int][]string{0: {
			"isend 1 -1 7 100000 0 [] []", "recv 1 -1 7 0 100000 [] []",
			"isend 1 -1 8 100000 0 [] []", "recv 1 -1 8 0 100000 [] []",
		}}},
		// Collectives on an intercommunicator (left out of both traces):
		// their vectors, of the remote group's size, and their root,
		// MPI_ROOT or a remote rank, were read as an intracommunicator's,
		// and the tracer crashed.
		{"intercoll", 3, map[int][]string{1: {"barrier -1 -1 0 0 0 [] []"}}},
		// A receive freed before it completes: the archive had its
		// request alone, read as never started, and the check found its
		// message never received. Now both traces complete it in
		// MPI_Finalize.
		{"freerecv", 2, map[int][]string{1: {"irecv 0 -1 11 0 4 [] []", "barrier -1 -1 0 0 0 [] []"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := tracertest.Recording{Lib: lib, Trace: filepath.Join(dir, c.name), Format: "ti,otf2", NP: c.np, Dir: dir}
			tracertest.OpenMPI.Launch(t, r, prog, c.name)
			ti, archive := filepath.Join(r.Trace, "index.txt"), filepath.Join(r.Trace, "traces.otf2")
			checks(t, ti, archive)
			for _, path := range []string{ti, archive} {
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
