package workload

import (
	"container/heap"
	"fmt"
	"math"
)

func init() {
	register(&generator{
		name:     "masterworker",
		summary:  "rank 0 hands out tasks of strongly imbalanced cost to workers on demand (send/recv of task data and results)",
		extra:    []string{ParamTasks, "-" + ParamIterations},
		defaults: Params{Ranks: 8, Iterations: 1, Bytes: 4096, Flops: 1e8, Seed: 1, Tasks: 200},
		build:    buildMasterWorker,
	})
}

// Tags of the task farm.
const (
	tagTask   = 1
	tagResult = 2
	tagStop   = 3
)

// buildMasterWorker is a dynamic task farm (self-scheduling, as in
// parameter sweeps and Monte Carlo codes). Rank 0 sends one task (Bytes
// bytes) to each worker, then repeatedly receives a result (Bytes/8 bytes,
// at least 8) from the worker that finishes first and sends it the next
// task; when no task is left it answers each result with a 0-byte stop
// message. A worker receives a task, computes it and sends its result until
// it receives the stop message.
//
// Task costs are strongly imbalanced: log-normal with mean Flops and a
// coefficient of variation of 1.3 (sigma = 1), drawn from the seed, then
// scaled by the worker's imbalance factor and noise. Which worker finishes
// first is decided by simulating the farm with the workers' total costs, so
// that the trace records the order a real run would have had, each receive
// naming its actual source (as a trace of MPI_ANY_SOURCE receives does).
func buildMasterWorker(p *Params, s sites) (program, error) {
	if p.Ranks < 2 {
		return program{}, fmt.Errorf("needs at least 2 ranks (a master and a worker), not %d", p.Ranks)
	}
	var (
		msend  = s.at("main>master>distribute", "MPI_Send", 48)
		mrecv  = s.at("main>master>collect", "MPI_Recv", 55)
		mstop  = s.at("main>master>shutdown", "MPI_Send", 71)
		wrecv  = s.at("main>worker>get_task", "MPI_Recv", 92)
		work   = s.at("main>worker>process_task", "compute", 101)
		wsend  = s.at("main>worker>put_result", "MPI_Send", 110)
		result = max(8, p.Bytes/8)
	)
	open := func(r int) stepper {
		f := newFarm(p)
		return func(e *emitter) bool {
			ev, ok := f.next()
			if !ok {
				return false
			}
			switch {
			case r == 0 && ev.first && ev.task < 0:
				e.send(mstop, ev.worker, tagStop, 0)
			case r == 0 && ev.first:
				e.send(msend, ev.worker, tagTask, p.Bytes)
			case r == 0:
				e.recv(mrecv, ev.worker, tagResult, result)
				if ev.task >= 0 {
					e.send(msend, ev.worker, tagTask, p.Bytes)
				} else {
					e.send(mstop, ev.worker, tagStop, 0)
				}
			case r == ev.worker && ev.first && ev.task < 0:
				e.recv(wrecv, 0, tagStop, 0)
			case r == ev.worker && ev.first:
				e.recv(wrecv, 0, tagTask, p.Bytes)
			case r == ev.worker:
				// The worker computes the task it received last (ev.done)
				// and returns its result, then gets the next task or the
				// stop message.
				e.computeExact(work, ev.cost)
				e.send(wsend, 0, tagResult, result)
				if ev.task >= 0 {
					e.recv(wrecv, 0, tagTask, p.Bytes)
				} else {
					e.recv(wrecv, 0, tagStop, 0)
				}
			}
			return true
		}
	}
	return program{ranks: p.Ranks, open: open}, nil
}

// farm replays the master's schedule: first one task per worker (a worker
// with none gets stopped at once), then, in order of completion time, the
// result of each busy worker followed by its next task or its stop.
type farm struct {
	p       *Params
	workers int
	nextTsk int
	init    int // next worker to receive its first task
	busy    busyHeap
}

// farmEvent is one step of the master: the first message to worker, or
// the result of a task of the given cost from worker followed by task
// (the next task id, -1 for stop).
type farmEvent struct {
	worker int
	first  bool
	task   int
	cost   float64
}

func newFarm(p *Params) *farm {
	return &farm{p: p, workers: p.Ranks - 1}
}

// cost returns the flops worker w spends on task t: the task's cost,
// scaled by the worker's imbalance factor and the noise drawn for the task.
func (f *farm) cost(w, t int) float64 {
	z := normal(hash3(f.p.Seed, uint64(t), saltTask))
	c := f.p.Flops * math.Exp(z-0.5) * rankScale(f.p, w)
	if f.p.Noise > 0 {
		c *= 1 + f.p.Noise*(2*unit(hash3(f.p.Seed, uint64(t), saltNoise))-1)
	}
	return math.Round(c)
}

func (f *farm) next() (farmEvent, bool) {
	if f.init < f.workers {
		w := f.init + 1
		f.init++
		if f.nextTsk < f.p.Tasks {
			t := f.nextTsk
			f.nextTsk++
			c := f.cost(w, t)
			heap.Push(&f.busy, busyWorker{w, c, c})
			return farmEvent{worker: w, first: true, task: t}, true
		}
		// More workers than tasks: stop this one at once.
		return farmEvent{worker: w, first: true, task: -1}, true
	}
	if f.busy.Len() == 0 {
		return farmEvent{}, false
	}
	b := heap.Pop(&f.busy).(busyWorker)
	ev := farmEvent{worker: b.worker, task: -1, cost: b.cost}
	if f.nextTsk < f.p.Tasks {
		ev.task = f.nextTsk
		f.nextTsk++
		c := f.cost(b.worker, ev.task)
		heap.Push(&f.busy, busyWorker{b.worker, b.done + c, c})
	}
	return ev, true
}

// busyWorker is a worker computing a task of cost flops that it finishes
// at time done (in flops since the start).
type busyWorker struct {
	worker     int
	done, cost float64
}

// busyHeap orders busy workers by completion, then by rank.
type busyHeap []busyWorker

func (h busyHeap) Len() int { return len(h) }
func (h busyHeap) Less(i, j int) bool {
	if h[i].done != h[j].done {
		return h[i].done < h[j].done
	}
	return h[i].worker < h[j].worker
}
func (h busyHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *busyHeap) Push(x any)   { *h = append(*h, x.(busyWorker)) }
func (h *busyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// normal maps a 64-bit value to a standard normal deviate (Box-Muller on
// its two halves).
func normal(x uint64) float64 {
	u1 := (float64(x>>32) + 0.5) / (1 << 32)
	u2 := float64(x&0xffffffff) / (1 << 32)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
