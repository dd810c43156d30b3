#!/bin/sh
# Storage benchmark (not a test): write a one-hour profile (3,600 checkpoints
# of 1,000 CPU addresses and 1,000 heap sites, seed 000 §7.7.4's largest row)
# through db__create/db__write_checkpoint, then time report and info on it.
#   bench/storage.sh [OUT]     OUT: the build directory (default ./out)
# Goal (issue 2/4): the report of a one-hour file in well under a second.
set -u
OUT=${1:-$(pwd)/out}
RSPROF=$OUT/rsprof
FIXTURE=$OUT/tests/unit/bin/test-db
if [ ! -x "$FIXTURE" ]; then
	make -s "$FIXTURE" OUT="$OUT" || exit 1
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/rsprof-bench-storage.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
f=$dir/rsprof.big.260101000000.db

echo "== storage: writing a one-hour profile (3,600 checkpoints x 2,000 rows)"
start=$(date +%s%N)
"$FIXTURE" --fixture "$f" big || exit 1
end=$(date +%s%N)
echo "written in $(( (end - start) / 1000000 )) ms, $(( $(stat -c %s "$f") / 1048576 )) MB"

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

for args in "report --cpu" "report --heap" "report" "report --since 10m" \
	    "report -s function" "report --heap --at 30m" "report --json" "info"; do
	printf '%-28s %6s ms\n' "rsprof $args" "$(best "$RSPROF" $args "$f")"
done
