#!/bin/sh
# CPU half of `make bench` (issue 2, "Benchmark"): the slowdown of a
# CPU-bound target under `rsprof record` and `perf record -e cpu-clock` at
# 99 and 999 Hz, as ratios to an unprofiled run (runs alternate, REPS
# repetitions, medians); rsprof's and perf's own start+stop cost; and the
# time of `rsprof report` against `perf report --sort srcline` on
# recordings of the same run (a C and a Rust target).
#
#   bench/cpu.sh [OUT]        OUT: the build directory (default ./out)
#   REPS=5 ROUNDS=600 RUST_SECS=3 bench/cpu.sh
set -u

OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
T=$OUT/targets
REPS=${REPS:-5}
ROUNDS=${ROUNDS:-600}
RUST_SECS=${RUST_SECS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

for f in "$RSPROF" "$T/cpu_bench"; do
	[ -x "$f" ] || { echo "bench/cpu.sh: $f missing: run make all targets" >&2; exit 1; }
done
have_perf_tool=1
perf --version >/dev/null 2>&1 || have_perf_tool=0

now_ms() {
	echo $(( $(date +%s%N) / 1000000 ))
}

# run CONFIG REP: one run, appends "config wall work cpu" to $W/runs
run() {
	cfg=$1
	rm -f "$W/r.db" "$W/p.data"
	t0=$(now_ms)
	case $cfg in
	base)	"$T/cpu_bench" "$ROUNDS" >"$W/out" ;;
	rs*)	"$RSPROF" record -q --no-heap -F "${cfg#rs}" -o "$W/r.db" -- \
			"$T/cpu_bench" "$ROUNDS" >"$W/out" ;;
	perf*)	perf record -q -e cpu-clock -F "${cfg#perf}" -o "$W/p.data" -- \
			"$T/cpu_bench" "$ROUNDS" >"$W/out" 2>/dev/null ;;
	esac
	rc=$?
	t1=$(now_ms)
	if [ $rc != 0 ]; then
		echo "bench/cpu.sh: $cfg run failed (exit $rc)" >&2
		return 1
	fi
	set -- $(cat "$W/out")
	echo "$cfg $((t1 - t0)) $2 $4" >>"$W/runs"
	case $cfg in
	rs999)	cp "$W/r.db" "$W/c999.db" ;;
	perf999) cp "$W/p.data" "$W/c999.data" ;;
	esac
}

configs="base rs99 rs999"
[ $have_perf_tool = 1 ] && configs="base rs99 perf99 rs999 perf999"

echo "# CPU benchmark: $T/cpu_bench $ROUNDS, $REPS repetitions, runs alternated, medians"
: >"$W/runs"
i=1
while [ $i -le "$REPS" ]; do
	for c in $configs; do
		run "$c" || exit 1
	done
	i=$((i + 1))
done

# median CONFIG FIELD (2 wall, 3 work, 4 cpu, 5 wall - work)
median() {
	awk -v c="$1" -v f="$2" '$1 == c { print (f == 5 ? $2 - $3 : $f) }' "$W/runs" |
		sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

bw=$(median base 3)
bc=$(median base 4)
bo=$(median base 5)
printf '\n%-22s %10s %10s %9s %9s %13s\n' "run" "work ms" "cpu ms" "work x" "cpu x" "start+stop ms"
for c in $configs; do
	w=$(median "$c" 3)
	cpu=$(median "$c" 4)
	o=$(median "$c" 5)
	case $c in
	base)	name="unprofiled" ;;
	rs*)	name="rsprof record -F ${c#rs}" ;;
	perf*)	name="perf record -F ${c#perf}" ;;
	esac
	awk -v n="$name" -v w="$w" -v c="$cpu" -v bw="$bw" -v bc="$bc" -v o="$o" -v bo="$bo" \
		'BEGIN { printf "%-22s %10.0f %10.0f %9.3f %9.3f %13.0f\n", n, w, c, w / bw, c / bc, o - bo }'
done

# time CMD...: median wall ms of 3 runs, or "n/a" when it fails
time_cmd() {
	: >"$W/times"
	for k in 1 2 3; do
		t0=$(now_ms)
		if ! "$@" >/dev/null 2>&1; then
			echo n/a
			return
		fi
		t1=$(now_ms)
		echo $((t1 - t0)) >>"$W/times"
	done
	sort -n "$W/times" | sed -n 2p
}

report_row() {	# label rsprof-file perf-file
	r=$(time_cmd "$RSPROF" report "$2")
	p=n/a
	[ $have_perf_tool = 1 ] && p=$(time_cmd perf report --sort srcline --stdio -i "$3")
	x=n/a
	case "$r$p" in *n/a*) ;; *) x=$(awk -v r="$r" -v p="$p" 'BEGIN {
		printf "%.1f", p / (r > 0 ? r : 1) }') ;; esac
	printf '%-22s %14s %16s %10s\n' "$1" "$r" "$p" "$x"
}

printf '\n%-22s %14s %16s %10s\n' "report of 999 Hz run" "rsprof report" "perf srcline" "speed-up"
report_row "C (cpu_bench)" "$W/c999.db" "$W/c999.data"
if [ -x "$T/rust_inline" ]; then
	"$RSPROF" record -q --no-heap -F 999 -o "$W/rust.db" -- "$T/rust_inline" "$RUST_SECS" \
		>/dev/null 2>&1
	[ $have_perf_tool = 1 ] && perf record -q -e cpu-clock -F 999 -o "$W/rust.data" -- \
		"$T/rust_inline" "$RUST_SECS" >/dev/null 2>&1
	report_row "Rust (rust_inline)" "$W/rust.db" "$W/rust.data"
fi
echo "(milliseconds, median of 3; speed-up = perf time / rsprof time)"
