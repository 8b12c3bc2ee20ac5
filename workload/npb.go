package workload

import (
	"fmt"
	"math"

	"kairos/trace"
)

func init() {
	register(&generator{
		name:    "cg",
		summary: "NPB CG-like conjugate gradient: row-group reduce exchanges, transpose exchange, allreduce of dot products",
		extra:   []string{ParamInner, ParamDelay},
		defaults: Params{Ranks: 16, Iterations: 15, Bytes: 28000, Flops: 5e8, Seed: 1,
			Inner: 25},
		build: buildCG,
	})
	register(&generator{
		name:    "ft",
		summary: "NPB FT-like 3-D FFT: local FFTs and alltoall transposes, checksum reduce each iteration",
		extra:   []string{ParamAllreduceEvery, ParamAllreduceBytes, ParamDelay},
		defaults: Params{Ranks: 16, Iterations: 6, Bytes: 65536, Flops: 1e9, Seed: 1,
			AllreduceBytes: 8},
		build: buildFT,
	})
	register(&generator{
		name:     "is",
		summary:  "NPB IS-like integer sort: bucket-size allreduce, alltoall of counts, alltoallv of keys, key exchange with the next rank",
		extra:    []string{ParamDelay},
		defaults: Params{Ranks: 16, Iterations: 10, Bytes: 1 << 20, Flops: 2e8, Seed: 1},
		build:    buildIS,
	})
	register(&generator{
		name:    "mg",
		summary: "NPB MG-like multigrid V-cycles: halo exchanges on shrinking grids, allreduce of norms",
		extra:   []string{ParamGrid, ParamPeriodic, ParamLevels, ParamAllreduceEvery, ParamAllreduceBytes, ParamDelay},
		defaults: Params{Ranks: 16, Grid: []int{4, 2, 2}, Iterations: 4, Bytes: 32768, Flops: 1e9, Seed: 1,
			Periodic: true, Levels: 5, AllreduceEvery: 1, AllreduceBytes: 8},
		dims:  3,
		build: buildMG,
	})
}

// buildCG is the communication skeleton of the NAS Parallel Benchmarks' CG
// (conjugate gradient on a sparse matrix distributed over a 2-D grid of
// nprows x npcols ranks, npcols = nprows or 2 nprows; the number of ranks
// must be a power of two). Each of the Iterations outer iterations runs
// Inner CG iterations and a residual computation; each of those:
//
//   - multiplies the local block of the matrix by the vector (compute);
//   - sums the partial products across the rank's row of the grid by
//     recursive halving, log2(npcols) steps, each a non-blocking receive, a
//     blocking send and a wait with the partner whose column differs in one
//     bit;
//   - exchanges the result with the transpose partner (the rank at the
//     transposed grid position; a diagonal rank is its own partner and
//     exchanges with itself, as NPB does), again receive, send, wait;
//   - computes the dot products, each finished by an 8-byte allreduce (NPB
//     sums them by the same row exchanges as the product; an allreduce is
//     what most CG codes call), two per CG iteration and one for the
//     residual.
//
// The outer iteration ends with the norm of the new vector (a 16-byte
// allreduce). The exchanges carry Bytes bytes; Flops per outer iteration
// are split 80% over the matrix-vector products, 20% over vector updates.
func buildCG(p *Params, s sites) (program, error) {
	if !isPowerOfTwo(p.Ranks) {
		return program{}, fmt.Errorf("needs a power-of-two number of ranks, not %d", p.Ranks)
	}
	var (
		matvec = s.at("main>conj_grad>sparse_matvec", "compute", 512)
		rrecv  = s.at("main>conj_grad>reduce_row", "MPI_Irecv", 540)
		rsend  = s.at("main>conj_grad>reduce_row", "MPI_Send", 545)
		rwait  = s.at("main>conj_grad>reduce_row", "MPI_Wait", 548)
		rsum   = s.at("main>conj_grad>reduce_row", "compute", 552)
		trecv  = s.at("main>conj_grad>transpose_exchange", "MPI_Irecv", 570)
		tsend  = s.at("main>conj_grad>transpose_exchange", "MPI_Send", 575)
		twait  = s.at("main>conj_grad>transpose_exchange", "MPI_Wait", 578)
		vecop  = s.at("main>conj_grad>update_vectors", "compute", 600)
		dot    = s.at("main>conj_grad>dot_product", "MPI_Allreduce", 620)
		normc  = s.at("main>norm", "compute", 300)
		norm   = s.at("main>norm", "MPI_Allreduce", 305)
	)
	l2 := log2(p.Ranks)
	nprows := 1 << (l2 / 2)
	npcols := p.Ranks / nprows
	l2npcols := log2(npcols)
	matFlops := 0.8 * p.Flops / float64(p.Inner+1)
	vecFlops := 0.2 * p.Flops / float64(2*p.Inner+2)
	open := func(me int) stepper {
		row, col := me/npcols, me%npcols
		exch := cgTranspose(me, nprows, npcols)
		product := func(e *emitter) {
			e.compute(matvec, matFlops)
			for i := 1; i <= l2npcols; i++ {
				partner := row*npcols + (col ^ npcols>>i)
				rq := e.irecv(rrecv, partner, i, p.Bytes)
				e.send(rsend, partner, i, p.Bytes)
				e.wait(rwait, rq)
				e.compute(rsum, float64(p.Bytes/8))
			}
			if l2npcols > 0 {
				rq := e.irecv(trecv, exch, 100, p.Bytes)
				e.send(tsend, exch, 100, p.Bytes)
				e.wait(twait, rq)
			}
		}
		// Each outer iteration: the initial dot product, Inner CG
		// iterations, the residual and norm, one step each.
		return loops2(p.Iterations, p.Inner+2, func(e *emitter, it, j int) {
			e.iteration(it)
			switch j {
			case 0:
				e.compute(vecop, vecFlops)
				e.allreduce(dot, 8) // rho = r.r
			case p.Inner + 1:
				product(e) // the residual ||r - A.z||
				e.allreduce(dot, 8)
				e.compute(normc, vecFlops)
				e.allreduce(norm, 16)
			default:
				product(e)
				e.compute(vecop, vecFlops)
				e.allreduce(dot, 8) // d = p.q
				e.compute(vecop, vecFlops)
				e.allreduce(dot, 8) // rho = r.r
			}
		})
	}
	return program{ranks: p.Ranks, open: open}, nil
}

// cgTranspose returns the transpose partner of rank me in NPB CG's grid.
func cgTranspose(me, nprows, npcols int) int {
	if npcols == nprows {
		return me%nprows*nprows + me/nprows
	}
	h := me / 2
	return 2*(h%nprows*nprows+h/nprows) + me%2
}

// buildFT is the communication skeleton of the NAS Parallel Benchmarks' FT
// (3-D FFT PDE solver) with its 1-D slab layout. The rank broadcasts the
// problem parameters, computes the initial conditions and a forward FFT;
// then each iteration evolves the solution in Fourier space, and computes
// the inverse 3-D FFT: local 1-D FFTs along the two local dimensions, a
// global transpose (an alltoall of Bytes per peer), local FFTs along the
// third; and it reduces a 16-byte complex checksum to rank 0. Every
// AllreduceEvery iterations it also reduces AllreduceBytes over all ranks.
// Flops per iteration are split between evolve (10%), the FFTs (80%) and
// the checksum (10%).
func buildFT(p *Params, s sites) (program, error) {
	var (
		bcast    = s.at("main>setup", "MPI_Bcast", 140)
		initc    = s.at("main>compute_initial_conditions", "compute", 310)
		evolve   = s.at("main>evolve", "compute", 420)
		fftLocal = s.at("main>fft>cffts1", "compute", 600)
		fftPlane = s.at("main>fft>cffts2", "compute", 660)
		fftA2A   = s.at("main>fft>transpose_x_yz>transpose2_global", "MPI_Alltoall", 910)
		fftLast  = s.at("main>fft>cffts3", "compute", 720)
		chkc     = s.at("main>checksum", "compute", 1010)
		chk      = s.at("main>checksum", "MPI_Reduce", 1024)
		reduce   = s.at("main>checksum", "MPI_Allreduce", 1030)
	)
	fft := func(e *emitter) {
		e.compute(fftLocal, 0.3*p.Flops)
		e.compute(fftPlane, 0.3*p.Flops)
		e.collective(trace.Alltoall, fftA2A, p.Bytes, 0)
		e.compute(fftLast, 0.2*p.Flops)
	}
	open := func(r int) stepper {
		return steps(p.Iterations+1, func(e *emitter, it int) {
			if it == 0 {
				e.collective(trace.Bcast, bcast, 12, 0)
				e.compute(initc, 0.5*p.Flops)
				fft(e)
				return
			}
			e.iteration(it - 1)
			e.compute(evolve, 0.1*p.Flops)
			fft(e)
			e.compute(chkc, 0.1*p.Flops)
			e.collective(trace.Reduce, chk, 16, 0)
			if p.every(it - 1) {
				e.allreduce(reduce, p.AllreduceBytes)
			}
		})
	}
	return program{ranks: p.Ranks, open: open}, nil
}

// buildIS is the communication skeleton of the NAS Parallel Benchmarks'
// IS (bucket sort of Bytes/4 integer keys per rank). Each of the
// Iterations rankings: the rank counts its keys per bucket (compute),
// sums the bucket sizes over all ranks (a 4 KiB allreduce of 1,024
// buckets), tells every rank how many keys it sends it (an alltoall of 4
// bytes), sends them (an alltoallv, each pair's count drawn once from the
// seed around Bytes/4/ranks keys), and ranks its new keys (compute). As in
// NPB, rank 0 changes two of its keys at every ranking (to the iteration
// and to the largest key less it): one more key to rank 0 and to the last
// rank, one fewer to two ranks drawn for the iteration, so that the
// counts change a little from one iteration to the next. The full
// verification then sends each rank's largest key to the next rank (rank
// 0 receives none, the last sends none: IS's three kinds of ranks) and
// sums the errors (an allreduce of 8 bytes).
func buildIS(p *Params, s sites) (program, error) {
	var (
		count  = s.at("main>rank", "compute", 410)
		sizes  = s.at("main>rank", "MPI_Allreduce", 430)
		counts = s.at("main>rank", "MPI_Alltoall", 450)
		keys   = s.at("main>rank", "MPI_Alltoallv", 470)
		sort   = s.at("main>rank", "compute", 490)
		vrecv  = s.at("main>full_verify", "MPI_Irecv", 610)
		vsend  = s.at("main>full_verify", "MPI_Send", 615)
		vwait  = s.at("main>full_verify", "MPI_Wait", 618)
		vsum   = s.at("main>full_verify", "MPI_Reduce", 640)
	)
	n := p.Ranks
	perPair := max(p.Bytes/4/int64(n), 1)
	// pair is the keys source sends destination at iteration it.
	pair := func(it, src, dst int) int64 {
		c := int64(float64(perPair) * (0.95 + 0.1*unit(hash3(p.Seed, uint64(src*n+dst), saltTask))))
		if src == 0 {
			a, b := int(hash3(p.Seed, uint64(it), saltNoise)%uint64(n)), int(hash3(p.Seed, uint64(it), saltImbalance)%uint64(n))
			for _, d := range []int{0, n - 1} {
				if dst == d {
					c++
				}
			}
			for _, d := range []int{a, b} {
				if dst == d {
					c--
				}
			}
		}
		return 4 * max(c, 0)
	}
	open := func(me int) stepper {
		return steps(p.Iterations+1, func(e *emitter, it int) {
			if it == p.Iterations {
				if me > 0 {
					rq := e.irecv(vrecv, me-1, 1000, 4)
					if me < n-1 {
						e.send(vsend, me+1, 1000, 4)
					}
					e.wait(vwait, rq)
				} else if n > 1 {
					e.send(vsend, me+1, 1000, 4)
				}
				e.collective(trace.Reduce, vsum, 8, 0)
				return
			}
			e.iteration(it)
			e.compute(count, 0.3*p.Flops)
			e.allreduce(sizes, 4096)
			e.collective(trace.Alltoall, counts, 4, 0)
			ev := e.event(trace.Alltoallv, keys)
			ev.SendCounts, ev.RecvCounts = make([]int64, n), make([]int64, n)
			for d := range n {
				ev.SendCounts[d], ev.RecvCounts[d] = pair(it, me, d), pair(it, d, me)
				ev.SendBytes += ev.SendCounts[d]
				ev.RecvBytes += ev.RecvCounts[d]
			}
			e.compute(sort, 0.7*p.Flops)
		})
	}
	return program{ranks: n, open: open}, nil
}

// buildMG is the communication skeleton of the NAS Parallel Benchmarks' MG
// (V-cycle multigrid on a periodic 3-D grid over a 3-D process grid). Each
// iteration runs a V-cycle over Levels levels: restriction (rprj3) from
// the finest level down to the coarsest, a smoothing (psinv) at the
// coarsest, then at each level back up an interpolation (interp), a
// residual (resid) and a smoothing; then the residual on the finest level.
// Each of these ends with comm3, the halo exchange of the level: along x,
// then y, then z, the rank posts non-blocking receives from both
// neighbours, sends to both with blocking sends and waits for both. Faces
// shrink by 4 per coarser level (Bytes at the finest, at least 8), work by
// 8. Before the first iteration, and every AllreduceEvery iterations, the
// rank computes the residual norms (norm2u3: two allreduces, a sum and a
// max). Along an axis of extent 1 there is no exchange, and all ranks stay
// active on the coarse levels (NPB idles some when a level has fewer
// points than ranks).
func buildMG(p *Params, s sites) (program, error) {
	c := cart{dims: p.Grid, periodic: p.Periodic}
	var (
		rprj3  = s.at("main>mg3P>rprj3", "compute", 820)
		psinv  = s.at("main>mg3P>psinv", "compute", 560)
		interp = s.at("main>mg3P>interp", "compute", 900)
		resid  = s.at("main>mg3P>resid", "compute", 640)
		top    = s.at("main>resid", "compute", 640)
		crecv  = s.at("main>mg3P>comm3>ready", "MPI_Irecv", 1210)
		csend  = s.at("main>mg3P>comm3>give3", "MPI_Send", 1260)
		cwait  = s.at("main>mg3P>comm3>take3", "MPI_Wait", 1330)
		nsum   = s.at("main>norm2u3", "MPI_Allreduce", 1500)
		nmax   = s.at("main>norm2u3", "MPI_Allreduce", 1503)
	)
	// work of one operator at level k (1 = coarsest, Levels = finest):
	// a V-cycle does about 4 operators per level, the finest dominating.
	work := func(k int) float64 { return p.Flops / 5 * math.Pow(8, float64(k-p.Levels)) }
	face := func(k int) int64 { return max(8, p.Bytes>>(2*(p.Levels-k))) }
	open := func(r int) stepper {
		var nb [6]int
		for k := range nb {
			nb[k] = c.neighbour(r, k/2, 2*(k%2)-1)
		}
		comm3 := func(e *emitter, level int) {
			size := face(level)
			for axis := range 3 {
				lo, hi := nb[2*axis], nb[2*axis+1]
				var rl, rh request
				if lo >= 0 {
					rl = e.irecv(crecv, lo, travel(axis, +1), size)
				}
				if hi >= 0 {
					rh = e.irecv(crecv, hi, travel(axis, -1), size)
				}
				if hi >= 0 {
					e.send(csend, hi, travel(axis, +1), size)
				}
				if lo >= 0 {
					e.send(csend, lo, travel(axis, -1), size)
				}
				if lo >= 0 {
					e.wait(cwait, rl)
				}
				if hi >= 0 {
					e.wait(cwait, rh)
				}
			}
		}
		op := func(e *emitter, s site, level int) {
			e.compute(s, work(level))
			comm3(e, level)
		}
		norm := func(e *emitter) {
			e.allreduce(nsum, p.AllreduceBytes)
			e.allreduceMax(nmax, p.AllreduceBytes)
		}
		return steps(p.Iterations+1, func(e *emitter, it int) {
			if it == 0 {
				op(e, top, p.Levels)
				norm(e)
				return
			}
			e.iteration(it - 1)
			for k := p.Levels; k > 1; k-- {
				op(e, rprj3, k-1)
			}
			op(e, psinv, 1)
			for k := 2; k <= p.Levels; k++ {
				e.compute(interp, work(k))
				op(e, resid, k)
				op(e, psinv, k)
			}
			op(e, top, p.Levels)
			if p.every(it - 1) {
				norm(e)
			}
		})
	}
	return program{ranks: p.Ranks, open: open}, nil
}
