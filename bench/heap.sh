#!/bin/sh
# Heap half of `make bench` (issue 3, "Benchmark"): the cost per allocation
# (each with its free) of heap tracking, on an allocation-heavy C target
# (malloc/free) and a Rust one (__rust_alloc/__rust_dealloc). The targets
# time their own allocation loop, so start-up, attach and the writing of
# the file are not in the figures. Runs alternate with unprofiled baseline
# runs; medians of REPS runs.
#
#   rsprof record --no-cpu               full tracking
#   rsprof record --no-cpu --heap-sample 10
#   heaptrack                            LD_PRELOAD, no traps
#   memleak-bpfcc -p PID                 bcc: needs kernel headers; skipped
#                                        with a note when it cannot run
#
#   bench/heap.sh [OUT]        OUT: the build directory (default ./out)
#   REPS=3 N=300000 MEMLEAK_N=100000 bench/heap.sh
set -u

OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
T=$OUT/targets
REPS=${REPS:-3}
N=${N:-300000}
MEMLEAK_N=${MEMLEAK_N:-100000}
W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-heap.XXXXXX")
trap 'rm -rf "$W"' EXIT

for f in "$RSPROF" "$T/heap_bench" "$T/heap_bench_rs"; do
	[ -x "$f" ] || { echo "bench/heap.sh: $f missing: run make all targets" >&2; exit 1; }
done
if [ "$(id -u)" != 0 ]; then
	echo "bench/heap.sh: needs root (BPF uprobes); skipped"
	exit 0
fi

have_heaptrack=0
command -v heaptrack >/dev/null 2>&1 && have_heaptrack=1

# bcc's memleak compiles its program against kernel headers: the running
# kernel's, or Debian's 6.1 headers through BCC_KERNEL_SOURCE (issue 3).
MEMLEAK=$(command -v memleak-bpfcc 2>/dev/null || true)
memleak_note=
if [ -z "$MEMLEAK" ]; then
	memleak_note="memleak-bpfcc not installed (Debian bpfcc-tools)"
elif [ ! -d "/lib/modules/$(uname -r)/build" ] && [ -z "${BCC_KERNEL_SOURCE:-}" ]; then
	# Debian splits the headers in -common and -amd64; bcc wants one tree
	for d in /usr/src/linux-headers-*-amd64; do
		c=${d%-amd64}-common
		[ -d "$d" ] && [ -d "$c" ] || continue
		mkdir -p "$W/kheaders" && cp -rs "$c/." "$W/kheaders/" &&
			cp -rsf "$d/." "$W/kheaders/" && export BCC_KERNEL_SOURCE=$W/kheaders
	done
	[ -z "${BCC_KERNEL_SOURCE:-}" ] &&
		memleak_note="no kernel headers (apt-get install linux-headers-amd64)"
fi

# one TARGET CFG: one run; appends "target cfg ns_per_pair" to $W/runs
one() {
	tgt=$1 cfg=$2 n=$N
	rm -f "$W/r.db" "$W"/ht.* "$W/out"
	case $cfg in
	base)	"$T/$tgt" "$n" >"$W/out" ;;
	rsprof)	"$RSPROF" record -q --no-cpu -o "$W/r.db" -- "$T/$tgt" "$n" >"$W/out" ;;
	sample10) "$RSPROF" record -q --no-cpu --heap-sample 10 -o "$W/r.db" -- \
			"$T/$tgt" "$n" >"$W/out" ;;
	heaptrack) heaptrack -o "$W/ht" "$T/$tgt" "$n" >"$W/ht.log" 2>&1 &&
		grep -E '^[0-9.]+ [0-9]+$' "$W/ht.log" >"$W/out" ;;
	memleak) n=$MEMLEAK_N
		# the target waits 25 s before its loop: time for bcc to compile and attach
		"$T/$tgt" "$n" 25000 >"$W/out" &
		tp=$!
		# a background job ignores SIGINT: stop it with TERM, and bound it
		timeout 120 "$MEMLEAK" -p $tp 30 >"$W/ml.log" 2>&1 &
		mp=$!
		wait $tp
		kill -TERM $mp 2>/dev/null
		wait $mp 2>/dev/null
		if ! grep -q "Attaching to pid" "$W/ml.log" || grep -q "^Exception" "$W/ml.log"; then
			memleak_note="memleak-bpfcc failed: $(grep -m1 -i -E "cannot|error|exception" "$W/ml.log")"
			return 1
		fi ;;
	esac
	[ -s "$W/out" ] || { echo "bench/heap.sh: $tgt/$cfg run failed" >&2; return 1; }
	echo "$tgt $cfg $(cut -d' ' -f1 "$W/out")" >>"$W/runs"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

configs="base rsprof base sample10"
[ $have_heaptrack = 1 ] && configs="$configs base heaptrack"

echo "heap tracking: cost per allocation+free ($N pairs a run, $REPS runs, medians)"
for rep in $(seq "$REPS"); do
	for tgt in heap_bench heap_bench_rs; do
		for cfg in $configs; do
			one $tgt $cfg || exit 1
		done
	done
done
if [ -z "$memleak_note" ]; then
	for tgt in heap_bench heap_bench_rs; do
		one $tgt base && one $tgt memleak || break
	done
fi

printf '\n%-8s %-22s %12s %14s %10s\n' target tool "ns/pair" "overhead ns" "x memleak"
for tgt in heap_bench heap_bench_rs; do
	name=C
	[ $tgt = heap_bench_rs ] && name=Rust
	base=$(awk -v t=$tgt '$1 == t && $2 == "base" { print $3 }' "$W/runs" | median)
	ml=$(awk -v t=$tgt '$1 == t && $2 == "memleak" { print $3 }' "$W/runs" | median)
	for cfg in base rsprof sample10 heaptrack memleak; do
		v=$(awk -v t=$tgt -v c=$cfg '$1 == t && $2 == c { print $3 }' "$W/runs" | median)
		[ "$v" = - ] && continue
		case $cfg in
		base)	  label="none (baseline)" ;;
		rsprof)	  label="rsprof record" ;;
		sample10) label="rsprof --heap-sample 10" ;;
		heaptrack) label="heaptrack" ;;
		memleak)  label="bcc memleak" ;;
		esac
		over=$(awk -v v=$v -v b=$base 'BEGIN { printf "%.0f", v - b }')
		ratio=-
		[ "$ml" != - ] && [ $cfg != base ] && [ $cfg != memleak ] &&
			ratio=$(awk -v v=$v -v b=$base -v m=$ml \
				'BEGIN { if (v - b > 0) printf "%.1fx less", (m - b) / (v - b); else print "-" }')
		printf '%-8s %-22s %12s %14s %10s\n' $name "$label" "$v" "$over" "$ratio"
	done
done
[ -n "$memleak_note" ] && echo "bcc memleak: skipped: $memleak_note"
echo "traps per allocator call: allocation 2 (entry, return), free 1 (README.md, "Heap tracking")"
exit 0
