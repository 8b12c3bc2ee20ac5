#!/usr/bin/env python3
"""List MPICH test/mpi tests of chosen directories with their build recipe.
Output TSV: mpi dir name np args env srcs cppflags ldadd kind"""
import os, re, sys, glob
ROOT = '/tmp/mpichB/src/test/mpi'
SUBST = {'@rmadir@': 'rma', '@iodir@': 'io', '@partdir@': 'part', '@comm_overlap@': ''}

def parse_am(path):
    v = {}
    if not os.path.exists(path):
        return v
    txt = open(path).read().replace('\\\n', ' ')
    for line in txt.split('\n'):
        m = re.match(r'^\s*([A-Za-z0-9_]+)\s*(\+?=)\s*(.*)$', line)
        if not m: continue
        k, op, val = m.groups()
        val = val.split('#')[0]
        if op == '+=' and k in v: v[k] += ' ' + val
        else: v[k] = val
    return v

def testlist(d):
    for f in ('testlist.in', 'testlist'):
        p = os.path.join(ROOT, d, f)
        if os.path.exists(p): return p
    return None

def walk(d, kind, out, want=None):
    tl = testlist(d)
    if not tl: return
    am = parse_am(os.path.join(ROOT, d, 'Makefile.am'))
    ext = {'c': '.c', 'f77': '.f', 'f90': '.f90'}[kind]
    for line in open(tl):
        for k, s in SUBST.items(): line = line.replace(k, s)
        line = line.strip()
        if not line or line.startswith('#'): continue
        for k, s in SUBST.items(): line = line.replace(k, s)
        if line.startswith('@'): continue  # optional entries not configured
        toks = line.split()
        if len(toks) == 1:
            sub = os.path.join(d, toks[0])
            if os.path.isdir(os.path.join(ROOT, sub)):
                walk(sub, kind, out, want)
            continue
        name, np = toks[0], toks[1]
        if want and not want(name): continue
        args = [t[4:] for t in toks[2:] if t.startswith('arg=')]
        env = [t[4:] for t in toks[2:] if t.startswith('env=')]
        if name == 'sendrecv3' and '-isendrecv' not in args: continue
        other = [t for t in toks[2:] if not t.startswith(('arg=', 'env='))]
        an = re.sub(r'[^A-Za-z0-9_]', '_', name)
        srcs = am.get(an + '_SOURCES') or am.get('nodist_' + an + '_SOURCES') or (name + ext)
        srcs = [s for s in srcs.split() if not s.endswith('.h')]
        cpp = (am.get(an + '_CPPFLAGS', '') + ' ' + am.get('AM_CPPFLAGS', '')).replace('$(AM_CPPFLAGS)', '')
        cpp = ' '.join(t for t in cpp.split() if t.startswith('-D'))
        ld = am.get(an + '_LDADD', '').replace('$(LDADD)', '')
        ld = ' '.join(t for t in ld.split() if t.startswith('-l'))
        out.append((d, name, np, ' '.join(args), ' '.join(env), ' '.join(srcs), cpp, ld, kind, ' '.join(other)))

def main():
    rows = []
    for d in ('rma', 'io', 'datatype', 'part'):
        walk(d, 'c', rows)
    for sub in ('pt2pt', 'comm', 'init', 'mpi_t', 'coll', 'part', 'rma'):
        walk('threads/' + sub, 'c', rows)
    walk('pt2pt', 'c', rows, lambda n: n.startswith('isendrecv') or n == 'sendrecv3')
    walk('coll', 'c', rows, lambda n: re.match(r'^(p_|iallred$|ibarrier$|nonblocking)', n) is not None)
    walk('f77', 'f77', rows)
    walk('f90', 'f90', rows)
    for r in rows:
        print('\t'.join(r))
main()
