package tracertest

import "testing"

// TestLostShutdownRace: the output of the CI run that lost Open MPI's
// shutdown race is told from a rank that exited without finalizing (its
// PID known) and from a clean run.
func TestLostShutdownRace(t *testing.T) {
	for _, c := range []struct {
		out  string
		want bool
	}{
		{"residual 1353.73\nmpirun has exited due to process rank 3 with PID 0 on\nnode vm exiting improperly. There are three reasons", true},
		{"mpirun has exited due to process rank 1 with PID 4242 on\nnode vm exiting improperly. There are three reasons", false},
		{"residual 1353.73\n", false},
	} {
		if got := LostShutdownRace([]byte(c.out)); got != c.want {
			t.Errorf("LostShutdownRace(%q) = %v, want %v", c.out, got, c.want)
		}
	}
}
