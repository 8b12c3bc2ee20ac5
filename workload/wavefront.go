package workload

func init() {
	register(&generator{
		name:    "sweep",
		summary: "Sweep3D-like wavefronts: pipelined blocking recv/compute/send sweeps from the 4 corners of a 2-D grid",
		extra:   []string{ParamGrid, ParamBlocks, ParamAllreduceEvery, ParamAllreduceBytes, ParamDelay},
		defaults: Params{Ranks: 16, Grid: []int{4, 4}, Iterations: 10, Bytes: 4096, Flops: 1e8, Seed: 1,
			Blocks: 10, AllreduceEvery: 1, AllreduceBytes: 8},
		dims:  2,
		build: buildSweep,
	})
	register(&generator{
		name:    "lu",
		summary: "NPB LU-like SSOR: pipelined lower and upper triangular wavefronts per k-plane, halo exchange, allreduce",
		extra:   []string{ParamGrid, ParamPlanes, ParamAllreduceEvery, ParamAllreduceBytes, ParamDelay},
		defaults: Params{Ranks: 16, Grid: []int{4, 4}, Iterations: 50, Bytes: 640, Flops: 1e8, Seed: 1,
			Planes: 32, AllreduceEvery: 10, AllreduceBytes: 40},
		dims:  2,
		build: buildLU,
	})
}

// buildSweep is the communication skeleton of Sweep3D, the ASCI discrete
// ordinates neutron transport kernel (KBA wavefront algorithm). The 3-D
// domain is decomposed over a 2-D process grid in x and y. Each iteration
// sweeps the 8 octants of angles: from each of the 4 corners of the process
// grid, once towards +z and once towards -z. A sweep is pipelined over
// Blocks blocks of k-planes: for each block a rank receives the incoming
// angular fluxes from its upstream neighbours in x and in y with blocking
// receives, computes the block, and sends its outgoing fluxes downstream in
// x and in y with blocking sends. A rank on the upstream edge starts the
// wavefront. Every AllreduceEvery iterations the ranks reduce the flux
// error to test convergence (Sweep3D's global max). Each message has Bytes
// bytes; Flops is shared equally by the 8 x Blocks blocks.
func buildSweep(p *Params, s sites) (program, error) {
	c := cart{dims: p.Grid}
	var (
		recv   = s.at("main>inner>sweep>rcv_real", "MPI_Recv", 212)
		work   = s.at("main>inner>sweep>source_flux", "compute", 240)
		send   = s.at("main>inner>sweep>snd_real", "MPI_Send", 288)
		reduce = s.at("main>inner>global_real_max", "MPI_Allreduce", 77)
	)
	flops := p.Flops / float64(8*p.Blocks)
	// The directions a sweep travels in x and y from each corner.
	corners := [4][2]int{{+1, +1}, {-1, +1}, {+1, -1}, {-1, -1}}
	open := func(r int) stepper {
		var flows [4]wave
		for i, d := range corners {
			flows[i] = wave{
				up:   [2]int{c.neighbour(r, 0, -d[0]), c.neighbour(r, 1, -d[1])},
				down: [2]int{c.neighbour(r, 0, d[0]), c.neighbour(r, 1, d[1])},
				tag:  [2]int{travel(0, d[0]), travel(1, d[1])},
				recv: recv, work: work, send: send,
			}
		}
		// Each iteration: 8 octants x Blocks blocks, then the allreduce.
		blocks := 8 * p.Blocks
		return loops2(p.Iterations, blocks+1, func(e *emitter, it, j int) {
			e.iteration(it)
			switch {
			case j < blocks:
				// Octants 2c and 2c+1 (towards +z and -z) start from
				// corner c.
				flows[j/p.Blocks/2].stage(e, flops, p.Bytes)
			case p.every(it):
				e.allreduce(reduce, p.AllreduceBytes)
			}
		})
	}
	return program{ranks: p.Ranks, open: open}, nil
}

// wave is a rank's place in a pipelined wavefront: its upstream and
// downstream neighbours along two axes (-1 where there is none), the tags
// of the messages along each, and the call sites of its calls.
type wave struct {
	up, down         [2]int
	tag              [2]int
	recv, work, send site
}

// stage emits one stage of the wavefront: blocking receives from the
// upstream neighbours, the computation, blocking sends downstream.
func (w *wave) stage(e *emitter, flops float64, bytes int64) {
	for i, from := range w.up {
		if from >= 0 {
			e.recv(w.recv, from, w.tag[i], bytes)
		}
	}
	e.compute(w.work, flops)
	for i, to := range w.down {
		if to >= 0 {
			e.send(w.send, to, w.tag[i], bytes)
		}
	}
}

// travel returns the direction index (and tag) of a message moving along
// axis in direction dir (+1 or -1).
func travel(axis, dir int) int {
	if dir > 0 {
		return 2*axis + 1
	}
	return 2 * axis
}

// buildLU is the communication skeleton of the NAS Parallel Benchmarks' LU
// (SSOR solver of a 3-D Navier-Stokes system) on a 2-D process grid. Each
// iteration:
//
//   - the lower triangular solve runs for k = 2 .. Planes-1: the rank
//     receives the updated boundary of plane k from its north (-y) and west
//     (-x) neighbours with blocking receives (exchange_1), computes jacld
//     and blts, and sends its own boundary to its south (+y) and east (+x)
//     neighbours with blocking sends. The planes pipeline a wavefront from
//     the (0,0) corner;
//   - the upper triangular solve runs back for k = Planes-1 .. 2, receiving
//     from south and east and sending north and west (jacu, buts);
//   - the rank updates the solution, then recomputes the right-hand side
//     (rhs), whose halo exchange (exchange_3) posts a non-blocking receive,
//     sends with a blocking send and waits, along y in both directions and
//     then along x; its messages are 2 x (Planes-2) times the Bytes of a
//     wavefront message;
//   - every AllreduceEvery iterations, and after the last one, the rank
//     computes the residual norms (l2norm: an allreduce of AllreduceBytes).
//
// Before the first iteration the right-hand side and its norm are computed
// once. Flops per iteration are split 40% / 40% / 20% between the lower
// solve, the upper solve and the update with rhs.
func buildLU(p *Params, s sites) (program, error) {
	c := cart{dims: p.Grid}
	var (
		lrecv  = s.at("main>ssor>exchange_1", "MPI_Recv", 61)
		lsend  = s.at("main>ssor>exchange_1", "MPI_Send", 98)
		lower  = s.at("main>ssor>blts", "compute", 40)
		upper  = s.at("main>ssor>buts", "compute", 40)
		update = s.at("main>ssor", "compute", 180)
		hrecv  = s.at("main>ssor>rhs>exchange_3", "MPI_Irecv", 52)
		hsend  = s.at("main>ssor>rhs>exchange_3", "MPI_Send", 66)
		hwait  = s.at("main>ssor>rhs>exchange_3", "MPI_Wait", 71)
		rhs    = s.at("main>ssor>rhs", "compute", 120)
		norm   = s.at("main>ssor>l2norm", "MPI_Allreduce", 57)
	)
	planes := p.Planes - 2
	plane := 0.4 * p.Flops / float64(planes)
	halo := 2 * int64(planes) * p.Bytes
	open := func(r int) stepper {
		west, east := c.neighbour(r, 0, -1), c.neighbour(r, 0, +1)
		north, south := c.neighbour(r, 1, -1), c.neighbour(r, 1, +1)
		// Tags: the direction the message travels in.
		lowerWave := wave{up: [2]int{north, west}, down: [2]int{south, east},
			tag: [2]int{travel(1, +1), travel(0, +1)}, recv: lrecv, work: lower, send: lsend}
		upperWave := wave{up: [2]int{south, east}, down: [2]int{north, west},
			tag: [2]int{travel(1, -1), travel(0, -1)}, recv: lrecv, work: upper, send: lsend}
		exchange3 := func(e *emitter) {
			// Along y, then along x, each way in turn: receive from one
			// side what the neighbour on the other side sends.
			for _, axis := range [2]int{1, 0} {
				for _, dir := range [2]int{+1, -1} {
					from, to := c.neighbour(r, axis, -dir), c.neighbour(r, axis, dir)
					tag := 10 + travel(axis, dir)
					var rq request
					if from >= 0 {
						rq = e.irecv(hrecv, from, tag, halo)
					}
					if to >= 0 {
						e.send(hsend, to, tag, halo)
					}
					if from >= 0 {
						e.wait(hwait, rq)
					}
				}
			}
		}
		rhsAndNorm := func(e *emitter, withNorm bool) {
			exchange3(e)
			e.compute(rhs, 0.1*p.Flops)
			if withNorm {
				e.allreduce(norm, p.AllreduceBytes)
			}
		}
		// Before the iterations, rhs and its norm; then each iteration
		// as 2 x planes steps (the lower and upper solves) and the update.
		return seq(
			steps(1, func(e *emitter, _ int) { rhsAndNorm(e, true) }),
			loops2(p.Iterations, 2*planes+1, func(e *emitter, it, j int) {
				e.iteration(it)
				switch {
				case j < planes:
					lowerWave.stage(e, plane, p.Bytes)
				case j < 2*planes:
					upperWave.stage(e, plane, p.Bytes)
				default:
					e.compute(update, 0.1*p.Flops)
					rhsAndNorm(e, p.every(it) || it == p.Iterations-1)
				}
			}),
		)
	}
	return program{ranks: p.Ranks, open: open}, nil
}
