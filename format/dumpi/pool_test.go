package dumpi

import (
	"testing"

	"kairos/internal/testenv"
	"kairos/trace/tracetest"
)

// TestRanksShareFiles: a replay reads every rank's .bin file at once,
// through a bounded number of open files.
func TestRanksShareFiles(t *testing.T) {
	src, err := Open(testenv.Shared(t, "traces/dumpi/sst-macro-testbgp"))
	if err != nil {
		t.Fatal(err)
	}
	if n := tracetest.Interleaved(t, src, 2); n == 0 {
		t.Error("no events")
	}
}
