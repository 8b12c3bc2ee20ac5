package otf2

import (
	"testing"

	"kairos/internal/testenv"
	"kairos/trace/tracetest"
)

// TestLocationsShareFiles: a replay reads every location's event file at
// once, through a bounded number of open files.
func TestLocationsShareFiles(t *testing.T) {
	src, err := Open(testenv.Shared(t, "traces/otf2/tracer-stencil4d-64"))
	if err != nil {
		t.Fatal(err)
	}
	if n := tracetest.Interleaved(t, src, 3); n == 0 {
		t.Error("no events")
	}
}
