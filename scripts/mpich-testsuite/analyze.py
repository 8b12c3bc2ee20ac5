#!/usr/bin/env python3
"""analyze.py: results.md from res/*.jsonl (table and counts)."""
import json, re, os, collections
rows = []
for M in ('mpich', 'ompi'):
    p = f'/tmp/mpichB/res/{M}.jsonl'
    if os.path.exists(p):
        rows += [json.loads(l) for l in open(p)]

def stat(path):
    try:
        t = open(path).read()
    except OSError:
        return None
    d = {}
    for k in ('p2p messages', 'p2p bytes', 'collective calls'):
        m = re.search(r'^' + k + r'\s+(\d+)', t, re.M)
        if m: d[k] = int(m.group(1))
    return d

def vs(r, fmt, v):
    x = r.get(fmt, {}).get(v)
    if x is None: return '-'
    if x['rc'] == 0: return 'ok'
    if x['panic']: return 'PANIC'
    return 'T/O' if x['rc'] == 'timeout' else 'fail'

def wd(r):
    return f"/tmp/mpichB/run/{r['mpi']}/{r['dir']}/{r['name']}.{r['id'].split('#')[1]}"

fixed = {}
for M in ('mpich', 'ompi'):
    p = f'/tmp/mpichB/res/{M}-fixed.jsonl'
    if os.path.exists(p):
        for l in open(p):
            x = json.loads(l); fixed[(M, x['id'])] = x

def clean(r):
    ok = lambda o: o in ('pass', 'noerrline')
    return ok(r.get('plain')) and r.get('traced') == r.get('plain') and all(v['rc'] == 0 for f in ('ti', 'otf2') for v in r.get(f, {}).values())

def klass(r, chk, sim, other):
    if r['plain'] not in ('pass', 'noerrline'):
        return 'limit: fails untraced (' + r['plain'] + ')' if r['traced'] == r['plain'] else 'limit: fails untraced, traced ' + r['traced']
    if r['traced'] != r['plain']:
        if max(r['plain_t'], r['traced_t']) > 50: return 'limit: near the 60 s limit (load)'
        return 'DEFECT tracer: outcome'
    kt = ' '.join(r.get('kt_lines', []))
    if 'threads other than' in kt and ('fail' in chk or 'fail' in sim or other):
        return 'limit: other threads not recorded'
    if any('T/O' in o for o in other) and not ('fail' in chk): return 'slow verb (>60 s under load)'
    if 'fail' in chk or 'fail' in sim or 'PANIC' in chk or other:
        return 'DEFECT trace or verb'
    return 'clean'

table, counts = [], collections.Counter()
classes = collections.Counter()
byMPI = collections.Counter()
for r in rows:
    test = r['id'] + (' ' + r['args'] if r.get('args') else '')
    if not r.get('built'):
        counts['not built'] += 1
        table.append((test, r['np'], r['mpi'], 'not built', '', '', '', '')); continue
    other = []
    for f in ('ti', 'otf2'):
        for v in ('stats', 'report', 'reduce', 'convert'):
            s = vs(r, f, v)
            if s not in ('ok', '-'): other.append(f'{f}:{v} {s}')
    note = ''
    if 'ti' in r and 'otf2' in r:
        a, b = stat(wd(r) + '/ti_stats.out'), stat(wd(r) + '/otf2_stats.out')
        if a and b:
            if a.get('p2p messages') != b.get('p2p messages') or a.get('p2p bytes') != b.get('p2p bytes'):
                note = f"p2p TI {a.get('p2p messages')}/{a.get('p2p bytes')}B vs OTF2 {b.get('p2p messages')}/{b.get('p2p bytes')}B"
            elif a.get('collective calls', 0) > b.get('collective calls', 0):
                note = f"coll TI {a.get('collective calls')} > OTF2 {b.get('collective calls')}"
    if note: other.append(note)
    chk = f"{vs(r, 'ti', 'check')}/{vs(r, 'otf2', 'check')}"
    sim = f"{vs(r, 'ti', 'sim')},{vs(r, 'ti', 'ana')}/{vs(r, 'otf2', 'sim')},{vs(r, 'otf2', 'ana')}"
    k = klass(r, chk, sim, other)
    fx = fixed.get((r['mpi'], r['id']))
    if fx and k.startswith('DEFECT'):
        k += ' -> mended: ' + ('clean' if clean(fx) else 'still ' + fx.get('traced', '?'))
    classes[k] += 1
    byMPI[(r['mpi'], k.split(' -> ')[0].split(' (')[0])] += 1
    other.append(k) if k != 'clean' else None
    table.append((test, r['np'], r['mpi'], r['plain'], r['traced'], chk, sim, '; '.join(other)))
    if r['plain'] != 'pass': counts['untraced fails'] += 1
    if r['traced'] != r['plain']: counts['outcome changed'] += 1
    if 'fail' in chk or 'PANIC' in chk or 'T/O' in chk: counts['check fails'] += 1
    if 'fail' in sim or 'PANIC' in sim or 'T/O' in sim: counts['simulate fails'] += 1
    if other: counts['other verb / mismatch'] += 1
    if r['plain'] == 'pass' and r['traced'] == 'pass' and chk == 'ok/ok' and sim == 'ok,ok/ok,ok' and not other: counts['all clean'] += 1
    counts['run'] += 1
with open('/tmp/mpichB/results.md', 'w') as f:
    f.write('# MPICH test/mpi (part 2) under the Kairos tracer\n\n')
    f.write('check: TI/OTF2; simulate: TI exact,analytic / OTF2 exact,analytic\n\n')
    f.write('Counts: ' + ', '.join(f'{k} {v}' for k, v in sorted(counts.items())) + '\n\n')
    f.write('Classes:\n\n' + ''.join(f'- {k}: {v}\n' for k, v in sorted(classes.items())) + '\n')
    f.write('| test | procs | MPI | untraced | traced | check | simulate | other verbs |\n|---|---|---|---|---|---|---|---|\n')
    for t in table:
        f.write('| ' + ' | '.join(str(x) for x in t) + ' |\n')
print(dict(counts))
for k, v in sorted(classes.items()): print(v, k)
for k, v in sorted(byMPI.items()): print('BY', k, v)
for t in table:
    if t[3] == 'not built' or (t[3] == 'pass' and t[4] == 'pass' and t[5] == 'ok/ok' and t[6] == 'ok,ok/ok,ok' and not t[7]): continue
    print(' | '.join(str(x) for x in t))
