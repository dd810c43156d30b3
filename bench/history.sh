#!/bin/sh
# Allocation history benchmark (issue 14, seed 001), not a test: 10 million
# allocations (and their frees) from a simulated allocator that reuses its
# blocks LIFO, as malloc's caches do (200,000 slots of 64 bytes), written
# through the history writer (util/db/write/history.c) into a version-3
# profile, then half-axis queries at random addresses and moments: the
# owner of an address (n=1, backward), the next 10 allocations (forward),
# and an address never allocated (every slice walked).
#   bench/history.sh [OUT [EVENTS]]     OUT: the build directory (default ./out)
# Goals: a query under 10 ms; the file size per million allocations stated.
# Part 2 (below) records through the in-process tracker.
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
[ -n "${SKIP_REC:-}" ] && exit 0

# Part 2: through the in-process tracker (record --alloc-history). A steady
# allocator (tests/targets/heap_paced) at several rates for RATE_S seconds
# each: what the recorder kept and dropped, its wall time (the end waits
# for the queue to be written) and its peak RSS. Then REC_EVENTS events at
# REC_RATE, and the owner queries on that file.
#   REC_EVENTS=10000000 REC_RATE=250000 RATE_S=3 bench/history.sh
RSPROF=$OUT/rsprof
PACED=$OUT/targets/heap_paced
REC_EVENTS=${REC_EVENTS:-10000000}
REC_RATE=${REC_RATE:-250000}
RATE_S=${RATE_S:-3}
if [ ! -x "$RSPROF" ] || [ ! -x "$PACED" ]; then
	echo "bench/history.sh: $RSPROF or $PACED missing: run make all targets" >&2
	exit 1
fi
rec=$OUT/bench/history-rec.db
# rec EVENTS RATE: one recording; "events kept dropped wall_s rss_kib bytes"
rec() {
	rm -f "$rec" "$rec-wal" "$rec-shm"
	/usr/bin/time -f '%e %M' -o "$OUT/bench/history.time" "$RSPROF" record -q --no-cpu \
		--alloc-history -o "$rec" -- "$PACED" "$1" "$2" >/dev/null 2>&1 || return 1
	echo "$1 $(sqlite3 "$rec" "SELECT value FROM meta WHERE key = 'alloc_history_events'") \
$(sqlite3 "$rec" "SELECT value FROM meta WHERE key = 'alloc_history_dropped'") \
$(cat "$OUT/bench/history.time") $(stat -c %s "$rec")"
}
echo
echo "== through the tracker: $RATE_S s at each rate (load: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%12s %12s %12s %9s %9s %10s\n' "events/s" "kept" "dropped" "wall s" "RSS MiB" "MiB/M kept"
for rate in 100000 250000 500000 1000000 2000000; do
	r=$(rec $((rate * RATE_S)) $rate) || { echo "bench/history.sh: recording failed" >&2; exit 1; }
	echo "$r" | awk -v rate=$rate '{ printf "%12d %12d %12d %9.1f %9.0f %10.1f\n",
		rate, $2, $3, $4, $5 / 1024, $2 ? $6 / 1048576 / ($2 / 1e6) : 0 }'
done
echo
echo "== $REC_EVENTS events at $REC_RATE a second through the tracker (load: $(cut -d' ' -f1-3 /proc/loadavg))"
r=$(rec "$REC_EVENTS" "$REC_RATE") || { echo "bench/history.sh: recording failed" >&2; exit 1; }
echo "$r" | awk '{ printf "kept %d, dropped %d; recording %.1f s (wall), rsprof peak RSS %.0f MiB\n" \
	"file: %.1f MiB, %.1f MiB per million events kept (%.1f bytes per allocation kept)\n",
	$2, $3, $4, $5 / 1024, $6 / 1048576, $2 ? $6 / 1048576 / ($2 / 1e6) : 0,
	$2 ? $6 / ($2 / 2) : 0 }'
"$BIN" --query "$rec" 1000 || exit 1
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$rec" "$rec-wal" "$rec-shm" "$OUT/bench/history.time"
