#!/bin/sh
# Storage benchmark (not a test): write a one-hour profile (3,600 checkpoints
# of 1,000 CPU addresses and 1,000 heap sites, seed 000 §7.7.4's largest row)
# through db__create/db__write_checkpoint, then time the readers on it, `top`
# following it, and a 24-hour profile written with `record --retain 1h`.
#   bench/storage.sh [OUT]     OUT: the build directory (default ./out)
# Goals (issue 15): every reader command under 100 ms and flat as the
# recording grows, a checkpoint write under 20 ms at minute 60 and flat (no
# write pays for a whole block's compaction: the line "checkpoint write over
# all 3600 checkpoints" gives the 99th percentile and the max of every
# write, wall and the writer's CPU; only minutes 1, 10 and 60 are paced at
# one a second, the others run back to back and their wall time includes
# the wait for the previous checkpoint's WAL copy, so read the CPU), the
# hour in 100 MB (see rsprof-files(5), SIZES: checkpoints older than 5
# minutes compacted, the default; --retain 10m is shown too). The file's
# bytes per table and index (SQLite's dbstat) follow its size.
# BENCH_STORAGE_DAY=0 leaves out the 24-hour profile (about 2 minutes of CPU).
set -u
OUT=$(cd "${1:-out}" && pwd) || exit 1
RSPROF=$OUT/rsprof
FIXTURE=$OUT/tests/helper/fixture
SECS=${BENCH_TOP_SECS:-10}
if [ ! -x "$FIXTURE" ]; then
	make -s "$FIXTURE" OUT="$OUT" || exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-storage.XXXXXX") || exit 1
sock=rsprof-bench-storage-$$
trap 'tmux -L $sock kill-server 2>/dev/null; rm -rf "$dir"' EXIT
f=$dir/rsprof.big.260101000000.db

echo "== storage: writing a one-hour profile (3,600 checkpoints x 2,000 rows)  [load: $(cut -d' ' -f1-3 /proc/loadavg)]"

# write KIND FILE [ENV...]: the fixture's own write-time line, then ours
write() {
	kind=$1
	file=$2
	shift 2
	start=$(date +%s%N)
	env "$@" "$FIXTURE" "$file" "$kind" 2>"$dir/write.err" ||
		{ cat "$dir/write.err"; exit 1; }
	end=$(date +%s%N)
	grep -E "^(checkpoint write|WAL copied)" "$dir/write.err"
	echo "written in $(( (end - start) / 1000000 )) ms, $(( $(stat -c %s "$file") / 1048576 )) MB"
}

# best of three, in ms
best() {
	b=
	for i in 1 2 3; do
		s=$(date +%s%N)
		"$@" >/dev/null || return 1
		e=$(date +%s%N)
		t=$(( (e - s) / 1000000 ))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}

# sizes FILE: the tables and indexes of 1 MB or more (dbstat), largest first
sizes() {
	sqlite3 "$1" "SELECT 'dbstat (MB):' || GROUP_CONCAT(' ' || name || ' ' || mb, ',') FROM
		(SELECT name, ROUND(SUM(pgsize) / 1048576.0, 1) AS mb FROM dbstat GROUP BY name
		 HAVING mb >= 1 ORDER BY mb DESC)" 2>/dev/null &&
	sqlite3 "$1" "SELECT 'free pages: ' || ROUND(freelist_count / 1048576.0 * page_size, 1)
		|| ' MB' FROM pragma_freelist_count, pragma_page_size" 2>/dev/null
}

# heap_source FILE: where report --heap read the heap from (the fixture's rows
# carry temp_count, as the in-process tracker writes them)
heap_source() {
	if "$RSPROF" report -v -v --heap "$1" 2>&1 >/dev/null | grep -q "heap from the totals"; then
		echo "report --heap read the totals (heap rows with temp_count: $(sqlite3 "$1" \
			"SELECT value FROM meta WHERE key = 'heap_temporary'") temporaries)"
	else
		echo "report --heap SCANNED the event tables"
	fi
}

# readers FILE ARGS...: one line per reader command
readers() {
	file=$1
	shift
	for args in "$@"; do
		case $args in
		diff*) printf '%-34s %6s ms\n' "rsprof $args" "$(best "$RSPROF" $args "$file" "$file")" ;;
		*) printf '%-34s %6s ms\n' "rsprof $args" "$(best "$RSPROF" $args "$file")" ;;
		esac
	done
}

# minutes 1, 10 and 60 at one checkpoint a second, as a recorder writes them
# (the WAL thread folds the WAL back between them); the rest back to back
write big "$f" FIXTURE_PACE_MS=1000
sizes "$f"
readers "$f" "report --cpu" "report --heap" "report" "report --since 10m" \
	"report -s function" "report --heap --at 30m" "report --heap --sort-by temporary" \
	"report --json" "info" "timeline" "diff" "top --stdio"
heap_source "$f"

# top following the file: the screen thread's CPU time (schedstat, ns) while a
# checkpoint of 1,000 rows is added every second (top reloads once for each)
if command -v tmux >/dev/null; then
	# the file is finished: take end_time out so that top follows it
	sqlite3 "$f" "DELETE FROM meta WHERE key = 'end_time'" || exit 1
	tmux -L $sock new-session -d -s big -x 120 -y 40 \
		"cd $dir && LANG=C.UTF-8 $RSPROF top $f; sleep 60"
	sleep 3
	pid=$(pgrep -P "$(tmux -L $sock list-panes -t big -F '#{pane_pid}')" -x rsprof)
	if [ -n "$pid" ]; then
		a=$(cut -d' ' -f1 "/proc/$pid/task/$pid/schedstat")
		i=3601
		while [ $i -le $((3600 + SECS)) ]; do
			sqlite3 "$f" "INSERT INTO checkpoints (id, timestamp_ms, cpu_total)
				VALUES ($i, $i * 1000, 1000);
				INSERT INTO cpu_samples (checkpoint_id, addr, count)
				SELECT $i, addr, 1 FROM symbols LIMIT 1000;"
			i=$((i + 1))
			sleep 1
		done
		b=$(cut -d' ' -f1 "/proc/$pid/task/$pid/schedstat")
		# top reloads when a checkpoint comes (at most once a second here)
		printf '%-34s %6s ms CPU a second, a refresh a second at most (%s.%s %% of a core)\n' \
			"rsprof top FILE (following)" "$(( (b - a) / 1000000 / SECS ))" \
			"$(( (b - a) / 10000000 / SECS ))" "$(( (b - a) / 1000000 / SECS % 10 ))"
	else
		echo "rsprof top FILE (following): did not start"
	fi
	tmux -L $sock send-keys -t big q
else
	echo "rsprof top FILE (following): tmux is missing (scripts/packages.txt), skipped"
fi
rm -f "$f" "$f-wal" "$f-shm"

echo
echo "== storage: the one-hour profile with record --retain 10m  [load: $(cut -d' ' -f1-3 /proc/loadavg)]"
r=$dir/rsprof.retain.260101000000.db
write big-retain "$r"
readers "$r" "report" "report --since 10m" "report --heap --at 30m" "info"
heap_source "$r"
rm -f "$r"

if [ "${BENCH_STORAGE_DAY:-1}" != 0 ]; then
	echo
	echo "== storage: a 24-hour profile with record --retain 1h (86,400 checkpoints x 200 rows)  [load: $(cut -d' ' -f1-3 /proc/loadavg)]"
	d=$dir/rsprof.day.260101000000.db
	write day "$d"
	"$RSPROF" info "$d" | grep -E "^(checkpoints|folded):"
	readers "$d" "report --cpu" "report --heap" "report" "report --since 10m" \
		"report --window 2h..3h" "report -s function" "report --heap --at 12h" "info" \
		"timeline" "top --stdio"
	heap_source "$d"
fi
echo "[load at the end: $(cut -d' ' -f1-3 /proc/loadavg)]"
