package otf2

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kairos/internal/testenv"
)

// samples are the OTF2 traces of ../shared/traces/otf2 with the per-type
// event counts the shared README lists (from otf2-print).
var samples = []struct {
	name   string
	counts map[string]int
}{
	{"tiny_mpi", map[string]int{"ENTER": 10, "LEAVE": 10, "MPI_SEND": 1, "MPI_RECV": 1, "MPI_ISEND": 1,
		"MPI_ISEND_COMPLETE": 1, "MPI_IRECV_REQUEST": 1, "MPI_IRECV": 1, "MPI_COLLECTIVE_BEGIN": 2, "MPI_COLLECTIVE_END": 2}},
	{"pipit-ping-pong-otf2", map[string]int{"ENTER": 42, "LEAVE": 42, "MPI_SEND": 16, "MPI_RECV": 16, "PROGRAM_BEGIN": 2, "PROGRAM_END": 2}},
	{"pipit-ping-pong-otf2-papi", map[string]int{"ENTER": 42, "LEAVE": 42, "MPI_SEND": 16, "MPI_RECV": 16, "PROGRAM_BEGIN": 2, "PROGRAM_END": 2, "METRIC": 84}},
	{"sst-macro-mpi-coverage", map[string]int{"ENTER": 7010, "LEAVE": 7010, "MPI_ISEND": 1440, "MPI_ISEND_COMPLETE": 1440,
		"MPI_IRECV_REQUEST": 1440, "MPI_IRECV": 1440, "MPI_COLLECTIVE_BEGIN": 1200, "MPI_COLLECTIVE_END": 1200}},
	{"tracer-stencil4d-32", map[string]int{"ENTER": 1251, "LEAVE": 1249, "MPI_SEND": 512, "MPI_IRECV_REQUEST": 512, "MPI_IRECV": 512,
		"MPI_COLLECTIVE_BEGIN": 96, "MPI_COLLECTIVE_END": 96, "MEASUREMENT_ON_OFF": 96}},
	{"tracer-stencil4d-64", map[string]int{"ENTER": 2499, "LEAVE": 2497, "MPI_SEND": 1024, "MPI_IRECV_REQUEST": 1024, "MPI_IRECV": 1024,
		"MPI_COLLECTIVE_BEGIN": 192, "MPI_COLLECTIVE_END": 192, "MEASUREMENT_ON_OFF": 192}},
	{"fastotf2-mi300-hip", map[string]int{"METRIC": 72584, "ENTER": 40, "LEAVE": 40, "PARAMETER_UINT64": 4, "PROGRAM_BEGIN": 1, "PROGRAM_END": 1}},
}

// oracleEvents returns the event lines of a gzipped otf2-print -A output.
func oracleEvents(t *testing.T, path string) []string {
	t.Helper()
	lines, err := ReadPrintOutputFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// ourEvents renders every event of the archive at dir in global order.
func ourEvents(t *testing.T, dir string) ([]string, map[string]int) {
	t.Helper()
	a, err := OpenArchive(dir)
	if err != nil {
		t.Fatal(err)
	}
	a.KeepAttrs = true
	m, err := a.Merged()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	counts := map[string]int{}
	var lines []string
	var buf []byte
	for m.Next() {
		e := m.Event()
		counts[e.Name()]++
		buf = a.AppendText(buf[:0], e)
		lines = append(lines, strings.Split(strings.TrimSuffix(string(buf), "\n"), "\n")...)
	}
	if err := m.Err(); err != nil {
		t.Fatal(err)
	}
	return lines, counts
}

// TestOracle compares every event line with otf2-print -A's: the whole
// line (record name, location, clock-corrected timestamp, fields with
// names resolved, attribute lists), in global order.
func TestOracle(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			dir := testenv.Shared(t, filepath.Join("traces/otf2", s.name))
			want := oracleEvents(t, testenv.Shared(t, filepath.Join("traces/oracles/otf2", s.name+".otf2-print-A.txt.gz")))
			got, counts := ourEvents(t, dir)
			for k, v := range s.counts {
				if counts[k] != v {
					t.Errorf("%s: %d events, README says %d", k, counts[k], v)
				}
			}
			if len(counts) != len(s.counts) {
				t.Errorf("event types %v, README lists %v", counts, s.counts)
			}
			bad := 0
			for i := 0; i < max(len(got), len(want)) && bad < 5; i++ {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Errorf("line %d:\n got %q\nwant %q", i, g, w)
					bad++
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d lines, otf2-print has %d", len(got), len(want))
			}
		})
	}
}

// TestOracleWindows reads the samples again through windows of a few
// bytes that slide along each chunk (records cut at every place, some
// longer than the window), and compares with otf2-print -A's lines.
func TestOracleWindows(t *testing.T) {
	budget, least := windowBudget, minWindow
	t.Cleanup(func() { windowBudget, minWindow = budget, least })
	for _, s := range samples {
		dir := testenv.Shared(t, filepath.Join("traces/otf2", s.name))
		want := oracleEvents(t, testenv.Shared(t, filepath.Join("traces/oracles/otf2", s.name+".otf2-print-A.txt.gz")))
		for _, w := range []int64{16, 33, 250, 4096} {
			t.Run(fmt.Sprintf("%s/%d", s.name, w), func(t *testing.T) {
				windowBudget, minWindow = 0, w
				got, _ := ourEvents(t, dir)
				if !slices.Equal(got, want) {
					t.Errorf("%d lines differ from otf2-print's %d", len(got), len(want))
				}
			})
		}
	}
}
