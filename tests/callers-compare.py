#!/usr/bin/env python3
"""callers-compare.py PERF_SCRIPT FOLDED FUNCTION [POINTS]

The callers of FUNCTION (the frame right above its innermost occurrence in
each sample) as `perf script -F ip,sym` and rsprof's `report --format
folded` show them: perf's top five, each within POINTS (default 3)
percentage points in rsprof. Prints both; exit 1 when one differs more."""
import sys, collections
def callers_of(stacks, fn):
    c = collections.Counter(); tot = 0
    for frames, n in stacks:   # frames leaf first
        for i, f in enumerate(frames):
            if f == fn:
                tot += n
                c[frames[i + 1] if i + 1 < len(frames) else "[root]"] += n
                break
    return c, tot
def perf_stacks(path):
    out = []; cur = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            if cur: out.append((cur, 1))
            cur = None; continue
        if not line.startswith((" ", "\t")):
            cur = []; continue
        if cur is None: cur = []
        parts = line.split(None, 1)
        sym = parts[1] if len(parts) > 1 else "[unknown]"
        sym = sym.split("+0x")[0].replace(" (inlined)", "").split(" (")[0]
        if cur is not None: cur.append(sym)
    if cur: out.append((cur, 1))
    return out
def folded(path):
    out = []
    for line in open(path):
        st, n = line.rsplit(" ", 1)
        out.append((list(reversed(st.split(";"))), int(n)))
    return out
fn = sys.argv[3]
points = float(sys.argv[4]) if len(sys.argv) > 4 else 3.0
a, ta = callers_of(perf_stacks(sys.argv[1]), fn)
b, tb = callers_of(folded(sys.argv[2]), fn)
print("perf: %d samples with %s; rsprof: %d" % (ta, fn, tb))
if not ta or not tb:
    sys.exit(1)
bad = 0
for name, n in a.most_common(5):
    pa = 100.0 * n / ta; pb = 100.0 * b.get(name, 0) / tb if tb else 0
    ok = abs(pa - pb) <= points
    bad += not ok
    print("%-40s perf %5.1f %%  rsprof %5.1f %%  %s" % (name, pa, pb, "ok" if ok else "DIFFERS"))
print("rsprof's top 5:", [(k, round(100.0 * v / tb, 1)) for k, v in b.most_common(5)])
sys.exit(1 if bad else 0)
