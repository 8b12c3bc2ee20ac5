package sim

import "kairos/trace"

// Open MPI's decision rules, as SimGrid 3.32's "ompi" collective selector
// copies them (smpi_openmpi_selector.cpp, Open MPI 4.1's tuned decision
// tables). Each picks an algorithm from the communicator's size and the
// message size; the numbers are Open MPI's algorithm indices into a list
// of SimGrid algorithm names.

// sizeRule picks algorithm alg for message sizes below below.
type sizeRule struct {
	below int64
	alg   int
}

// commRule holds the size rules of communicators smaller than below (0:
// any larger one; exactlyTwo: 2 members), and the algorithm for sizes
// beyond them.
type commRule struct {
	below int32
	sizes []sizeRule
	last  int
}

// decision is one collective's rules and the algorithms they index (from
// 1, as Open MPI numbers them).
type decision struct {
	algos []string
	rules []commRule
}

// pick returns the algorithm for n members and size bytes.
func (d *decision) pick(n int32, size int64) string {
	for _, r := range d.rules {
		if r.below == exactlyTwo && n != 2 || r.below > 0 && n >= r.below {
			continue
		}
		for _, s := range r.sizes {
			if size < s.below {
				return d.algos[s.alg-1]
			}
		}
		return d.algos[r.last-1]
	}
	return d.algos[0] // not reached: every table ends with below 0
}

// only is a communicator rule that ignores the message size.
func only(below int32, alg int) commRule { return commRule{below: below, last: alg} }

// exactlyTwo marks a rule for communicators of exactly 2 members (Open
// MPI's "communicator_size == 2").
const exactlyTwo = -2

var ompiAllreduce = decision{
	// Open MPI's basic_linear and nonoverlapping are both reduce+bcast in
	// SimGrid; MPI_OP_NULL, the replay's operation, counts as commutative.
	algos: []string{"redbcast", "redbcast", "rdb", "lr", "ompi_ring_segmented", "rab_rdb"},
	rules: []commRule{
		{4, []sizeRule{{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}}, 6},
		{8, []sizeRule{{16, 4}, {8192, 3}}, 6},
		{16, []sizeRule{{8192, 3}}, 6},
		{32, []sizeRule{{64, 5}, {4096, 3}}, 6},
		{64, []sizeRule{{128, 5}}, 6},
		{128, []sizeRule{{262144, 3}}, 6},
		{256, []sizeRule{{131072, 2}, {262144, 3}}, 6},
		{512, []sizeRule{{4096, 2}}, 6},
		{2048, []sizeRule{{2048, 2}, {16384, 3}}, 6},
		{4096, []sizeRule{{2048, 2}, {4096, 5}, {16384, 3}}, 6},
		{0, []sizeRule{{2048, 2}, {16384, 5}, {32768, 3}}, 6},
	},
}

var ompiAlltoall = decision{
	// Open MPI's linear, linear_sync and two_proc are all SimGrid's
	// basic_linear.
	algos: []string{"basic_linear", "pair", "bruck", "basic_linear", "basic_linear"},
	rules: []commRule{
		{exactlyTwo, []sizeRule{{2, 2}, {4, 5}, {16, 2}, {64, 5}, {256, 2}, {4096, 5}, {32768, 2}, {262144, 4}, {1048576, 5}}, 2},
		{8, []sizeRule{{8192, 4}, {16384, 1}, {65536, 4}, {524288, 1}, {1048576, 2}}, 1},
		{16, []sizeRule{{262144, 4}}, 1},
		{32, []sizeRule{{4, 4}, {512, 3}, {8192, 4}, {32768, 1}, {262144, 4}, {524288, 1}}, 4},
		{64, []sizeRule{{512, 3}, {524288, 1}}, 4},
		{128, []sizeRule{{1024, 3}, {2048, 1}, {4096, 4}, {262144, 1}}, 2},
		{256, []sizeRule{{1024, 3}, {2048, 4}, {262144, 1}}, 2},
		{512, []sizeRule{{1024, 3}, {8192, 4}, {32768, 1}}, 2},
		{1024, []sizeRule{{512, 3}, {8192, 4}, {16384, 1}, {131072, 4}, {262144, 1}}, 2},
		{2048, []sizeRule{{512, 3}, {1024, 4}, {2048, 1}, {16384, 4}, {262144, 1}}, 4},
		{4096, []sizeRule{{1024, 3}, {4096, 4}, {8192, 1}, {131072, 4}}, 1},
		{0, []sizeRule{{2048, 3}, {8192, 4}, {16384, 1}, {32768, 4}, {65536, 1}}, 4},
	},
}

var ompiAlltoallv = decision{
	algos: []string{"ompi_basic_linear", "pair"},
	rules: []commRule{only(4, 2), only(64, 1), only(128, 2), only(256, 1), only(1024, 2), only(0, 1)},
}

var ompiBarrier = decision{
	// Open MPI's linear and double_ring are both SimGrid's
	// ompi_basic_linear.
	algos: []string{"ompi_basic_linear", "ompi_basic_linear", "ompi_recursivedoubling", "ompi_bruck", "ompi_two_procs", "ompi_tree"},
	rules: []commRule{only(4, 3), only(8, 1), only(64, 3), only(256, 4), only(512, 6), only(1024, 4), only(4096, 6), only(0, 4)},
}

var ompiBcast = decision{
	algos: []string{"NTSL", "ompi_pipeline", "ompi_pipeline", "ompi_split_bintree", "NTSB", "binomial_tree",
		"mvapich2_knomial_intra_node", "scatter_rdb_allgather", "scatter_LR_allgather"},
	rules: []commRule{
		{4, []sizeRule{{32, 3}, {256, 5}, {512, 3}, {1024, 7}, {32768, 1}, {131072, 5}, {262144, 2}, {524288, 1}, {1048576, 6}}, 5},
		{8, []sizeRule{{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}}, 2},
		{16, []sizeRule{{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}}, 1},
		{32, []sizeRule{{4096, 7}, {1048576, 6}}, 8},
		{64, []sizeRule{{2048, 6}}, 7},
		only(128, 7),
		{256, []sizeRule{{2, 6}, {16384, 5}, {32768, 1}, {65536, 5}}, 7},
		{1024, []sizeRule{{16384, 7}, {32768, 4}}, 7},
		{2048, []sizeRule{{524288, 7}}, 8},
		{4096, []sizeRule{{262144, 7}}, 8},
		{0, []sizeRule{{8192, 7}, {16384, 5}, {262144, 7}}, 8},
	},
}

var ompiReduce = decision{
	algos: []string{"ompi_basic_linear", "ompi_chain", "ompi_pipeline", "ompi_binary", "ompi_binomial",
		"ompi_in_order_binary", "ompi_basic_linear"},
	rules: []commRule{
		{4, []sizeRule{{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}}, 3},
		{8, []sizeRule{{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}}, 1},
		{16, []sizeRule{{8192, 4}}, 5},
		{32, []sizeRule{{4096, 4}}, 5},
		only(256, 5),
		{512, []sizeRule{{8192, 5}, {16384, 6}}, 5},
		only(2048, 5),
		{4096, []sizeRule{{512, 5}, {1024, 6}, {8192, 5}, {16384, 6}}, 5},
		{0, []sizeRule{{16, 5}, {32, 6}, {1024, 5}, {2048, 6}, {8192, 5}, {16384, 6}}, 5},
	},
}

var ompiReduceScatter = decision{
	algos: []string{"default", "ompi_basic_recursivehalving", "ompi_ring", "ompi_butterfly"},
	rules: []commRule{
		{4, []sizeRule{{65536, 3}, {131072, 4}}, 3},
		{8, []sizeRule{{8, 1}, {262144, 2}}, 3},
		{32, []sizeRule{{262144, 2}}, 3},
		{64, []sizeRule{{64, 1}, {2048, 2}, {524288, 4}}, 3},
		{128, []sizeRule{{256, 1}, {512, 2}, {2048, 4}, {4096, 2}}, 4},
		{256, []sizeRule{{256, 1}, {512, 2}}, 4},
		{512, []sizeRule{{256, 1}, {1024, 2}}, 4},
		{1024, []sizeRule{{512, 1}, {2048, 2}, {8192, 4}, {16384, 2}}, 4},
		{2048, []sizeRule{{512, 1}, {4096, 2}, {16384, 4}, {32768, 2}}, 4},
		{4096, []sizeRule{{512, 1}, {4096, 2}}, 4},
		{0, []sizeRule{{1024, 1}, {8192, 2}}, 4},
	},
}

var ompiAllgather = decision{
	algos: []string{"NTSLR_NB", "bruck", "rdb", "ring", "ompi_neighborexchange", "pair"},
	rules: []commRule{
		only(exactlyTwo, 6),
		only(32, 3),
		{64, []sizeRule{{1024, 3}, {65536, 5}}, 4},
		{128, []sizeRule{{512, 3}, {65536, 5}}, 4},
		{256, []sizeRule{{512, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4},
		{512, []sizeRule{{32, 3}, {128, 2}, {1024, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4},
		{1024, []sizeRule{{64, 3}, {256, 2}, {2048, 3}}, 5},
		{2048, []sizeRule{{4, 3}, {8, 2}, {16, 3}, {32, 2}, {256, 3}, {512, 2}, {4096, 3}}, 5},
		{4096, []sizeRule{{32, 2}, {128, 3}, {512, 2}, {4096, 3}}, 5},
		{0, []sizeRule{{2, 3}, {8, 2}, {16, 3}, {512, 2}, {4096, 3}}, 5},
	},
}

var ompiAllgatherv = decision{
	algos: []string{"GB", "ompi_bruck", "mpich_ring", "ompi_neighborexchange", "pair"},
	rules: []commRule{
		{exactlyTwo, []sizeRule{{2048, 3}, {4096, 5}, {8192, 3}}, 5},
		{8, []sizeRule{{256, 1}, {4096, 4}, {8192, 3}, {16384, 4}, {262144, 2}}, 4},
		{16, []sizeRule{{1024, 1}}, 2},
		{32, []sizeRule{{128, 1}, {262144, 2}}, 3},
		{64, []sizeRule{{256, 1}, {8192, 2}}, 3},
		{128, []sizeRule{{256, 1}, {4096, 2}}, 3},
		{256, []sizeRule{{1024, 2}, {65536, 4}}, 3},
		{512, []sizeRule{{1024, 2}}, 3},
		{1024, []sizeRule{{512, 2}, {1024, 1}, {4096, 2}, {1048576, 4}}, 3},
		{0, []sizeRule{{4096, 2}}, 4},
	},
}

var ompiGather = decision{
	algos: []string{"ompi_basic_linear", "ompi_binomial", "ompi_linear_sync"},
	rules: []commRule{
		{4, []sizeRule{{2, 3}, {4, 1}, {32768, 2}, {65536, 1}, {131072, 2}}, 3},
		{8, []sizeRule{{1024, 2}, {8192, 1}, {32768, 2}, {262144, 1}}, 3},
		only(256, 2),
		{512, []sizeRule{{2048, 2}, {8192, 1}}, 2},
		only(0, 2),
	},
}

var ompiScatter = decision{
	algos: []string{"ompi_basic_linear", "ompi_binomial", "ompi_linear_nb"},
	rules: []commRule{
		{4, []sizeRule{{2, 3}, {131072, 1}, {262144, 3}}, 1},
		{8, []sizeRule{{2048, 2}, {4096, 1}, {8192, 2}, {32768, 1}, {1048576, 3}}, 1},
		{16, []sizeRule{{16384, 2}, {1048576, 3}}, 1},
		{32, []sizeRule{{16384, 2}, {32768, 1}}, 3},
		{64, []sizeRule{{512, 2}, {8192, 3}, {16384, 2}}, 3},
		{0, []sizeRule{{512, 2}}, 3},
	},
}

// ompiAlgorithm is the algorithm SimGrid's "ompi" selector runs for
// collective k as member c sees it. The sizes are those Open MPI decides
// on: the whole message of a broadcast or reduction, one block of an
// all-to-all or all-gather, the mean block of an allgatherv, the sum of a
// reduce_scatter's blocks, and for gather and scatter the block of the
// member's own side (so members may choose differently, as in SimGrid).
func ompiAlgorithm(k trace.Kind, c *collCall) string {
	e := c.e
	switch k {
	case trace.Allreduce:
		return ompiAllreduce.pick(c.n, collBytes(c))
	case trace.Alltoall:
		return ompiAlltoall.pick(c.n, e.SendBytes)
	case trace.Alltoallv:
		return ompiAlltoallv.pick(c.n, 0)
	case trace.Barrier:
		return ompiBarrier.pick(c.n, 0)
	case trace.Bcast:
		return ompiBcast.pick(c.n, collBytes(c))
	case trace.Reduce:
		return ompiReduce.pick(c.n, collBytes(c))
	case trace.ReduceScatter:
		return ompiReduceScatter.pick(c.n, sumCounts(e.RecvCounts, 0, c.n))
	case trace.Allgather:
		return ompiAllgather.pick(c.n, e.SendBytes)
	case trace.Allgatherv:
		// Open MPI counts the receive counts in send-datatype bytes.
		total := int64(0)
		for _, x := range e.RecvCounts {
			if c.rsize > 0 {
				x = x / c.rsize * c.ssize
			}
			total += x
		}
		return ompiAllgatherv.pick(c.n, total/int64(c.n))
	case trace.Gather:
		if c.me == c.root {
			return ompiGather.pick(c.n, e.RecvBytes)
		}
		return ompiGather.pick(c.n, e.SendBytes)
	case trace.Scatter:
		if c.me == c.root {
			return ompiScatter.pick(c.n, e.SendBytes)
		}
		return ompiScatter.pick(c.n, e.RecvBytes)
	}
	return ""
}
