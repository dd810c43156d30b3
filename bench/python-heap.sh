#!/bin/sh
# Heap tracking on CPython (Debian's python3.11-dbg: DWARF, no frame
# pointers, -Og), running bench/python-heap.py: ~63 MB held in 400,000
# small strings, a dict of 200,000 entries and a list grown by append,
# until the end. Two allocator set-ups, both what users run:
#   pymalloc   the default: objects of <= 512 bytes come from pymalloc's
#              arenas (anonymous mmap), only larger blocks from malloc
#   malloc     PYTHONMALLOC=malloc: every object from malloc
# For each, ROUNDS rounds of, alternated:
#   unprofiled   python3.11-dbg bench/python-heap.py
#   rsprof       rsprof record --no-cpu -- python3.11-dbg ...
#   caller       rsprof record --no-cpu --heap-attribution=caller -- ...
#   heaptrack    heaptrack python3.11-dbg ...
# Prints the wall time of each (medians; tool start and the writing of its
# file included) and the process's peak RSS (VmHWM, printed by the
# workload), `uptime` before and after; then, for the last round's
# recordings, `rsprof report --heap -n 10` of both attributions, rsprof's
# live and peak heap, and heaptrack_print's totals and top peak backtraces
# (one frame past the allocation function, and the first frame past
# obmalloc.c: bench/heaptrack-sites.awk).
#
#   bench/python-heap.sh OUT_DIR
#   ROUNDS=3 MODES="pymalloc malloc" SCALE=1 PYTHON=python3.11-dbg bench/python-heap.sh OUT_DIR
#
# OUT_DIR keeps the profiles: rsprof-{first-user,caller}-MODE.db,
# heaptrack-MODE.zst. RSPROF: the rsprof binary (default: out/rsprof
# beside bench/). Needs root (uprobes), `make` and `make bench-deps`.
# Takes about 80 s on 2 vCPUs at load 2-4 with the defaults, 4 minutes at
# load 14.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
[ $# = 1 ] || { sed -n '2,/^set -eu/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2; }
mkdir -p "$1"
OUT_DIR=$(cd "$1" && pwd)
RSPROF=${RSPROF:-$here/../out/rsprof}
PYTHON=${PYTHON:-python3.11-dbg}
ROUNDS=${ROUNDS:-3}
MODES=${MODES:-pymalloc malloc}
SCALE=${SCALE:-1}
WORKLOAD=$here/python-heap.py

die() { echo "bench/python-heap.sh: $*" >&2; exit 1; }
[ -x "$RSPROF" ] || die "$RSPROF missing: run make (or set RSPROF)"
[ "$(id -u)" = 0 ] || die "needs root (BPF uprobes)"
command -v "$PYTHON" >/dev/null || die "$PYTHON missing: run make bench-deps"
command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null ||
	die "heaptrack missing: run make bench-deps"

W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-python.XXXXXX")
tool_pid=
cleanup() {
	[ -n "$tool_pid" ] && kill "$tool_pid" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run MODE CFG: one run; appends "mode cfg wall_ms peak_rss_kib" to $W/runs
run() {
	mode=$1 cfg=$2
	rm -f "$W/r.db" "$W"/ht.* "$W/out"
	if [ "$mode" = malloc ]; then
		export PYTHONMALLOC=malloc
	else
		unset PYTHONMALLOC
	fi
	set -- "$PYTHON" "$WORKLOAD" "$SCALE"
	t0=$(now_ms)
	case $cfg in
	unprofiled) "$@" >"$W/out" 2>"$W/err" & ;;
	rsprof)	"$RSPROF" record -q --no-cpu -o "$W/r.db" -- "$@" >"$W/out" 2>"$W/err" & ;;
	caller)	"$RSPROF" record -q --no-cpu --heap-attribution=caller -o "$W/r.db" -- \
			"$@" >"$W/out" 2>"$W/err" & ;;
	heaptrack) heaptrack -o "$W/ht" "$@" >"$W/out" 2>"$W/err" & ;;
	esac
	tool_pid=$!
	if ! wait $tool_pid; then
		cat "$W/err" >&2
		die "$mode/$cfg: the run failed"
	fi
	tool_pid=
	t1=$(now_ms)
	rss=$(sed -n 's/^python-heap: .* peak RSS \([0-9]*\) KiB$/\1/p' "$W/out")
	[ -n "$rss" ] || { cat "$W/out" "$W/err" >&2; die "$mode/$cfg: no result line"; }
	echo "$mode $cfg $((t1 - t0)) $rss" >>"$W/runs"
	case $cfg in
	rsprof) mv "$W/r.db" "$OUT_DIR/rsprof-first-user-$mode.db" ;;
	caller) mv "$W/r.db" "$OUT_DIR/rsprof-caller-$mode.db" ;;
	heaptrack)
		for f in "$W"/ht.*; do
			rm -f "$OUT_DIR/heaptrack-$mode".*
			mv "$f" "$OUT_DIR/heaptrack-$mode.${f##*/ht.}"
		done ;;
	esac
}

# the heap meta of profile $1: which tracker ran (heap_backend, once the
# launch tracker records it) and what it probed
heap_meta() {
	"$RSPROF" query --csv "$1" "SELECT key || '=' || value FROM meta
		WHERE key IN ('heap_backend', 'heap_probes', 'heap_attribution') ORDER BY key" 2>/dev/null |
		sed 1d | tr '\n' ' '
	# and how full its tables got: a full stack map drops events
	"$RSPROF" info "$1" | sed -n 's/^\(checkpoints\|heap dropped\|call stacks\|symbols\): */\1=/p' |
		tr '\n' ' '
}

# the 5 stacks holding the most live bytes in profile $1, as rsprof stored
# them (report --format=folded), the 6 frames nearest the allocator
folded_top() {
	"$RSPROF" report --heap --format=folded "$1" | awk '{
		v = $NF; sub(/ [^ ]*$/, "")
		n = split($0, f, ";"); s = f[n]
		for (i = n - 1; i >= 1 && i > n - 6; i--) s = f[i] ";" s
		if (i >= 1) s = "...;" s
		print v, s }' | sort -k1,1 -n -r | head -5 |
		awk '{ v = $1; sub(/^[^ ]* /, ""); printf "  %12s  %s\n", v, $0 }'
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}
col() { # col MODE CFG FIELD: the median of that field
	awk -v m="$1" -v c="$2" -v f="$3" '$1 == m && $2 == c { print $f }' "$W/runs" | median
}

echo "machine: $(nproc) CPUs, $(uname -r); $("$PYTHON" --version 2>&1) ($(readlink -f "$(command -v "$PYTHON")"))"
echo "rsprof: $("$RSPROF" --version 2>&1 | head -1); $(heaptrack --version 2>&1 | head -1)"
echo "workload: $PYTHON bench/python-heap.py $SCALE"
echo "uptime before: $(uptime)"
: >"$W/runs"
t_start=$(date +%s)
for round in $(seq "$ROUNDS"); do
	for mode in $MODES; do
		for cfg in unprofiled rsprof caller heaptrack; do
			run "$mode" "$cfg"
		done
	done
	echo "round $round of $ROUNDS done ($(($(date +%s) - t_start)) s)"
done
echo "uptime after:  $(uptime)"

echo
echo "wall time (ms) and peak RSS (VmHWM, MiB), medians of $ROUNDS runs"
printf '%-9s %-11s %9s %7s %9s\n' mode run "wall ms" ratio "peak RSS"
for mode in $MODES; do
	base=$(col "$mode" unprofiled 3)
	for cfg in unprofiled rsprof caller heaptrack; do
		w=$(col "$mode" "$cfg" 3)
		r=$(col "$mode" "$cfg" 4)
		awk -v m="$mode" -v c="$cfg" -v w="$w" -v b="$base" -v r="$r" \
			'BEGIN { printf "%-9s %-11s %9d %6.2fx %9.1f\n", m, c, w, w / b, r / 1024 }'
	done
done
echo "every run (mode run: wall ms ...):"
for mode in $MODES; do
	for cfg in unprofiled rsprof caller heaptrack; do
		echo "  $mode $cfg: $(awk -v m="$mode" -v c="$cfg" '$1 == m && $2 == c { printf "%s ", $3 }' "$W/runs")"
	done
done

for mode in $MODES; do
	echo
	echo "==== heap sites, PYTHONMALLOC $( [ "$mode" = malloc ] && echo malloc || echo 'unset (pymalloc)') ===="
	for attr in first-user caller; do
		echo
		echo "---- rsprof report --heap -n 10 (record --heap-attribution=$attr)"
		echo "(meta: $(heap_meta "$OUT_DIR/rsprof-$attr-$mode.db"))"
		"$RSPROF" report --heap -n 10 "$OUT_DIR/rsprof-$attr-$mode.db"
	done
	echo
	echo "---- rsprof's stored stacks (first-user): report --heap --format=folded, top 5"
	folded_top "$OUT_DIR/rsprof-first-user-$mode.db"
	echo
	echo "---- live and peak: the process against the trackers (last round)"
	rss=$(awk -v m="$mode" '$1 == m && $2 == "unprofiled" { v = $4 } END { print v }' "$W/runs")
	echo "  peak RSS, unprofiled:   $(awk -v r="$rss" 'BEGIN { printf "%.1f MiB", r / 1024 }')"
	"$RSPROF" info "$OUT_DIR/rsprof-first-user-$mode.db" |
		sed -n 's/^heap \(live\|peak\): *\(.*\)/  rsprof heap \1:\t\2/p'
	ht=$(ls "$OUT_DIR/heaptrack-$mode".*)
	heaptrack_print -f "$ht" -p 0 -a 0 -T 0 -l 0 2>/dev/null |
		sed -n 's/^\(calls to allocation functions\|peak heap memory consumption\|peak RSS\|total memory leaked\)/  heaptrack \1/p'
	echo "  (heaptrack's K/M/G are powers of 1000, rsprof's KiB/MiB powers of 1024)"
	echo
	echo "---- heaptrack_print -p 1 -a 0 -T 0 -n 5 -s 5, one line a backtrace"
	heaptrack_print -f "$ht" -p 1 -a 0 -T 0 -n 5 -s 5 2>/dev/null |
		awk -v skip='obmalloc[.]c' -f "$here/heaptrack-sites.awk"
done
echo
echo "profiles in $OUT_DIR: $(cd "$OUT_DIR" && ls ./*.db ./*.zst 2>/dev/null | tr '\n' ' ')"
echo "total time: $(($(date +%s) - t_start)) s"
