package workload

import (
	"fmt"
	"math"
)

func init() {
	register(&generator{
		name:    "bt",
		summary: "NPB BT-like multi-partition solver (square number of ranks): face exchanges, pipelined x, y, z line solves",
		extra:   []string{ParamAllreduceEvery, ParamAllreduceBytes, ParamDelay},
		defaults: Params{Ranks: 16, Iterations: 20, Bytes: 16384, Flops: 1e9, Seed: 1,
			AllreduceBytes: 40},
		build: buildBT,
	})
}

// buildBT is the communication skeleton of the NAS Parallel Benchmarks' BT
// (block tri-diagonal ADI solver) with its multi-partition decomposition:
// the number of ranks is a square p^2 and the domain is cut into p^3
// cells, rank (i, j) owning the p cells (i+c, j+c, c) mod p of a diagonal,
// so that every rank has work at every stage of a line sweep. Its
// successor along x owns the next cells in x: rank (i+1, j); along y: rank
// (i, j+1); along z: rank (i-1, j-1) (all mod p). Each iteration:
//
//   - copy_faces: the rank posts non-blocking receives from its
//     predecessor and successor along x, y and z, sends its faces (2 x
//     Bytes each) to them with non-blocking sends and waits for all;
//   - compute_rhs;
//   - x_solve, y_solve, z_solve: a forward elimination over the p stages
//     (at each stage after the first the rank receives the solve
//     information of its predecessor, non-blocking, computes the cell's
//     left-hand side, waits for the data, solves the cell, and sends its
//     own information to its successor with a non-blocking send, waiting
//     for the previous one), then a back substitution over the stages in
//     reverse, receiving from the successor and sending to the
//     predecessor. The solve messages have Bytes bytes;
//   - add (the update).
//
// Every AllreduceEvery iterations, and after the last, the rank reduces the
// residual norms (an allreduce of AllreduceBytes). Flops per iteration go
// 25% to compute_rhs and 25% to each line solve.
func buildBT(p *Params, s sites) (program, error) {
	n := int(math.Round(math.Sqrt(float64(p.Ranks))))
	if n*n != p.Ranks {
		return program{}, fmt.Errorf("needs a square number of ranks (multi-partition), not %d", p.Ranks)
	}
	var (
		frecv = s.at("main>adi>copy_faces", "MPI_Irecv", 180)
		fsend = s.at("main>adi>copy_faces", "MPI_Isend", 230)
		fwall = s.at("main>adi>copy_faces", "MPI_Waitall", 262)
		rhs   = s.at("main>adi>compute_rhs", "compute", 40)
		add   = s.at("main>adi>add", "compute", 20)
		norm  = s.at("main>verify>rhs_norm", "MPI_Allreduce", 1100)
	)
	solvers := [3]lineSolver{}
	for axis, name := range [3]string{"x_solve", "y_solve", "z_solve"} {
		path := "main>adi>" + name
		solvers[axis] = lineSolver{
			recv:  s.at(path+">receive_solve_info", "MPI_Irecv", 140+axis),
			rwait: s.at(path, "MPI_Wait", 150+axis),
			lhs:   s.at(path+">lhs", "compute", 160+axis),
			solve: s.at(path+">solve_cell", "compute", 170+axis),
			send:  s.at(path+">send_solve_info", "MPI_Isend", 180+axis),
			swait: s.at(path, "MPI_Wait", 190+axis),
			back:  s.at(path+">backsubstitute", "compute", 200+axis),
			brecv: s.at(path+">receive_backsub_info", "MPI_Irecv", 210+axis),
			bsend: s.at(path+">send_backsub_info", "MPI_Isend", 220+axis),
			cells: n,
			bytes: p.Bytes,
			flops: 0.25 * p.Flops / float64(n),
			tag:   20 + 2*axis,
		}
	}
	open := func(r int) stepper {
		i, j := r%n, r/n
		at := func(x, y int) int { return (x+n)%n + n*((y+n)%n) }
		// successor and predecessor along x, y, z.
		succ := [3]int{at(i+1, j), at(i, j+1), at(i-1, j-1)}
		pred := [3]int{at(i-1, j), at(i, j-1), at(i+1, j+1)}
		// Each iteration: copy_faces and compute_rhs, the three solves,
		// add and the norm, one step each.
		return loops2(p.Iterations, 5, func(e *emitter, it, j int) {
			e.iteration(it)
			switch j {
			case 0:
				if n > 1 {
					for axis := range 3 {
						e.irecv(frecv, pred[axis], 2*axis, 2*p.Bytes)
						e.irecv(frecv, succ[axis], 2*axis+1, 2*p.Bytes)
					}
					for axis := range 3 {
						e.isend(fsend, succ[axis], 2*axis, 2*p.Bytes)
						e.isend(fsend, pred[axis], 2*axis+1, 2*p.Bytes)
					}
					e.waitall(fwall)
				}
				e.compute(rhs, 0.25*p.Flops)
			case 4:
				e.compute(add, 0.01*p.Flops)
				if p.every(it) || it == p.Iterations-1 {
					e.allreduce(norm, p.AllreduceBytes)
				}
			default:
				solvers[j-1].run(e, pred[j-1], succ[j-1])
			}
		})
	}
	return program{ranks: p.Ranks, open: open}, nil
}

// lineSolver is one of BT's pipelined line solves over the cells.
type lineSolver struct {
	recv, rwait, lhs, solve, send, swait, back, brecv, bsend site
	cells                                                    int
	bytes                                                    int64
	flops                                                    float64
	tag                                                      int // forward; tag+1 is the back substitution
}

// run emits the forward elimination and the back substitution.
func (l *lineSolver) run(e *emitter, pred, succ int) {
	var sent request
	pending := false
	for stage := range l.cells {
		if stage > 0 {
			rq := e.irecv(l.recv, pred, l.tag, l.bytes)
			e.compute(l.lhs, 0.3*l.flops)
			e.wait(l.rwait, rq)
		} else {
			e.compute(l.lhs, 0.3*l.flops)
		}
		e.compute(l.solve, 0.5*l.flops)
		if stage < l.cells-1 {
			if pending {
				e.wait(l.swait, sent)
			}
			sent, pending = e.isend(l.send, succ, l.tag, l.bytes), true
		}
	}
	if pending {
		e.wait(l.swait, sent)
		pending = false
	}
	for stage := l.cells - 1; stage >= 0; stage-- {
		if stage < l.cells-1 {
			rq := e.irecv(l.brecv, succ, l.tag+1, l.bytes)
			e.wait(l.rwait, rq)
		}
		e.compute(l.back, 0.2*l.flops)
		if stage > 0 {
			if pending {
				e.wait(l.swait, sent)
			}
			sent, pending = e.isend(l.bsend, pred, l.tag+1, l.bytes), true
		}
	}
	if pending {
		e.wait(l.swait, sent)
	}
}
