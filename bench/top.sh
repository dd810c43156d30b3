#!/bin/sh
# Live view benchmark (not a test): rsprof's own CPU use while `rsprof top`
# shows a recording at the default refresh (100 ms), measured from
# /proc/PID/task/TID/stat (utime + stime) over 10 s, for the screen thread
# and the sampler thread apart. Goal (issue 5): under 5 % of one core.
#   bench/top.sh [OUT]     OUT: the build directory (default ./out)
# BENCH_TOP_BIG=1 also follows a one-hour profile (3,600 checkpoints of
# 2,000 rows, written first: about 3 minutes) while checkpoints are added.
set -u
OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
TARGETS=$OUT/targets
SECS=${BENCH_TOP_SECS:-10}

if ! command -v tmux >/dev/null; then
	echo "== top: tmux is missing (scripts/packages.txt), skipped"
	exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-top.XXXXXX") || exit 1
sock=rsprof-bench-top-$$
trap 'tmux -L $sock kill-server 2>/dev/null; rm -rf "$dir"' EXIT
hz=$(getconf CLK_TCK)

# ticks PID TID: utime + stime of one thread
ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/task/$2/stat" 2>/dev/null || echo 0
}

# The rsprof started in tmux session $1: the child of the pane's shell (the
# commands end with "; sleep" so the shell stays rsprof's parent).
top_pid() {
	pgrep -P "$(tmux -L $sock list-panes -t "$1" -F '#{pane_pid}')" -x rsprof
}

# measure SESSION LABEL: CPU % of one core of each rsprof thread over SECS
measure() {
	pid=$(top_pid "$1")
	[ -n "$pid" ] || { echo "$2: rsprof did not start"; return 1; }
	tids=$(ls "/proc/$pid/task")
	for t in $tids; do
		eval "a_$t=$(ticks "$pid" "$t")"
	done
	sleep "$SECS"
	total=0
	for t in $tids; do
		eval "a=\$a_$t"
		b=$(ticks "$pid" "$t")
		d=$((b - a))
		total=$((total + d))
		if [ "$t" = "$pid" ]; then name="screen thread"; else name="sampler thread"; fi
		printf '  %-40s %-15s %6s %% of a core\n' "$2" "$name" \
			"$(echo "scale=2; 100 * $d / $hz / $SECS" | bc)"
	done
	printf '  %-40s %-15s %6s %% of a core (goal < 5 %%)\n' "$2" "whole rsprof" \
		"$(echo "scale=2; 100 * $total / $hz / $SECS" | bc)"
}

echo "== top: rsprof's own CPU while showing the live view (${SECS} s, 120x40)"
for freq in 99 999; do
	tmux -L $sock new-session -d -s "f$freq" -x 120 -y 40 \
		"cd $dir && LANG=C.UTF-8 $RSPROF top -F $freq -o f$freq.db -- $TARGETS/cpu_split $((SECS + 6)); sleep 60"
	sleep 3
	measure "f$freq" "top -F $freq -- cpu_split"
	tmux -L $sock send-keys -t "f$freq" q
done

"$RSPROF" record -q -F 999 -o "$dir/rec.db" -- "$TARGETS/cpu_split" $((SECS + 6)) &
rec=$!
sleep 2
tmux -L $sock new-session -d -s follow -x 120 -y 40 \
	"cd $dir && LANG=C.UTF-8 $RSPROF top $dir/rec.db; sleep 60"
sleep 1
measure follow "top FILE (record -F 999 writing it)"
tmux -L $sock send-keys -t follow q
wait $rec

if [ "${BENCH_TOP_BIG:-0}" = 1 ]; then
	fixture=$OUT/tests/helper/fixture
	[ -x "$fixture" ] || make -s "$fixture" OUT="$OUT" || exit 1
	"$fixture" "$dir/big.db" big >/dev/null 2>&1 || exit 1
	sqlite3 "$dir/big.db" "DELETE FROM meta WHERE key = 'end_time'" || exit 1
	# one more checkpoint a second, as a recorder would add
	(
		i=3601
		while [ $i -le $((3601 + SECS + 5)) ]; do
			sqlite3 "$dir/big.db" "INSERT INTO checkpoints (id, timestamp_ms, cpu_total)
				VALUES ($i, $i * 1000, 1000);
				INSERT INTO cpu_samples (checkpoint_id, addr, count)
				SELECT $i, addr, 1 FROM symbols LIMIT 1000;"
			i=$((i + 1))
			sleep 1
		done
	) &
	adder=$!
	tmux -L $sock new-session -d -s big -x 120 -y 40 \
		"cd $dir && LANG=C.UTF-8 $RSPROF top $dir/big.db; sleep 60"
	sleep 3
	measure big "top FILE (one-hour profile, growing)"
	tmux -L $sock send-keys -t big q
	kill $adder 2>/dev/null
	wait $adder 2>/dev/null
fi
exit 0
