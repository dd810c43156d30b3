#!/bin/sh
# rsprof's own memory and CPU time while it records every process of the
# host (record -a) with N more small processes running: tests/targets/
# cpu_duty, each spinning 300 us every 200 ms in its own copy of the
# program (its own address space, libc at its own address). The numbers
# are rsprof's VmHWM (its peak RSS, read from /proc while it runs) and its
# user+system CPU time; the host's other processes are recorded too, so
# say what else ran (the load is printed).
#
#   bench/record-all.sh [OUT [N [SECONDS [HZ]]]]   (default ./out, 300, 10, 499)
set -u

OUT=${1:-$(pwd)/out}
N=${2:-300}
SECS=${3:-10}
HZ=${4:-499}
RSPROF=$OUT/rsprof
DUTY=$OUT/targets/cpu_duty
W=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench.XXXXXX")
pids=
trap 'kill $pids 2>/dev/null; rm -rf "$W"' EXIT

[ -x "$RSPROF" ] && [ -x "$DUTY" ] ||
	{ echo "bench/record-all.sh: $RSPROF or $DUTY missing: run make all targets" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "bench/record-all.sh: -a needs root: skipped" >&2; exit 0; }

i=0
while [ $i -lt "$N" ]; do
	"$DUTY" $((SECS + 5)) 300 200 &
	pids="$pids $!"
	i=$((i + 1))
done
sleep 1
"$RSPROF" record -q -a -F "$HZ" -d "$SECS" -o "$W/all.db" &
p=$!
kb=0
while [ -d /proc/$p ]; do
	v=$(awk '/^VmHWM:/ { print $2 }' /proc/$p/status 2>/dev/null)
	[ -n "$v" ] && kb=$v
	ticks=$(awk '{ print $14 + $15 }' /proc/$p/stat 2>/dev/null) && cpu=$ticks
	sleep 0.2
done
wait $p || { echo "bench/record-all.sh: record -a failed" >&2; exit 1; }
procs=$(sqlite3 "$W/all.db" "SELECT COUNT(DISTINCT pid) FROM cpu_samples")
duty=$(sqlite3 "$W/all.db" "SELECT COUNT(DISTINCT c.pid) FROM cpu_samples c JOIN processes p
	ON p.pid = c.pid WHERE p.comm = 'cpu_duty'")
printf 'record -a -F %s, %s s, %d cpu_duty copies: peak RSS %d MiB, CPU %.1f s; %s processes with samples (%s cpu_duty)\n' \
	"$HZ" "$SECS" "$N" $((kb / 1024)) "$(echo "${cpu:-0} / $(getconf CLK_TCK)" | bc -l)" "$procs" "$duty"
printf 'load: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
