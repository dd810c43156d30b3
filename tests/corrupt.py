#!/usr/bin/env python3
"""Corrupted copies of a profile, for tests/t7500-corrupt-profiles.sh and
the fuzz corpus: tables dropped, a table replaced by a (recursive) view,
columns holding NULL, text, blobs and extreme numbers, hostile meta
values, truncations, byte flips, a damaged WAL.

    corrupt.py BASE.db OUTDIR [--seed N] [--flips N] [--sample P]

Every column gets NULL and INT64_MAX; the other values (text, blob,
INT64_MIN, a huge real, -1, '') each with probability P (default 0.35).
Deterministic for a given seed. Prints the names written, one a line.
"""
import os
import random
import shutil
import sqlite3
import sys

TABLES = ["meta", "checkpoints", "symbols", "cpu_samples", "heap_events",
          "symbol_frames", "stacks", "stack_frames", "cpu_stacks", "map",
          "alloc_slices", "alloc_chunks", "alloc_events", "cpu_totals",
          "heap_totals", "totals_state"]
VALUES = [("null", "NULL"), ("text", "'x\x1b]0;t\x07'"), ("blob", "x'00ff80'"),
          ("max", "9223372036854775807"), ("min", "-9223372036854775808"),
          ("real", "1e308"), ("neg", "-1"), ("empty", "''")]
META = [("version", "abc"), ("version", "999"), ("version", "-1"),
        ("version", "9223372036854775808"), ("cpu_freq_hz", "-5"),
        ("cpu_freq_hz", "99999999999999999999"), ("heap_sample", "-1"),
        ("heap_sample", "4294967297"), ("checkpoint_interval_ms", "0"),
        ("duration_ms", "-9223372036854775808"), ("start_time", "\xff\xfe"),
        ("unknown_frees", "18446744073709551615"),
        ("unknown_free_bytes", "-9223372036854775808")]


def columns(conn, table):
    return [r[1] for r in conn.execute("PRAGMA table_info(%s)" % table)]


def tables(conn):
    return [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")]


def copy(base, out, name):
    path = os.path.join(out, name + ".db")
    shutil.copyfile(base, path)
    return path


def edit(base, out, name, sql):
    path = copy(base, out, name)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.executescript(sql)
    conn.close()
    return name


def main():
    base, out = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
    flips = int(sys.argv[sys.argv.index("--flips") + 1]) if "--flips" in sys.argv else 8
    sample = float(sys.argv[sys.argv.index("--sample") + 1]) if "--sample" in sys.argv else 0.35
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    conn = sqlite3.connect(base)
    have = tables(conn)
    cols = {t: columns(conn, t) for t in have}
    conn.close()
    names = []

    for t in TABLES:
        if t in have:
            names.append(edit(base, out, "drop-" + t, "DROP TABLE %s;" % t))
    for t in ("meta", "checkpoints", "symbols", "cpu_samples", "heap_totals",
              "totals_state"):
        if t in have:
            c = ", ".join(cols[t])
            names.append(edit(base, out, "view-" + t,
                "PRAGMA legacy_alter_table = 1; ALTER TABLE %s RENAME TO old_%s;"
                "CREATE VIEW %s AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL"
                " SELECT n + 1 FROM r) SELECT o.* FROM r, old_%s o;" % (t, t, t, t)))
    for t in have:
        for c in cols[t]:
            for vname, v in VALUES:
                if vname not in ("null", "max") and rnd.random() >= sample:
                    continue
                # the table made again without its constraints, then the value
                names.append(edit(base, out, "val-%s-%s-%s" % (t, c, vname),
                    "CREATE TABLE tmp_ AS SELECT * FROM %s; DROP TABLE %s;"
                    "ALTER TABLE tmp_ RENAME TO %s; UPDATE %s SET %s = %s;"
                    % (t, t, t, t, c, v)))
    for i, (k, v) in enumerate(META):
        names.append(edit(base, out, "meta-%d-%s" % (i, k),
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('%s', '%s');"
            % (k, v.replace("'", "''"))))
    names.append(edit(base, out, "huge-text",
        "UPDATE symbols SET function = printf('%.*c', 20000000, 'x') "
        "WHERE rowid = (SELECT MIN(rowid) FROM symbols);"))
    names.append(edit(base, out, "dup-rows",
        "INSERT INTO cpu_samples SELECT * FROM cpu_samples;"
        "INSERT INTO heap_events SELECT * FROM heap_events;"))
    names.append(edit(base, out, "no-indexes",
        "DROP INDEX IF EXISTS idx_cpu_addr; DROP INDEX IF EXISTS idx_heap_addr;"))
    names.append(edit(base, out, "trigger-view",
        "CREATE VIEW extra AS SELECT * FROM meta;"
        "CREATE TABLE t (a); CREATE TRIGGER tr AFTER INSERT ON t BEGIN"
        " DELETE FROM meta; END;"))
    names.append(edit(base, out, "neg-timestamps",
        "UPDATE checkpoints SET timestamp_ms = -timestamp_ms * 1000000000000;"))
    names.append(edit(base, out, "huge-counts",
        "UPDATE cpu_samples SET count = 9223372036854775807;"
        "UPDATE heap_events SET alloc_bytes = 9223372036854775807,"
        " free_bytes = -9223372036854775808, alloc_count = 9223372036854775807;"
        "UPDATE checkpoints SET heap_live_bytes = 9223372036854775807,"
        " cpu_total = -1, lost_samples = 9223372036854775807;"))
    if "totals_state" in have:
        # the totals of schema 3: extreme sums and peaks, a state that claims
        # more (or less) than the file holds, blocks out of place
        names.append(edit(base, out, "totals-huge",
            "UPDATE cpu_totals SET count = 9223372036854775807;"
            "UPDATE heap_totals SET alloc_bytes = 9223372036854775807,"
            " free_bytes = -9223372036854775808, alloc_count = 9223372036854775807,"
            " free_count = -1, peak = 9223372036854775807;"))
        names.append(edit(base, out, "totals-min",
            "UPDATE heap_totals SET alloc_bytes = -9223372036854775808,"
            " free_bytes = 9223372036854775807, peak = -9223372036854775808;"))
        for i, sql in enumerate([
                "UPDATE totals_state SET through = 9223372036854775807",
                "UPDATE totals_state SET through = -1, cpu_rowid = -5",
                "UPDATE totals_state SET span = 0",
                "UPDATE totals_state SET span = 1",
                "UPDATE totals_state SET span = 9223372036854775807",
                "UPDATE totals_state SET folded0 = 9223372036854775807,"
                " folded1 = -9223372036854775808",
                "UPDATE totals_state SET cpu_rowid = 9223372036854775807,"
                " heap_rowid = 9223372036854775807",
                "INSERT INTO totals_state SELECT * FROM totals_state",
                "DELETE FROM totals_state",
                "UPDATE OR REPLACE cpu_totals SET level = 9, block = -3",
                "UPDATE heap_totals SET block = block + 1000000000000",
                "UPDATE OR REPLACE heap_totals SET level = 2147483648",
                "UPDATE checkpoints SET merged = 9223372036854775807",
                "UPDATE checkpoints SET merged = -1",
                "UPDATE checkpoints SET merged = 0"]):
            names.append(edit(base, out, "totals-%d" % i, sql + ";"))
    if "stacks" in have:
        names.append(edit(base, out, "deep-stack",
            "UPDATE stacks SET depth = 2147483647;"
            "WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM r WHERE n < 5000)"
            " INSERT OR IGNORE INTO stack_frames SELECT (SELECT MIN(id) FROM stacks), n,"
            " (SELECT MIN(addr) FROM symbols) FROM r;"))

    data = open(base, "rb").read()
    size = len(data)
    for k in range(1, 8):
        name = "trunc-%d" % k
        open(os.path.join(out, name + ".db"), "wb").write(data[:size * k // 8])
        names.append(name)
    for i in range(flips):
        buf = bytearray(data)
        for _ in range(rnd.randint(1, 32)):
            pos = rnd.randrange(size)
            buf[pos] ^= 1 << rnd.randrange(8)
        name = "flip-%d" % i
        open(os.path.join(out, name + ".db"), "wb").write(bytes(buf))
        names.append(name)

    # A WAL holding the last changes, then damaged.
    def with_wal(name, damage):
        path = copy(base, out, name)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.execute("INSERT INTO checkpoints (timestamp_ms) VALUES (999999)")
        conn.execute("UPDATE meta SET value = 'w' WHERE key = 'process_name'")
        shutil.copyfile(path + "-wal", path + ".keep")
        conn.close()
        os.replace(path + ".keep", path + "-wal")
        if os.path.exists(path + "-shm"):
            os.unlink(path + "-shm")
        wal = bytearray(open(path + "-wal", "rb").read())
        damage(wal)
        open(path + "-wal", "wb").write(bytes(wal))
        names.append(name)

    def flip_wal(w):
        for _ in range(16):
            pos = rnd.randrange(len(w))
            w[pos] ^= 0xff
    with_wal("wal-ok", lambda w: None)
    with_wal("wal-flip", flip_wal)
    with_wal("wal-trunc", lambda w: w.__delitem__(slice(len(w) // 2, None)))
    with_wal("wal-header", lambda w: w.__setitem__(slice(0, 32), b"\xff" * 32))
    for n in names:
        print(n)


if __name__ == "__main__":
    main()
