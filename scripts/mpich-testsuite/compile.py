#!/usr/bin/env python3
"""compile.py MPI: build every test of tests.tsv for MPI (mpich|ompi); writes build/MPI/status.tsv"""
import os, sys, subprocess, concurrent.futures as cf
M = sys.argv[1]
S = '/tmp/mpichB/src/test/mpi'; B = f'/tmp/mpichB/build/{M}'; U = B + '/util'
CC, FC = ('mpicc.mpich', 'mpif90.mpich') if M == 'mpich' else ('mpicc', 'mpifort')
CF = ['-O1', '-w', '-I/tmp/mpichB/conf', f'-I{S}/include', f'-I{S}/dtpools/include']
FF = ['-O1', '-w', '-fallow-argument-mismatch']
OMPI_DIRS = ('rma', 'io', 'f90')
TESTS = os.environ.get('KT_TESTS', '/tmp/mpichB/tests.tsv')  # another list: every line builds for both MPIs
rows = [l.rstrip('\n').split('\t') for l in open(TESTS)]
jobs = {}
for r in rows:
    d, name = r[0], r[1]
    if M == 'ompi' and not d.startswith(OMPI_DIRS) and 'KT_TESTS' not in os.environ: continue
    if os.path.exists(f'{B}/{d}/{name}'): continue
    jobs[(d, name)] = r

def build(r):
    d, name, np, args, env, srcs, cpp, ld, kind = r[:9]
    out = f'{B}/{d}/{name}'; odir = f'{B}/{d}/obj_{name}'
    os.makedirs(odir, exist_ok=True)
    th = d.startswith('threads')
    objs, log = [], ''
    for s in srcs.split():
        o = f'{odir}/{os.path.basename(s)}.o'
        src = f'{S}/{d}/{s}'
        if s.endswith('.c'):
            cmd = [CC] + CF + (['-DMTEST_USE_THREAD'] if th else []) + cpp.split() + [f'-I{S}/{d}', '-c', src, '-o', o]
        else:
            cmd = [FC] + FF + [f'-I{S}/{d}', f'-J{odir}', '-c', src, '-o', o]
        p = subprocess.run(cmd, capture_output=True, text=True)
        log += p.stdout + p.stderr
        if p.returncode: return (d, name, 'nobuild', log.strip().split('\n')[-3:])
        objs.append(o)
    lib = f'{U}/libmtest_thread.a' if th else f'{U}/libmtest_single.a'
    if kind == 'c':
        cmd = [CC] + objs + [lib, '-lm', '-lpthread'] + ld.split() + ['-o', out]
    else:
        fo = f'{U}/mtest_f77.o' if kind == 'f77' else f'{U}/mtest_f90.o'
        cmd = [FC] + objs + [fo, lib, '-lm', '-lpthread'] + ['-o', out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode and "undefined reference to `main'" in p.stderr:
        p = subprocess.run(cmd[:1] + [f'{U}/run_mpitests.o'] + cmd[1:], capture_output=True, text=True)
    log += p.stdout + p.stderr
    if p.returncode: return (d, name, 'nolink', log.strip().split('\n')[-3:])
    return (d, name, 'ok', [])

with cf.ThreadPoolExecutor(2) as ex, open(f'{B}/status.tsv', 'a') as st:
    for d, name, s, log in ex.map(build, jobs.values()):
        st.write(f'{d}\t{name}\t{s}\t{" | ".join(x.strip() for x in log)[:300]}\n')
