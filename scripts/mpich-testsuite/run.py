#!/usr/bin/env python3
"""run.py MPI [filter]: run each built test untraced and traced, then the verbs on its traces.
Writes /tmp/mpichB/res/MPI.jsonl (one object per testlist line). KT_TESTS names another test list
(gen.py's columns), KT_KAIROS another kairos binary, KT_LIBDIR the tracer's, KT_SUFFIX the results'."""
import os, sys, json, subprocess, signal, time, shutil, re
M = sys.argv[1]; FILT = sys.argv[2] if len(sys.argv) > 2 else None
B = f'/tmp/mpichB/build/{M}'; R = f"/tmp/mpichB/run{os.environ.get('KT_SUFFIX', '')}/{M}"
K = os.environ.get('KT_KAIROS', '/tmp/mpichB/kairos')
TESTS = os.environ.get('KT_TESTS', '/tmp/mpichB/tests.tsv')  # another list: every line runs on both MPIs
LIB = f"/tmp/mpichB/{os.environ.get('KT_LIBDIR', 'tr')}/libkt_{M}.so"
SUF = os.environ.get('KT_SUFFIX', '')
OMPI_DIRS = ('rma', 'io', 'f90')
os.makedirs('/tmp/mpichB/res', exist_ok=True)
out = open(f'/tmp/mpichB/res/{M}{SUF}.jsonl', 'a')
done = set()
try:
    for l in open(f'/tmp/mpichB/res/{M}{SUF}.jsonl'):
        done.add(json.loads(l)['id'])
except Exception: pass

def run(cmd, cwd, env, tmo):
    t = time.time()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, text=True, errors='replace')
    try:
        o, e = p.communicate(timeout=tmo); rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        o, e = p.communicate(); rc = 'timeout'
    return rc, o, e, round(time.time() - t, 2)

def launch(np, prog, args, env, traced, tdir):
    if M == 'mpich':
        c = ['mpirun.mpich', '-np', np]
        if traced: c += ['-genv', 'LD_PRELOAD', LIB, '-genv', 'KAIROS_TRACE_FORMAT', 'ti,otf2', '-genv', 'KAIROS_TRACE', tdir]
    else:
        c = ['mpirun', '--allow-run-as-root', '--oversubscribe', '-np', np]
        for e in env: c += ['-x', e.split('=')[0]]
        if traced: c += ['-x', 'LD_PRELOAD=' + LIB, '-x', 'KAIROS_TRACE_FORMAT=ti,otf2', '-x', 'KAIROS_TRACE=' + tdir]
    return c + [prog] + args

def outcome(rc, o, e):
    if rc == 'timeout': return 'hang'
    ok = ' No Errors' in o
    if rc == 0 and ok: return 'pass'
    if rc == 0: return 'noerrline'
    if re.search(r'signal|Segmentation|SIGSEGV|SIGABRT|core dumped|BAD TERMINATION', o + e): return 'crash'
    return f'rc{rc}'

def verbs(tr, np, wd, tag):
    res = {}
    cl = f'{np}x1Gf,1GBps,1us'
    for v, cmd in [('check', ['check', tr]), ('stats', ['stats', tr]),
                   ('sim', ['simulate', '--cluster', cl, tr]),
                   ('ana', ['simulate', '--analytic', '--cluster', cl, tr]),
                   ('report', ['report', '-o', f'{wd}/r_{tag}.html', tr]),
                   ('reduce', ['reduce', tr]),
                   ('convert', ['convert', tr, f'{wd}/c_{tag}.ktr'])]:
        rc, o, e, dt = run([K] + cmd, wd, os.environ.copy(), 60)
        open(f'{wd}/{tag}_{v}.out', 'w').write(o + '\n--stderr--\n' + e)
        bad = 'panic' if ('panic:' in e or 'goroutine ' in e) else ''
        res[v] = {'rc': rc, 't': dt, 'panic': bad, 'err': e.strip().split('\n')[-1][:300] if rc != 0 else ''}
    return res

rows = [l.rstrip('\n').split('\t') for l in open(TESTS)]
idx = {}
for r in rows:
    d, name, np, args, env = r[:5]
    if M == 'ompi' and not d.startswith(OMPI_DIRS) and 'KT_TESTS' not in os.environ: continue
    k = f'{d}/{name}'; idx[k] = idx.get(k, 0) + 1
    tid = f'{k}#{idx[k]}'
    if tid in done: continue
    if FILT and not re.search(FILT, tid): continue
    prog = f'{B}/{d}/{name}'
    rec = {'id': tid, 'dir': d, 'name': name, 'np': np, 'args': args, 'env': env, 'mpi': M}
    if not os.path.exists(prog):
        rec['built'] = False; out.write(json.dumps(rec) + '\n'); out.flush(); continue
    rec['built'] = True
    wd = f'{R}/{d}/{name}.{idx[k]}'
    shutil.rmtree(wd, ignore_errors=True); os.makedirs(wd)
    envd = os.environ.copy()
    for e in env.split():
        a, b = e.split('=', 1); envd[a] = b
    a = args.split()
    rc, o, e, dt = run(launch(np, prog, a, env.split(), False, ''), wd, envd, 60)
    open(f'{wd}/plain.out', 'w').write(o + '\n--stderr--\n' + e)
    rec['plain'] = outcome(rc, o, e); rec['plain_t'] = dt
    # clean files the test left, so the traced run starts alike
    for f in os.listdir(wd):
        if f != 'plain.out':
            p = os.path.join(wd, f); shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    tdir = f'{wd}/kt'
    rc, o, e, dt = run(launch(np, prog, a, env.split(), True, tdir), wd, envd, 60)
    open(f'{wd}/traced.out', 'w').write(o + '\n--stderr--\n' + e)
    rec['traced'] = outcome(rc, o, e); rec['traced_t'] = dt
    rec['kt_lines'] = [x for x in e.split('\n') if 'kairos_trace' in x][:40]
    dirs = [x for x in os.listdir(wd) if x.startswith('kt')]
    rec['tracedirs'] = dirs
    if os.path.exists(f'{tdir}/index.txt'):
        rec['ti'] = verbs(f'{tdir}/index.txt', np, wd, 'ti')
    if os.path.exists(f'{tdir}/traces.otf2'):
        rec['otf2'] = verbs(f'{tdir}/traces.otf2', np, wd, 'otf2')
    out.write(json.dumps(rec) + '\n'); out.flush()
    print(tid, rec['plain'], rec['traced'], {k: v['rc'] for k, v in rec.get('ti', {}).items()}, {k: v['rc'] for k, v in rec.get('otf2', {}).items()}, flush=True)
