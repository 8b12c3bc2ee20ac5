package dumpi

import (
	"path/filepath"
	"strconv"
	"testing"

	"kairos/check"
	"kairos/internal/testenv"
	"kairos/trace"
)

// TestSamplesCheck reads every DUMPI sample and checks it: every message
// matched, every request completed, every collective entered by all
// members of its communicator (testbgp's run on a Comm_create'd
// communicator), under the static check and every replay protocol. The
// samples have no known defects. The counts are the samples' own: per
// rank, testbgp has 227 calls with 84 Isend, 84 Irecv, 3 Barrier,
// 7 Alltoall and 1 Comm_create; testtrace 9 calls with one Isend/Recv
// pair in a ring, a Barrier and an Allreduce; the Taufer-lab all-to-all
// 41 calls with 12 Isend, 12 Irecv and 4 Barrier.
func TestSamplesCheck(t *testing.T) {
	cases := []struct {
		name                                    string
		events, messages, collectives, requests int64
	}{
		{"sst-macro-testbgp", 7 * 227, 7 * 84, 3 + 7 + 1, 7 * 168},
		{"sst-macro-testtrace", 4 * 9, 4, 2, 4},
		{"sst-macro-unit-test", 2, 0, 0, 0},
		{"tauferlab-naive-alltoall-4", 4 * 41, 4 * 12, 4, 4 * 24},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src, err := Open(testenv.Shared(t, "traces/dumpi/"+c.name))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []check.Protocol{check.None, check.Eager, check.Rendezvous, check.SimGrid} {
				rep, err := check.Check(src, check.Options{Protocol: p})
				if err != nil {
					t.Fatal(err)
				}
				if !rep.OK() || len(rep.Problems) != 0 || rep.Deadlock {
					t.Errorf("%s: %v", p, rep.Problems)
				}
				if rep.Events != c.events || rep.Messages != c.messages || rep.Collectives != c.collectives || rep.Requests != c.requests {
					t.Errorf("%s: events %d messages %d collectives %d requests %d, want %d %d %d %d", p,
						rep.Events, rep.Messages, rep.Collectives, rep.Requests, c.events, c.messages, c.collectives, c.requests)
				}
			}
		})
	}
}

// TestSamplesRankAlone opens each multi-rank sample's files one at a
// time, as a rank's file sent alone: the trace has the sample's ranks
// (its MPI_COMM_WORLD, from the file's calls), the file's rank holds all
// its events (testbgp's Comm_create'd communicator known without the
// others' files), the other ranks none, and the trace says which ranks
// have no file.
func TestSamplesRankAlone(t *testing.T) {
	for _, c := range []struct {
		name          string
		ranks, events int
	}{
		{"sst-macro-testbgp", 7, 227},
		{"sst-macro-testtrace", 4, 9},
		{"tauferlab-naive-alltoall-4", 4, 41},
	} {
		files, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "traces/dumpi/"+c.name), "*.bin"))
		for _, f := range files {
			src, err := Open(f)
			if err != nil {
				t.Fatal(err)
			}
			_, digits, _ := binName(f)
			r, _ := strconv.Atoi(digits)
			tr, err := trace.Load(src)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if tr.NumRanks() != c.ranks || tr.Ranks[r].Len() != c.events || tr.Meta().Attrs["partial"] == "" {
				t.Errorf("%s: %d ranks, rank %d has %d events (partial %q); want %d ranks, %d events", f, tr.NumRanks(), r, tr.Ranks[r].Len(),
					tr.Meta().Attrs["partial"], c.ranks, c.events)
			}
			for q := range tr.Ranks {
				if q != r && tr.Ranks[q].Len() != 0 {
					t.Errorf("%s: rank %d without a file has %d events", f, q, tr.Ranks[q].Len())
				}
			}
		}
	}
}

// TestBinName: the rank files' names, <prefix>-NNNN.bin with four digits
// or more, split at the last dash.
func TestBinName(t *testing.T) {
	for _, c := range []struct {
		path, prefix, rank string
		ok                 bool
	}{
		{"dumpi-2024.01.02-0003.bin", "dumpi-2024.01.02", "0003", true},
		{"/a-b/run-12345.bin", "/a-b/run", "12345", true},
		{"-0000.bin", "", "0000", true},
		{"run-123.bin", "", "", false},
		{"run-12a4.bin", "", "", false},
		{"run-1234.bin.gz", "", "", false},
		{"run0001.bin", "", "", false},
		{"run-0001-x.bin", "", "", false},
	} {
		prefix, rank, ok := binName(c.path)
		if ok != c.ok || ok && (prefix != c.prefix || rank != c.rank) {
			t.Errorf("binName(%q) = %q, %q, %v; want %q, %q, %v", c.path, prefix, rank, ok, c.prefix, c.rank, c.ok)
		}
	}
}
