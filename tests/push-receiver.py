#!/usr/bin/env python3
# A loopback profile store for the push tests (tests/t9100-push-*.sh): each
# endpoint as its public source defines it, checking what arrives.
#
#   POST /ingest                        Grafana Pyroscope's ingest handler
#        (pkg/ingester/pyroscope/ingest_handler.go, pkg/og/convert/pprof):
#        query name=APP{k=v,...}, from, until (Unix seconds), spyName,
#        sampleRate; multipart/form-data with the pprof as part "profile",
#        optional "sample_type_config" (JSON), no "prev_profile".
#   POST /push.v1.PusherService/Push    Pyroscope's Connect API (unary,
#        application/proto): push.v1.PushRequest {1: series {1: labels
#        {1: name, 2: value}, 2: samples {1: raw_profile, 2: ID}}}
#        (api/push/v1/push.proto); __name__ and service_name required.
#   POST /api/profiles/writeraw         Parca's gRPC-gateway for
#        ProfileStoreService.WriteRaw (proto/parca/profilestore/v1alpha1/
#        profilestore.proto): JSON {series: [{labels: {labels: [{name,
#        value}]}, samples: [{rawProfile: base64}]}], normalized}.
#   POST /v1development/profiles        OTLP/HTTP profiles,
#        application/x-protobuf: ExportProfilesServiceRequest of
#        opentelemetry-proto v1.9.0 (field numbers in otlp_decode()).
#
# Every pprof is checked with Parca's rules (parcacol.ValidatePprofProfile:
# string_table[0] == "", ids 1..N in table order, one value per sample type,
# location ids non-zero and in range) and saved as OUTDIR/N.pb.gz, for the
# test to read with `go tool pprof -raw`. One JSON line per profile goes to
# OUTDIR/log.jsonl: the endpoint, labels, time, sample types and their
# totals; a request that breaks a rule is answered 400 and logged as
# {"error": ...}.
#
# Faults: --fail N answers the first N requests with --fail-status (default
# 500); --status S answers every request with S. --port P listens there
# (default: any; the port is written to OUTDIR/port). --tls CERT KEY: HTTPS.
import argparse, base64, email.parser, gzip, json, os, re, ssl, sys, threading, urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

# ---- protobuf wire format -------------------------------------------------

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if not c & 0x80:
            return v, i

def fields(b):
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0:
            v, i = varint(b, i)
        elif t == 1:
            v = int.from_bytes(b[i:i + 8], "little"); i += 8
        elif t == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
            if i > len(b):
                raise ValueError("truncated field %d" % f)
        elif t == 5:
            v = int.from_bytes(b[i:i + 4], "little"); i += 4
        else:
            raise ValueError("wire type %d" % t)
        out.append((f, v))
    return out

def packed(v):
    if isinstance(v, int):
        return [v]
    i, out = 0, []
    while i < len(v):
        x, i = varint(v, i); out.append(x)
    return out

def get(fs, n, default=0):
    for f, v in fs:
        if f == n:
            return v
    return default

def rep(fs, n):
    return [v for f, v in fs if f == n]

def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v

# ---- pprof (google/pprof proto/profile.proto) ------------------------------

class Bad(Exception):
    pass

def pprof_check(data):
    """Parca's validation rules; returns sample types, totals, functions."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    p = fields(data)
    strings = [v.decode("utf-8") for v in rep(p, 6)]
    if strings and strings[0] != "":
        raise Bad("first item in string table is expected to be empty string")
    ns = len(strings)
    st = [fields(v) for v in rep(p, 1)]
    types = [strings[get(t, 1)] + "/" + strings[get(t, 2)] for t in st]
    mappings = [fields(v) for v in rep(p, 3)]
    for i, m in enumerate(mappings):
        if get(m, 1) != i + 1:
            raise Bad("mapping id is not sequential")
        if get(m, 5) > ns or get(m, 6) > ns:
            raise Bad("mapping has an invalid string index")
    functions = [fields(v) for v in rep(p, 5)]
    for i, f in enumerate(functions):
        if get(f, 1) != i + 1:
            raise Bad("function id is not sequential")
        if max(get(f, 2), get(f, 3), get(f, 4)) > ns:
            raise Bad("function has an invalid string index")
    locations = [fields(v) for v in rep(p, 4)]
    for i, l in enumerate(locations):
        if get(l, 1) != i + 1:
            raise Bad("location id is not sequential")
        if get(l, 2) > len(mappings):
            raise Bad("location has an invalid mapping id")
        for ln in rep(l, 4):
            if get(fields(ln), 1) > len(functions):
                raise Bad("location has an invalid function id")
    totals = [0] * len(types)
    leaf = {}
    for s in rep(p, 2):
        s = fields(s)
        vals = [signed(x) for x in packed(get(s, 2, b""))]
        if len(vals) != len(types):
            raise Bad("mismatch: sample has %d values vs. %d types" % (len(vals), len(types)))
        ids = packed(get(s, 1, b""))
        for l in ids:
            if l == 0:
                raise Bad("location ids of stacktraces must be non-zero")
            if l > len(locations):
                raise Bad("sample location is out of range")
        for j, v in enumerate(vals):
            totals[j] += v
        # the leaf's innermost line, as report ranks a sample or an allocation
        if ids and vals:
            lines = rep(locations[ids[0] - 1], 4)
            if lines:
                ln = fields(lines[0])
                f = functions[get(ln, 1) - 1] if get(ln, 1) else []
                k = "%s:%d" % (strings[get(f, 2)] if f else "?", get(ln, 2))
                leaf[k] = leaf.get(k, 0) + vals[0]
    names = sorted({strings[get(f, 2)] for f in functions})
    return {"types": types, "totals": totals, "functions": names, "leaf": leaf,
            "time_ns": get(p, 9), "duration_ns": get(p, 10)}

# ---- OTLP profiles (opentelemetry-proto v1.9.0) ------------------------------

def any_value(b):
    f = fields(b)
    for n, v in f:
        if n == 1: return v.decode()
        if n == 3: return signed(v)
        if n == 2: return bool(v)
    return None

def otlp_decode(data):
    """ExportProfilesServiceRequest: 1 resource_profiles, 2 dictionary."""
    req = fields(data)
    d = fields(get(req, 2, b""))
    # ProfilesDictionary: 1 mapping, 2 location, 3 function, 4 link, 5 string,
    # 6 attribute, 7 stack tables; entry 0 of each is the zero value
    strings = [v.decode("utf-8") for v in rep(d, 5)]
    tables = {n: [fields(v) for v in rep(d, n)] for n in (1, 2, 3, 4, 6, 7)}
    if not strings or strings[0] != "":
        raise Bad("string_table[0] must be \"\"")
    for n, name in ((1, "mapping"), (2, "location"), (3, "function"), (4, "link"),
                    (6, "attribute"), (7, "stack")):
        if not tables[n]:
            raise Bad("%s_table[0] must be present" % name)
        if tables[n][0]:
            raise Bad("%s_table[0] must be the zero value" % name)
    funcs = tables[3]
    for f in funcs:
        if max(get(f, 1), get(f, 2), get(f, 3)) >= len(strings):
            raise Bad("function string index out of range")
    locs = tables[2]
    for l in locs:
        if get(l, 1) >= len(tables[1]):
            raise Bad("location mapping index out of range")
        for ln in rep(l, 3):
            if get(fields(ln), 1) >= len(funcs):
                raise Bad("line function index out of range")
    stacks = tables[7]
    out = []
    for rp in rep(req, 1):
        rp = fields(rp)
        res = fields(get(rp, 1, b""))
        attrs = {}
        for kv in rep(res, 1):
            kv = fields(kv)
            attrs[get(kv, 1, b"").decode()] = any_value(get(kv, 2, b""))
        for sp in rep(rp, 2):
            for prof in rep(fields(sp), 2):
                prof = fields(prof)
                vt = fields(get(prof, 1, b""))
                typ = strings[get(vt, 1)] + "/" + strings[get(vt, 2)]
                total = 0
                leaf = {}
                for s in rep(prof, 2):
                    s = fields(s)
                    si = get(s, 1)
                    if si <= 0 or si >= len(stacks):
                        raise Bad("sample stack index out of range")
                    lis = packed(get(stacks[si], 1, b""))
                    for li in lis:
                        if li <= 0 or li >= len(locs):
                            raise Bad("stack location index out of range")
                    vals = [signed(x) for x in packed(get(s, 2, b""))]
                    if len(vals) != 1:
                        raise Bad("a sample has one value per profile here")
                    total += vals[0]
                    lines = rep(locs[lis[0]], 3) if lis else []
                    if lines:
                        ln = fields(lines[0])
                        f = funcs[get(ln, 1)]
                        k = "%s:%d" % (strings[get(f, 1)], get(ln, 2))
                        leaf[k] = leaf.get(k, 0) + vals[0]
                out.append({"attrs": attrs, "type": typ, "total": total, "leaf": leaf,
                            "time_ns": get(prof, 3), "duration_ns": get(prof, 4)})
    names = sorted({strings[get(f, 1)] for f in funcs[1:]})
    return out, names

# ---- the server ---------------------------------------------------------------

LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")

class State:
    lock = threading.Lock()
    n = 0
    requests = 0

def log(rec):
    with State.lock:
        with open(os.path.join(ARGS.outdir, "log.jsonl"), "a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")

def save_pprof(data):
    with State.lock:
        State.n += 1
        name = os.path.join(ARGS.outdir, "%d.pb.gz" % State.n)
    with open(name, "wb") as f:
        f.write(data if data[:2] == b"\x1f\x8b" else gzip.compress(data))
    return name

def record_pprof(endpoint, labels, data, extra=None):
    info = pprof_check(data)
    rec = {"endpoint": endpoint, "labels": labels, "file": save_pprof(data)}
    rec.update(info)
    if extra:
        rec.update(extra)
    log(rec)

def parse_name(name):
    """Pyroscope's labelset.Parse: APP{k=v,k=v}."""
    m = re.fullmatch(r"([^{}]+)\{(.*)\}", name) or re.fullmatch(r"([^{}]+)", name)
    if not m:
        raise Bad("name: %r is not APP{k=v,...}" % name)
    labels = {"service_name": m.group(1)}
    if m.lastindex and m.lastindex > 1 and m.group(2):
        for kv in m.group(2).split(","):
            k, sep, v = kv.partition("=")
            if not sep or not LABEL_NAME.match(k):
                raise Bad("name: bad label %r" % kv)
            labels[k] = v
    return labels

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, status, body=b"", ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        with State.lock:
            State.requests += 1
            nreq = State.requests
        if ARGS.status:
            return self.reply(ARGS.status, b'{"message":"refused by the test receiver"}')
        if nreq <= ARGS.fail:
            return self.reply(ARGS.fail_status, b'{"message":"failing on purpose"}')
        url = urllib.parse.urlsplit(self.path)
        auth = self.headers.get("Authorization")
        tenant = self.headers.get("X-Scope-OrgID")
        extra = {"auth": auth, "tenant": tenant}
        try:
            if url.path == "/ingest":
                self.ingest(url, body, extra)
                return self.reply(200, b"")
            if url.path == "/push.v1.PusherService/Push":
                self.connect(body, extra)
                return self.reply(200, b"", "application/proto")
            if url.path == "/api/profiles/writeraw":
                self.parca(body, extra)
                return self.reply(200, b"{}")
            if url.path == "/v1development/profiles":
                self.otlp(body, extra)
                return self.reply(200, b"", "application/x-protobuf")
            return self.reply(404, b'{"message":"no such endpoint"}')
        except (Bad, ValueError, KeyError, UnicodeDecodeError) as e:
            log({"endpoint": url.path, "error": str(e)})
            return self.reply(400, json.dumps({"message": str(e)}).encode())

    def ingest(self, url, body, extra):
        q = urllib.parse.parse_qs(url.query, strict_parsing=True)
        for k in ("name", "from", "until"):
            if k not in q:
                raise Bad("query: %s missing" % k)
        labels = parse_name(q["name"][0])
        frm, until = int(q["from"][0]), int(q["until"][0])
        if until < frm:
            raise Bad("until before from")
        ctype = self.headers.get("Content-Type", "")
        if "multipart/form-data" not in ctype or "format" in q:
            raise Bad("expected a multipart form and no format parameter")
        msg = email.parser.BytesParser().parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        parts = {}
        for part in msg.get_payload():
            parts[part.get_param("name", header="content-disposition")] = \
                part.get_payload(decode=True)
        if "prev_profile" in parts:
            raise Bad("prev_profile: unsupported client version")
        if "profile" not in parts:
            raise Bad("no profile part")
        cfg = json.loads(parts["sample_type_config"]) if "sample_type_config" in parts else None
        extra.update({"from": frm, "until": until, "spyName": q.get("spyName", [""])[0],
                      "sampleRate": q.get("sampleRate", [""])[0], "sample_type_config": cfg})
        record_pprof("ingest", labels, parts["profile"], extra)

    def connect(self, body, extra):
        if self.headers.get("Content-Type") != "application/proto":
            raise Bad("Content-Type must be application/proto")
        if self.headers.get("Connect-Protocol-Version") != "1":
            raise Bad("Connect-Protocol-Version: 1 missing")
        for series in rep(fields(body), 1):
            series = fields(series)
            labels = {}
            for lp in rep(series, 1):
                lp = fields(lp)
                labels[get(lp, 1, b"").decode()] = get(lp, 2, b"").decode()
            if "__name__" not in labels or "service_name" not in labels:
                raise Bad("labels need __name__ and service_name")
            for s in rep(series, 2):
                s = fields(s)
                e = dict(extra, id=get(s, 2, b"").decode())
                record_pprof("connect", labels, get(s, 1, b""), e)

    def parca(self, body, extra):
        req = json.loads(body)
        for series in req["series"]:
            labels = {}
            for l in series["labels"]["labels"]:
                if not LABEL_NAME.match(l["name"]):
                    raise Bad("label name %r" % l["name"])
                labels[l["name"]] = l["value"]
            if "__name__" not in labels:
                raise Bad("no __name__ label")
            for s in series["samples"]:
                record_pprof("parca", labels, base64.b64decode(s["rawProfile"], validate=True),
                             dict(extra, normalized=req.get("normalized", False)))

    def otlp(self, body, extra):
        if self.headers.get("Content-Type") != "application/x-protobuf":
            raise Bad("Content-Type must be application/x-protobuf")
        profiles, names = otlp_decode(body)
        for p in profiles:
            rec = {"endpoint": "otlp", "labels": {k: str(v) for k, v in p["attrs"].items()},
                   "types": [p["type"]], "totals": [p["total"]], "functions": names,
                   "leaf": p["leaf"],
                   "time_ns": p["time_ns"], "duration_ns": p["duration_ns"]}
            rec.update(extra)
            log(rec)

def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--fail", type=int, default=0)
    ap.add_argument("--fail-status", type=int, default=500)
    ap.add_argument("--status", type=int, default=0)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ARGS = ap.parse_args()
    os.makedirs(ARGS.outdir, exist_ok=True)
    srv = HTTPServer(("127.0.0.1", ARGS.port), Handler)
    if ARGS.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*ARGS.tls)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(os.path.join(ARGS.outdir, "port.tmp"), "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(os.path.join(ARGS.outdir, "port.tmp"), os.path.join(ARGS.outdir, "port"))
    srv.serve_forever()

if __name__ == "__main__":
    main()
