package trace

import "testing"

func TestMPIName(t *testing.T) {
	for _, c := range []struct {
		k    Kind
		want string
	}{
		{Allreduce, "MPI_Allreduce"},
		{SendRecv, "MPI_Sendrecv"},
		{ReduceScatter, "MPI_Reduce_scatter"},
		{WinFence, "MPI_Win_fence"},
		{FileRead, "MPI_File_read"},
		{CommSize, "MPI_Comm_size"},
		{Compute, ""},
		{Location, ""},
		{Deferred, ""},
		{KindInvalid, ""},
	} {
		if got := c.k.MPIName(); got != c.want {
			t.Errorf("%v.MPIName() = %q, want %q", c.k, got, c.want)
		}
	}
}
