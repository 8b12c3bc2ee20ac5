"""A task farm in mpi4py (Debian's python3-mpi4py) for the real-application
corpus: rank 0 hands tasks (pickled dictionaries) to the workers and
receives their results from any source (mpi4py's receive of a Python
object is a matched probe, MPI_Mprobe, then MPI_Mrecv, of a size it
learns from the probe); each worker computes a matrix product of the
task's size. Then buffer collectives and a ring exchange of NumPy
arrays.

    mpirun -np 8 python3 farm.py 400     # 400 tasks
"""
import random
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
ntasks = int(sys.argv[1]) if len(sys.argv) > 1 else 200
random.seed(rank)
np.random.seed(rank)
if rank == 0:
    tasks = [{"id": i, "n": random.randint(10, 2000)} for i in range(ntasks)]
    status, done = MPI.Status(), 0
    for w in range(1, size):
        comm.send(tasks.pop(), dest=w, tag=1)
    while done < size - 1:
        comm.recv(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
        if tasks:
            comm.send(tasks.pop(), dest=status.Get_source(), tag=1)
        else:
            comm.send(None, dest=status.Get_source(), tag=0)
            done += 1
else:
    while (task := comm.recv(source=0, tag=MPI.ANY_TAG)) is not None:
        a = np.random.rand(task["n"], 50)
        comm.send({"id": task["id"], "trace": float((a @ a.T).trace()), "pad": list(range(task["n"] // 10))}, dest=0, tag=2)
x = np.full(1000, rank, dtype="d")
y = np.empty_like(x)
comm.Allreduce(x, y, op=MPI.SUM)
ranks = comm.bcast(comm.gather(rank, root=0), root=0)
req = comm.Isend(x, dest=(rank + 1) % size, tag=7)
comm.Recv(y, source=(rank - 1) % size, tag=7)
req.Wait()
comm.Barrier()
if rank == 0:
    print("tasks", ntasks, "ranks", len(ranks))
