package workload

import (
	"fmt"

	"kairos/trace"
)

func init() {
	register(&generator{
		name:     "pingpong",
		summary:  "pairs of ranks bouncing messages of 1, 2, 4 ... bytes back and forth with blocking send/recv",
		extra:    []string{"-" + ParamFlops, "-" + ParamImbalance, "-" + ParamNoise},
		defaults: Params{Ranks: 2, Iterations: 100, Bytes: 1 << 20, Seed: 1},
		build:    buildPingPong,
	})
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
