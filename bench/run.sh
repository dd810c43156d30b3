#!/bin/sh
# `make bench`: the CPU benchmark, the heap benchmark, then every other
# bench/*.sh (storage, timeline, ...), each given the build directory.
#   bench/run.sh [OUT]     OUT: the build directory (default ./out)
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$(pwd)/out}
status=0
first=1
for b in "$here/cpu.sh" "$here/heap.sh" "$here"/*.sh; do
	case ${b##*/} in
	run.sh) continue ;;
	# real programs, minutes each and a source download: run by hand,
	# bench/redis.sh OUT_DIR, bench/python-heap.sh OUT_DIR
	redis.sh|python-heap.sh) continue ;;
	esac
	[ -x "$b" ] || continue
	case " ${done:-} " in *" $b "*) continue ;; esac
	done="${done:-} $b"
	[ $first = 1 ] || echo
	first=0
	"$b" "$OUT" || { echo "bench: ${b##*/} failed" >&2; status=1; }
done
exit $status
