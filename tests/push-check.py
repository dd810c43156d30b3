#!/usr/bin/env python3
# What the loopback store (tests/push-receiver.py) received, for the push
# tests: python3 push-check.py DIR COMMAND [ARG...]
#
#   errors                 the requests it refused (exit 1 when any)
#   count                  profiles received (an OTLP request: one per type)
#   total TYPE             the sum of sample type TYPE ("samples/count",
#                          "alloc_space/bytes"...) over every profile
#   last TYPE              its sum over the last interval of each process
#   leaf TYPE FUNC:LINE    the sum of TYPE of the samples whose leaf is there
#   dups                   profiles received twice (the same process, types
#                          and time; exit 1 when any)
#   files                  the pprof files saved
#   labels                 each profile's labels, one JSON object a line
#   field NAME             each profile's NAME, one a line (auth, tenant...)
import json, os, sys

def records(d):
    path = os.path.join(d, "log.jsonl")
    if not os.path.exists(path):
        return []
    return [json.loads(l) for l in open(path)]

def pid(r):
    l = r.get("labels", {})
    return l.get("pid") or l.get("process.pid")

def values(r, typ):
    for t, v in zip(r.get("types", []), r.get("totals", [])):
        if t == typ:
            yield v

def main():
    d, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    recs = records(d)
    ok = [r for r in recs if "error" not in r]
    if cmd == "errors":
        bad = [r for r in recs if "error" in r]
        for r in bad:
            print(r)
        return 1 if bad else 0
    if cmd == "count":
        print(len(ok))
    elif cmd == "total":
        print(sum(v for r in ok for v in values(r, args[0])))
    elif cmd == "last":
        last = {}
        for r in ok:
            if any(True for _ in values(r, args[0])):
                k = (r["endpoint"], pid(r))
                if k not in last or r["time_ns"] > last[k]["time_ns"]:
                    last[k] = r
        print(sum(v for r in last.values() for v in values(r, args[0])))
    elif cmd == "leaf":
        n = 0
        for r in ok:
            if args[0] in r.get("types", []) and r["types"].index(args[0]) == 0:
                n += r.get("leaf", {}).get(args[1], 0)
        print(n)
    elif cmd == "dups":
        seen, dups = set(), []
        for r in ok:
            k = (r["endpoint"], pid(r), tuple(r.get("types", [])), r["time_ns"])
            if k in seen:
                dups.append(k)
            seen.add(k)
        for k in dups:
            print("twice:", k)
        return 1 if dups else 0
    elif cmd == "files":
        for r in ok:
            if "file" in r:
                print(r["file"])
    elif cmd == "labels":
        for r in ok:
            print(json.dumps(r.get("labels", {}), sort_keys=True))
    elif cmd == "field":
        for r in ok:
            print(r.get(args[0]))
    else:
        print("unknown command", cmd, file=sys.stderr)
        return 2
    return 0

sys.exit(main())
