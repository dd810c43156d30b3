#!/bin/sh
# Allocation history benchmark (issue 14, seed 001), not a test: 10 million
# allocations (and their frees) from a simulated allocator that reuses its
# blocks LIFO, as malloc's caches do (200,000 slots of 64 bytes), written
# through the history writer (util/db/history-write.c) into a version-3
# profile, then half-axis queries at random addresses and moments: the
# owner of an address (n=1, backward), the next 10 allocations (forward),
# and an address never allocated (every slice walked).
#   bench/history.sh [OUT [EVENTS]]     OUT: the build directory (default ./out)
# Goals: a query under 10 ms; the file size per million allocations stated.
set -u
OUT=${1:-$(pwd)/out}
EVENTS=${2:-10000000}
BIN=$OUT/tests/unit/bin/test-history
if [ ! -x "$BIN" ]; then
	make -s "$BIN" OUT="$OUT" || exit 1
fi
db=$OUT/bench/history.db
mkdir -p "$OUT/bench"
echo "== allocation history: $EVENTS allocations, then queries (load: $(cut -d' ' -f1-3 /proc/loadavg))"
"$BIN" --bench "$db" "$EVENTS" 1000 || exit 1
rm -f "$db" "$db-wal" "$db-shm"
