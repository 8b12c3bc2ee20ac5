"""A PETSc solve for the real-application corpus (petsc4py, Debian's
python3-petsc4py-real3.18): the 2-D Poisson equation on an n x n grid
(DMDA, five-point Laplacian), solved steps times by conjugate gradients
preconditioned with algebraic multigrid (GAMG), the right-hand side
scaled between solves. PETSc does the communication: the halo exchanges
of the matrix products, the dot products' allreduces, the multigrid's
set-up and its coarse levels on sub-communicators.

    mpirun -np 4 python3 poisson.py -n 200 -steps 5
"""
import glob
import sys

# Debian installs petsc4py under PETSc's own prefix, on sys.path only
# through PETSC_DIR or the petsc-dev alternative.
sys.path += glob.glob("/usr/lib/petscdir/petsc*/*-real/lib/python3/dist-packages")
import petsc4py  # noqa: E402

petsc4py.init(sys.argv)
from petsc4py import PETSc  # noqa: E402

opts = PETSc.Options()
n, steps = opts.getInt("n", 200), opts.getInt("steps", 5)
da = PETSc.DMDA().create([n, n], stencil_width=1, stencil_type="star")
A = da.createMatrix()
(xs, xe), (ys, ye) = da.getRanges()
row, col = PETSc.Mat.Stencil(), PETSc.Mat.Stencil()
for j in range(ys, ye):
    for i in range(xs, xe):
        row.index = (i, j)
        for (di, dj), v in (((0, 0), 4.0), ((-1, 0), -1.0), ((1, 0), -1.0), ((0, -1), -1.0), ((0, 1), -1.0)):
            if 0 <= i + di < n and 0 <= j + dj < n:
                col.index = (i + di, j + dj)
                A.setValueStencil(row, col, v)
A.assemble()
b = da.createGlobalVec()
x = b.duplicate()
b.set(1.0)
ksp = PETSc.KSP().create()
ksp.setOperators(A)
ksp.setType("cg")
ksp.getPC().setType("gamg")
ksp.setTolerances(rtol=1e-10)
ksp.setFromOptions()
its = 0
for _ in range(steps):
    b.scale(1.01)
    ksp.solve(b, x)
    its += ksp.getIterationNumber()
norm = x.norm()
# PETSc 3.18's collective garbage clean-up at exit fails on Open MPI
# (MPI_ERR_TRUNCATE) where objects are left to it: destroy them here.
for o in (ksp, A, b, x, da):
    o.destroy()
PETSc.garbage_cleanup()
if PETSc.COMM_WORLD.rank == 0:
    print("iterations", its, "norm", norm)
