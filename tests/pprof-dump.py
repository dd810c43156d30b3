# Decode a gzipped pprof profile (profile.proto) without the protobuf package:
# prints the sample types and one line per sample, "values frames", leaf first.
# Used by tests/t2000-report.sh. Usage: python3 tests/pprof-dump.py FILE
import gzip, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if not c & 0x80: return v, i
def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0: v, i = varint(b, i)
        elif t == 2:
            n, i = varint(b, i); v = b[i:i+n]; i += n
        else: raise ValueError("wire type %d" % t)
        out.append((f, v))
    return out
def packed(b):
    i, out = 0, []
    while i < len(b):
        v, i = varint(b, i); out.append(v)
    return out
data = gzip.open(sys.argv[1]).read()
p = fields(data)
strings = [v.decode() for f, v in p if f == 6]
assert strings[0] == ""
st = [[strings[x] for _, x in fields(v)] for f, v in p if f == 1]
funcs = {}
for f, v in p:
    if f == 5:
        d = dict(fields(v)); funcs[d[1]] = (strings[d.get(2, 0)], strings[d.get(4, 0)])
locs = {}
for f, v in p:
    if f == 4:
        d = fields(v); lid = dict(d)[1]
        locs[lid] = [dict(fields(l)) for k, l in d if k == 4]
samples = []
for f, v in p:
    if f == 2:
        d = fields(v)
        ids = packed(dict(d)[1]); vals = packed(dict(d)[2])
        names = [funcs[l[1]][0] + ":" + str(l.get(2, 0)) for i in ids for l in locs[i]]
        samples.append((names, vals))
print("sample_type", st)
for n, v in samples: print(v, ";".join(n))
