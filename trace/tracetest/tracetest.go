// Package tracetest holds what the tests of several trace readers share.
package tracetest

import (
	"reflect"
	"testing"

	"kairos/internal/fileio"
	"kairos/trace"
)

// Interleaved reads every rank of src with all the ranks' readers open at
// once, one event of each rank in turn, as a replay does, under a pool of
// at most maxOpen open files, and checks that the events are those read
// one rank after another and that no more than maxOpen files were ever
// open. It returns the number of events read.
func Interleaved(t testing.TB, src trace.Source, maxOpen int) int {
	t.Helper()
	want, err := trace.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	old := fileio.SetMaxOpen(maxOpen)
	defer fileio.SetMaxOpen(old)
	n := src.NumRanks()
	rds := make([]trace.Reader, n)
	wants := make([]*trace.RankReader, n)
	for r := range rds {
		if rds[r], err = src.OpenRank(r); err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
		defer rds[r].Close()
		wants[r] = want.Ranks[r].Reader()
	}
	events := 0
	for live := n; live > 0; {
		live = 0
		for r, rd := range rds {
			if rd == nil {
				continue
			}
			ok := rd.Next()
			if ok != wants[r].Next() {
				t.Fatalf("rank %d: after %d events, Next is %v, read alone %v (%v)", r, events, ok, !ok, rd.Err())
			}
			if open := fileio.NumOpen(); open > maxOpen {
				t.Fatalf("rank %d: %d files open, the bound is %d", r, open, maxOpen)
			}
			if !ok {
				if err := rd.Err(); err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
				rds[r] = nil
				continue
			}
			live++
			events++
			if got, w := rd.Event(), wants[r].Event(); !reflect.DeepEqual(got, w) {
				t.Fatalf("rank %d: event %+v, read alone %+v", r, got, w)
			}
		}
	}
	return events
}
