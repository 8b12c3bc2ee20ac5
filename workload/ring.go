package workload

import (
	"fmt"

	"kairos/trace"
)

func init() {
	register(&generator{
		name:     "ring",
		summary:  "a token passed around a ring of ranks each iteration (rank 0 sends first), between computations",
		extra:    []string{ParamAllreduceEvery, ParamAllreduceBytes},
		defaults: Params{Ranks: 8, Iterations: 100, Bytes: 1024, Flops: 1e6, Seed: 1, AllreduceBytes: 8},
		build:    buildRing,
	})
	register(&generator{
		name:     "pingpong",
		summary:  "pairs of ranks bouncing messages of 1, 2, 4 ... bytes back and forth with blocking send/recv",
		extra:    []string{"-" + ParamFlops, "-" + ParamImbalance, "-" + ParamNoise},
		defaults: Params{Ranks: 2, Iterations: 100, Bytes: 1 << 20, Seed: 1},
		build:    buildPingPong,
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

// buildPingPong is a ping-pong latency and bandwidth benchmark in the style
// of the Intel MPI Benchmarks' PingPong, run by every pair of ranks (2i,
// 2i+1) at once: for each message size 1, 2, 4 ... up to Bytes (then Bytes
// itself if it is not a power of two), a barrier, then Iterations
// repetitions of the even rank sending and receiving back the message with
// blocking calls while the odd rank receives and sends it back.
func buildPingPong(p *Params, s sites) (program, error) {
	if p.Ranks < 2 || p.Ranks%2 != 0 {
		return program{}, fmt.Errorf("needs an even number of ranks (pairs), not %d", p.Ranks)
	}
	var (
		sync = s.at("main>pingpong_size", "MPI_Barrier", 25)
		send = s.at("main>pingpong_size>bounce", "MPI_Send", 34)
		recv = s.at("main>pingpong_size>bounce", "MPI_Recv", 35)
	)
	var sizes []int64
	for b := int64(1); b < p.Bytes; b *= 2 {
		sizes = append(sizes, b)
	}
	sizes = append(sizes, p.Bytes)
	open := func(r int) stepper {
		peer := r ^ 1
		return steps(len(sizes)*p.Iterations, func(e *emitter, i int) {
			k := i / p.Iterations
			if i%p.Iterations == 0 {
				e.collective(trace.Barrier, sync, 0, 0)
			}
			if r%2 == 0 {
				e.send(send, peer, k, sizes[k])
				e.recv(recv, peer, k, sizes[k])
			} else {
				e.recv(recv, peer, k, sizes[k])
				e.send(send, peer, k, sizes[k])
			}
		})
	}
	return program{ranks: p.Ranks, open: open}, nil
}
