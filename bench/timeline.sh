#!/bin/sh
# Timeline and diff benchmark (not a test): on a one-hour profile (3,600
# checkpoints of 1,000 CPU addresses and 1,000 heap sites, the largest row
# of seed 000 §7.7.4) time the terminal chart, CSV, JSON, SVG, site series
# and a diff of the file with itself.
#   bench/timeline.sh [OUT]     OUT: the build directory (default ./out)
# Goal (issue 4): the chart of a one-hour profile in under a second.
# The fixture is written once and kept in OUT/bench/ (delete it to write a new one).
set -u
OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
FIXTURE=$OUT/tests/helper/fixture
if [ ! -x "$FIXTURE" ]; then
	make -s "$FIXTURE" OUT="$OUT" || exit 1
fi
mkdir -p "$OUT/bench" || exit 1
f=$OUT/bench/rsprof.hour.260101000000.db
if [ ! -s "$f" ]; then
	echo "== timeline: writing a one-hour profile (once; kept in $OUT/bench)"
	rm -f "$f" "$f-wal" "$f-shm"
	"$FIXTURE" "$f" big || exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-timeline.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT

# best of three, wall ms; user+sys CPU of that run when /usr/bin/time exists
best() {
	b=
	c=
	for i in 1 2 3; do
		s=$(date +%s%N)
		if [ -x /usr/bin/time ]; then
			cpu=$(/usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -1 |
			      awk '{printf "%d", ($1 + $2) * 1000}') || return 1
		else
			"$@" >/dev/null || return 1
			cpu=?
		fi
		e=$(date +%s%N)
		t=$(( (e - s) / 1000000 ))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then
			b=$t
			c=$cpu
		fi
	done
	echo "$b ms (cpu $c ms)"
}

echo "== timeline: $(( $(stat -c %s "$f") / 1048576 )) MB, load $(cut -d' ' -f1 /proc/loadavg)"
for args in "timeline" "timeline --csv" "timeline -n 5" "timeline -n 5 --rank peak" \
	    "timeline -n 5 --json" "timeline --cpu -n 5" "timeline -n 5 --svg=t.svg" \
	    "diff --by line" "diff --by function"; do
	case $args in
	diff*) set -- $args "$f" "$f" ;;
	*) set -- $args "$f" ;;
	esac
	printf '%-34s %s\n' "rsprof $args" "$(cd "$dir" && best "$RSPROF" "$@")"
done
