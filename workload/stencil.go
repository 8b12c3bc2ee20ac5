package workload

func init() {
	register(&generator{
		name:    "stencil2d",
		summary: "5-point stencil on a 2-D process grid: compute, 4 irecv, 4 isend, waitall; periodic or not",
		extra:   []string{ParamGrid, ParamPeriodic, ParamAllreduceEvery, ParamAllreduceBytes, ParamDelay},
		defaults: Params{Ranks: 64, Grid: []int{8, 8}, Iterations: 1000, Bytes: 8192, Flops: 1e7,
			Seed: 1, Periodic: true, AllreduceEvery: 10, AllreduceBytes: 8},
		dims:  2,
		build: buildStencil,
	})
	register(&generator{
		name:    "stencil3d",
		summary: "7-point stencil on a 3-D process grid: compute, 6 irecv, 6 isend, waitall; periodic or not",
		extra:   []string{ParamGrid, ParamPeriodic, ParamAllreduceEvery, ParamAllreduceBytes, ParamDelay},
		defaults: Params{Ranks: 64, Grid: []int{4, 4, 4}, Iterations: 100, Bytes: 32768, Flops: 1e8,
			Seed: 1, Periodic: true, AllreduceEvery: 10, AllreduceBytes: 8},
		dims:  3,
		build: buildStencil,
	})
}

// buildStencil is the halo-exchange time step of explicit finite-difference
// codes (a Jacobi or heat-equation solver on a block-decomposed domain):
// each iteration a rank updates its block, posts a non-blocking receive
// from each face neighbour, sends its faces with non-blocking sends and
// waits for all of them; every AllreduceEvery iterations it reduces the
// residual over all ranks to test convergence.
//
// Messages are tagged by the direction they travel in (0 = -x, 1 = +x,
// 2 = -y, ...), so that matching is unambiguous even when both neighbours
// along an axis are the same rank. Along an axis of extent 1 there is no
// exchange. A 2-D 8x8 periodic run of 1000 iterations with an allreduce
// every 10 has 64 x (2 + 1000 x 10 + 100) = 646,528 events.
func buildStencil(p *Params, s sites) (program, error) {
	c := cart{dims: p.Grid, periodic: p.Periodic}
	var (
		work   = s.at("main>timestep>compute_interior", "compute", 41)
		irecv  = s.at("main>timestep>exchange_halo", "MPI_Irecv", 63)
		isend  = s.at("main>timestep>exchange_halo", "MPI_Isend", 68)
		wall   = s.at("main>timestep>exchange_halo", "MPI_Waitall", 72)
		reduce = s.at("main>timestep>check_convergence", "MPI_Allreduce", 85)
	)
	open := func(r int) stepper {
		nb := make([]int, 2*len(c.dims)) // neighbour in travel direction k
		for k := range nb {
			nb[k] = c.neighbour(r, k/2, 2*(k%2)-1)
		}
		return steps(p.Iterations, func(e *emitter, it int) {
			e.iteration(it)
			e.compute(work, p.Flops)
			for k, peer := range nb {
				if peer >= 0 {
					e.irecv(irecv, peer, k^1, p.Bytes)
				}
			}
			for k, peer := range nb {
				if peer >= 0 {
					e.isend(isend, peer, k, p.Bytes)
				}
			}
			e.waitall(wall)
			if p.every(it) {
				e.allreduce(reduce, p.AllreduceBytes)
			}
		})
	}
	return program{ranks: p.Ranks, open: open}, nil
}
