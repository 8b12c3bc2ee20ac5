package workload

import "fmt"

func init() {
	register(&generator{
		name:     "ring",
		summary:  "a token passed around a ring of ranks each iteration (rank 0 sends first), between computations",
		extra:    []string{ParamAllreduceEvery, ParamAllreduceBytes, ParamDelay},
		defaults: Params{Ranks: 8, Iterations: 100, Bytes: 1024, Flops: 1e6, Seed: 1, AllreduceBytes: 8},
		build:    buildRing,
	})
}

// buildRing is the classic token ring: every iteration each rank computes,
// then rank 0 sends the token to rank 1 and waits for it to come back from
// rank N-1, while rank r > 0 receives it from r-1 and passes it to r+1. The
// blocking sends and receives are deadlock free even when sends are
// synchronous, because only rank 0 sends first.
func buildRing(p *Params, s sites) (program, error) {
	if p.Ranks < 2 {
		return program{}, fmt.Errorf("needs at least 2 ranks, not %d", p.Ranks)
	}
	var (
		work   = s.at("main>iterate>do_work", "compute", 30)
		send   = s.at("main>iterate>pass_token", "MPI_Send", 44)
		recv   = s.at("main>iterate>pass_token", "MPI_Recv", 47)
		reduce = s.at("main>iterate>global_sum", "MPI_Allreduce", 58)
	)
	n := p.Ranks
	open := func(r int) stepper {
		next, prev := (r+1)%n, (r+n-1)%n
		return steps(p.Iterations, func(e *emitter, it int) {
			e.iteration(it)
			e.compute(work, p.Flops)
			if r == 0 {
				e.send(send, next, 1, p.Bytes)
				e.recv(recv, prev, 1, p.Bytes)
			} else {
				e.recv(recv, prev, 1, p.Bytes)
				e.send(send, next, 1, p.Bytes)
			}
			if p.every(it) {
				e.allreduce(reduce, p.AllreduceBytes)
			}
		})
	}
	return program{ranks: n, open: open}, nil
}
