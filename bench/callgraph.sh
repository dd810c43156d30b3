#!/bin/sh
# Call stacks of code without frame pointers, against perf: Debian's
# python3.11 running a Python workload, attached for DUR seconds by `rsprof
# record -g` (the stack copies unwound through the CFI while recording),
# `rsprof record` without stacks (what -g adds) and `perf record
# --call-graph dwarf` (the copies written to perf.data, unwound by `perf
# report`), all at -F 999 with 8 KiB of stack a sample. Runs alternate,
# REPS rounds, medians: the profiler's own CPU time (user + system;
# /usr/bin/time: the kernel's copy of each sample's stack is charged to the
# program alike for both), the file, and the CPU time to read a call graph
# out of it (rsprof report -g, perf report --stdio -g). The machine is
# shared: the load is printed before and after.
# perf records with -B (no build-id collection): Debian 12's perf 6.1
# aborts in util/build-id.c on this kernel without it.
#
#   bench/callgraph.sh [OUT]        OUT: the build directory (default ./out)
#   REPS=3 DUR=15 bench/callgraph.sh
set -u

OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
PY=/usr/bin/python3.11
REPS=${REPS:-3}
DUR=${DUR:-15}
W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-cg.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$W"' EXIT

for f in "$RSPROF" "$PY" /usr/bin/time; do
	[ -x "$f" ] || { echo "bench/callgraph.sh: $f missing (make bench-deps)" >&2; exit 1; }
done
if ! perf --version >/dev/null 2>&1; then
	echo "bench/callgraph.sh: perf missing (linux-perf)" >&2
	exit 1
fi

cat >"$W/work.py" <<'PY'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def square(x):
    return x * x
def work():
    s = sum(map(square, range(2000)))
    s += sum(sorted(range(2000), key=lambda v: -v)[:10])
    s += sum(x * x for x in range(2000))
    return s
while True:
    fib(15) + work()
PY
"$PY" "$W/work.py" &
pid=$!
sleep 1

# run CONFIG: one recording; appends "config cpu_s bytes report_cpu_s" to $W/runs
run() {
	rm -f "$W/r.db" "$W/p.data"
	case $1 in
	rsprof-g) /usr/bin/time -f "%U %S" -o "$W/t" "$RSPROF" record -q -g -F 999 --no-heap \
			-p "$pid" -d "$DUR" -o "$W/r.db" ;;
	rsprof)	/usr/bin/time -f "%U %S" -o "$W/t" "$RSPROF" record -q -F 999 --no-heap \
			-p "$pid" -d "$DUR" -o "$W/r.db" ;;
	perf)	/usr/bin/time -f "%U %S" -o "$W/t" perf record -q -B --call-graph dwarf,8192 \
			-F 999 -e cpu-clock -p "$pid" -o "$W/p.data" -- sleep "$DUR" \
			>/dev/null 2>&1 ;;
	esac
	cpu=$(awk '{ print $1 + $2 }' "$W/t")
	case $1 in
	rsprof*) bytes=$(stat -c %s "$W/r.db")
		/usr/bin/time -f "%U %S" -o "$W/rt" "$RSPROF" report -g "$W/r.db" >/dev/null \
			2>&1 ;;
	perf)	bytes=$(stat -c %s "$W/p.data")
		/usr/bin/time -f "%U %S" -o "$W/rt" perf report -i "$W/p.data" --stdio -g \
			>/dev/null 2>&1 ;;
	esac
	rt=$(awk '{ print $1 + $2 }' "$W/rt")
	echo "$1 $cpu $bytes $rt" >>"$W/runs"
}

median() {	# CONFIG COLUMN
	awk -v c="$1" -v k="$2" '$1 == c { print $k }' "$W/runs" | sort -n |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "== call stacks without frame pointers: python3.11 attached for ${DUR}s, -F 999, 8 KiB of stack a sample  [load: $(cut -d' ' -f1-3 /proc/loadavg)]"
: >"$W/runs"
for rep in $(seq "$REPS"); do
	for c in rsprof-g perf rsprof; do
		run "$c"
	done
done
printf '%-34s %12s %8s %12s %8s\n' "" "record CPU" "file" "report CPU" "in all"
for c in rsprof-g perf rsprof; do
	u=$(median $c 2)
	b=$(median $c 3)
	r=$(median $c 4)
	case $c in
	rsprof-g) name="rsprof record -g" ;;
	perf)	name="perf record --call-graph dwarf" ;;
	rsprof)	name="rsprof record (no stacks)" ;;
	esac
	printf '%-34s %11ss %7sM %11ss %7ss\n' "$name" "$u" \
		"$(awk -v b="$b" 'BEGIN { printf "%.1f", b / 1048576 }')" "$r" \
		"$(awk -v a="$u" -v r="$r" 'BEGIN { printf "%.2f", a + r }')"
done
echo "(the profiler's own CPU, user + system; report: 'rsprof report -g' / 'perf report --stdio -g',"
echo " where perf unwinds; medians of $REPS; load at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
