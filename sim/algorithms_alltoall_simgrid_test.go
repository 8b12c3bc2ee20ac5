package sim_test

import (
	"testing"

	"kairos/internal/testenv"
)

// TestAlltoallDatatypesMatchSimGrid runs alltoall rdb, 2dmesh and 3dmesh,
// which count what they receive in one datatype and what they send in
// the other, with SimGrid: a send datatype smaller than the receive one
// (MPI_BYTE sent, MPI_DOUBLE received), a larger one (refused where
// their receives truncate, and SimGrid aborts), empty and 64 KiB blocks,
// on sizes with and without mesh splits and powers of two.
func TestAlltoallDatatypesMatchSimGrid(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "smpirun", "libsimgrid-dev")
	dir, plat, hostfile := smallCluster(t, 8, "")
	var sw sweep
	for _, algo := range []string{"rdb", "2dmesh", "3dmesh"} {
		for _, n := range []int{2, 3, 8, 9} {
			for _, act := range []string{"alltoall 800 100 6 0", "alltoall 100 800 0 6", "alltoall 0 0", "alltoall 8192 8192"} {
				if sw.next() {
					differsFromSimGrid(t, dir, plat, hostfile, n, act, "smpi/alltoall:"+algo)
				}
			}
		}
	}
}
